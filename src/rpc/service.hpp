#pragma once
// The node's JSON-RPC service: the methods behind the HTTP server, with the request counters
// that /metrics reports beside what the node adds (blocks, pool, sender cache).

#include "rpc/http_server.hpp"
#include "rpc/methods.hpp"

#include <atomic>
#include <functional>
#include <string>

namespace barrel::rpc {

class Service final : public HttpHandler {
public:
    /// `node_metrics` renders the node's own metrics (Prometheus text format), called for each
    /// GET /metrics.
    Service(Node& node, const Limits& limits, const HttpOptions& http,
            std::function<std::string()> node_metrics);

    Expected<void, std::string> start() { return m_server.start(); }
    uint16_t port() const noexcept { return m_server.port(); }
    void stop() { m_server.stop(); }

    HttpResponse post(std::string_view body) override;
    HttpResponse metrics() override;

private:
    Methods m_methods;
    HttpServer m_server;
    std::function<std::string()> m_node_metrics;
    std::atomic<uint64_t> m_requests{0};
    std::atomic<uint64_t> m_request_bytes{0};
};

}  // namespace barrel::rpc
