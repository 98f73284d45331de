#pragma once
// The node's JSON-RPC service: the methods behind the HTTP server, over HTTP posts and
// WebSocket messages (each WebSocket connection with its subscriptions, rpc/subscriptions.hpp).
// /metrics renders the node's metrics (Node::metrics, metrics/node_metrics.hpp), to which the
// service adds what it sees: requests, their bytes and durations, and the connections open.

#include "rpc/http_server.hpp"
#include "rpc/methods.hpp"
#include "rpc/subscriptions.hpp"

#include <string>

namespace barrel::rpc {

class Service final : public HttpHandler {
public:
    /// Without `node.metrics`, nothing is counted and GET /metrics answers an empty body.
    Service(Node& node, const Limits& limits, const HttpOptions& http,
            const SubscriptionLimits& subscriptions = {});

    Expected<void, std::string> start() { return m_server.start(); }
    uint16_t port() const noexcept { return m_server.port(); }
    void stop() { m_server.stop(); }

    HttpResponse post(std::string_view body) override;
    /// The body's calls, run a step at a time (Methods::Run) on the server's workers.
    std::unique_ptr<HttpWork> begin_post(std::string body) override;
    HttpResponse metrics() override;
    /// GET /: the status page (rpc/status_page.html), which reads /metrics and JSON-RPC.
    std::optional<HttpResponse> status_page() override;
    /// A WebSocket connection's calls and subscriptions.
    std::unique_ptr<WsHandler> open_websocket(WsConnection& connection) override;

    /// The transport (for tests: its connections, its WebSocket counters).
    const HttpServer& server() const noexcept { return m_server; }

private:
    Node& m_node;
    metrics::NodeMetrics* m_metrics;
    Methods m_methods;
    SubscriptionLimits m_subscription_limits;
    HttpServer m_server;
};

}  // namespace barrel::rpc
