#pragma once
// The node's JSON-RPC service: the methods behind the HTTP server. /metrics renders the node's
// metrics (Node::metrics, metrics/node_metrics.hpp), to which the service adds what it sees:
// requests, their bytes and durations, and the connections open.

#include "rpc/http_server.hpp"
#include "rpc/methods.hpp"

#include <string>

namespace barrel::rpc {

class Service final : public HttpHandler {
public:
    /// Without `node.metrics`, nothing is counted and GET /metrics answers an empty body.
    Service(Node& node, const Limits& limits, const HttpOptions& http);

    Expected<void, std::string> start() { return m_server.start(); }
    uint16_t port() const noexcept { return m_server.port(); }
    void stop() { m_server.stop(); }

    HttpResponse post(std::string_view body) override;
    /// The body's calls, run a step at a time (Methods::Run) on the server's workers.
    std::unique_ptr<HttpWork> begin_post(std::string body) override;
    HttpResponse metrics() override;

private:
    metrics::NodeMetrics* m_metrics;
    Methods m_methods;
    HttpServer m_server;
};

}  // namespace barrel::rpc
