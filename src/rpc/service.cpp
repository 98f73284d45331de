#include "rpc/service.hpp"

namespace barrel::rpc {

Service::Service(Node& node, const Limits& limits, const HttpOptions& http,
                 std::function<std::string()> node_metrics)
    : m_methods{node, limits}, m_server{http, *this}, m_node_metrics{std::move(node_metrics)} {}

HttpResponse Service::post(std::string_view body) {
    m_requests.fetch_add(1, std::memory_order_relaxed);
    m_request_bytes.fetch_add(body.size(), std::memory_order_relaxed);
    return HttpResponse{200, "application/json", m_methods.handle(body)};
}

HttpResponse Service::metrics() {
    std::string text = m_node_metrics ? m_node_metrics() : std::string{};
    text +=
        "# HELP barrel_rpc_requests_total JSON-RPC request bodies received (a batch counts once).\n"
        "# TYPE barrel_rpc_requests_total counter\n"
        "barrel_rpc_requests_total " +
        std::to_string(m_requests.load(std::memory_order_relaxed)) + "\n";
    text +=
        "# HELP barrel_rpc_request_bytes_total Bytes of JSON-RPC request bodies received.\n"
        "# TYPE barrel_rpc_request_bytes_total counter\n"
        "barrel_rpc_request_bytes_total " +
        std::to_string(m_request_bytes.load(std::memory_order_relaxed)) + "\n";
    text +=
        "# HELP barrel_rpc_connections Connections open.\n"
        "# TYPE barrel_rpc_connections gauge\n"
        "barrel_rpc_connections " +
        std::to_string(m_server.connections()) + "\n";
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", std::move(text)};
}

}  // namespace barrel::rpc
