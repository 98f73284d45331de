#include "rpc/service.hpp"

#include "rpc/timed_calls.hpp"

namespace barrel {
/// src/rpc/status_page.html, embedded at build time (cmake/EmbedText.cmake).
extern const std::string_view kStatusPageHtml;
}  // namespace barrel

namespace barrel::rpc {

namespace {

/// A POST's calls run a step at a time on the server's workers.
class CallsWork final : public HttpWork {
public:
    CallsWork(Methods& methods, metrics::NodeMetrics* metrics, std::string body)
        : m_calls{methods, metrics, std::move(body)} {}
    bool step() override { return m_calls.step(); }
    HttpResponse response() override {
        return HttpResponse{200, "application/json", m_calls.finish()};
    }

private:
    TimedCalls m_calls;
};

}  // namespace

Service::Service(Node& node, const Limits& limits, const HttpOptions& http,
                 const SubscriptionLimits& subscriptions)
    : m_node{node},
      m_metrics{node.metrics},
      m_methods{node, limits},
      m_subscription_limits{subscriptions},
      m_server{http, *this} {}

HttpResponse Service::post(std::string_view body) {
    CallsWork work{m_methods, m_metrics, std::string{body}};
    while (work.step()) {
    }
    return work.response();
}

std::unique_ptr<HttpWork> Service::begin_post(std::string body) {
    return std::make_unique<CallsWork>(m_methods, m_metrics, std::move(body));
}

std::unique_ptr<WsHandler> Service::open_websocket(WsConnection& connection) {
    return std::make_unique<Subscriptions>(m_methods, m_node, connection, m_subscription_limits);
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

namespace barrel::rpc {

std::optional<HttpResponse> Service::status_page() {
    // The page's own script and style only, its data from this origin: no third-party script
    // can run in it, even one a future edit would link.
    return HttpResponse{
        200,
        "text/html; charset=utf-8",
        std::string{kStatusPageHtml},
        {{"Content-Security-Policy",
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
          "connect-src 'self'; img-src data:"},
         {"Cache-Control", "no-cache"}},
    };
}

}  // namespace barrel::rpc
