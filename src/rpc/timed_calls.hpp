#pragma once
// A request body's calls as work for the server's workers, HTTP posts and WebSocket messages
// alike: Methods::Run a step at a time (the first step parses the body), with the time its
// steps took (not the time it waited) counted in the node's metrics once it is answered.

#include "metrics/node_metrics.hpp"
#include "rpc/methods.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace barrel::rpc {

class TimedCalls {
public:
    /// `subscriber`: the connection eth_subscribe reaches (none over HTTP).
    TimedCalls(Methods& methods, metrics::NodeMetrics* metrics, std::string body,
               Subscriber* subscriber = nullptr)
        : m_methods{methods},
          m_metrics{metrics},
          m_body{std::move(body)},
          m_subscriber{subscriber} {}

    /// As SteppedWork::step.
    bool step() {
        const auto t0 = std::chrono::steady_clock::now();
        bool more = true;
        if (!m_run) {
            m_run.emplace(m_methods.begin(m_body, m_subscriber));
        } else {
            more = m_run->step();
        }
        m_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return more;
    }

    /// The response body ("" when every call was a notification), once step() is false.
    std::string finish() {
        if (m_metrics) m_metrics->on_http_request(m_body.size(), m_seconds);
        return std::move(*m_run).finish();
    }

private:
    Methods& m_methods;
    metrics::NodeMetrics* m_metrics;
    std::string m_body;
    Subscriber* m_subscriber;
    std::optional<Methods::Run> m_run;
    double m_seconds{0};
};

}  // namespace barrel::rpc
