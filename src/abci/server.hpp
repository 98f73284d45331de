#pragma once
// The ABCI socket server: what `cometbft node` connects to as its application (proxy_app).
// CometBFT opens four connections (consensus, mempool, query, snapshot) and sends on each a
// stream of Requests, every one preceded by its length as an unsigned varint (frame.hpp); the
// answers go back in the same order, written out when a Flush arrives (CometBFT waits for the
// Flush's answer; buffering until then saves a write per CheckTx).
//
// A connection that sends a malformed frame (a length past the bound, a message that does not
// parse, a request with no value) is closed with a log line; the server and the other
// connections go on.

#include <barrel/core/expected.hpp>

#include "abci/application.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace barrel::abci {

struct ServerConfig {
    /// tcp://HOST:PORT (port 0: one the system picks; address() tells which) or unix://PATH.
    std::string address;
    /// Largest frame accepted, checked before anything is allocated for it. CometBFT's own
    /// bound (abci/types: maxMsgSize) is 100 MiB; a proposal of max_tx_bytes fits well within.
    size_t max_frame_bytes{100u << 20};
};

class Server {
public:
    using Log = std::function<void(std::string_view line)>;

    /// Listens on `config.address` and serves each connection on a thread of its own until
    /// stop(). An error if the address is malformed or cannot be bound.
    static Expected<std::unique_ptr<Server>, std::string> start(const ServerConfig& config,
                                                                Application& app, Log log);
    /// Stops (if stop() was not called).
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Closes the listener and every connection and joins their threads.
    void stop();

    /// Where it listens, with the port resolved: tcp://127.0.0.1:40123, unix:///path.
    std::string address() const;

private:
    struct Impl;
    explicit Server(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace barrel::abci
