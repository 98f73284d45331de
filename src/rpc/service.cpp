#include "rpc/service.hpp"

#include <chrono>

namespace barrel::rpc {

Service::Service(Node& node, const Limits& limits, const HttpOptions& http)
    : m_metrics{node.metrics}, m_methods{node, limits}, m_server{http, *this} {}

HttpResponse Service::post(std::string_view body) {
    const auto t0 = std::chrono::steady_clock::now();
    HttpResponse response{200, "application/json", m_methods.handle(body)};
    if (m_metrics)
        m_metrics->on_http_request(
            body.size(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return response;
}

HttpResponse Service::metrics() {
    std::string text;
    if (m_metrics) {
        m_metrics->set_connections(m_server.connections());
        text = m_metrics->render();
    }
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", std::move(text)};
}

}  // namespace barrel::rpc
