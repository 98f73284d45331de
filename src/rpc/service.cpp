#include "rpc/service.hpp"

#include <chrono>
#include <optional>

namespace barrel::rpc {

namespace {

/// A POST's calls run a step at a time on the server's workers (Methods::Run::step); the
/// first step parses the body.
class CallsWork final : public HttpWork {
public:
    CallsWork(Methods& methods, metrics::NodeMetrics* metrics, std::string body)
        : m_methods{methods}, m_metrics{metrics}, m_body{std::move(body)} {}

    bool step() override {
        const auto t0 = std::chrono::steady_clock::now();
        bool more = true;
        if (!m_run) {
            m_run.emplace(m_methods.begin(m_body));
        } else {
            more = m_run->step();
        }
        m_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return more;
    }

    HttpResponse response() override {
        if (m_metrics) m_metrics->on_http_request(m_body.size(), m_seconds);
        return HttpResponse{200, "application/json", std::move(*m_run).finish()};
    }

private:
    Methods& m_methods;
    metrics::NodeMetrics* m_metrics;
    std::string m_body;
    std::optional<Methods::Run> m_run;
    double m_seconds{0};  ///< the time its steps took, not the time it waited
};

}  // namespace

Service::Service(Node& node, const Limits& limits, const HttpOptions& http)
    : m_metrics{node.metrics}, m_methods{node, limits}, m_server{http, *this} {}

HttpResponse Service::post(std::string_view body) {
    CallsWork work{m_methods, m_metrics, std::string{body}};
    while (work.step()) {
    }
    return work.response();
}

std::unique_ptr<HttpWork> Service::begin_post(std::string body) {
    return std::make_unique<CallsWork>(m_methods, m_metrics, std::move(body));
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
