#pragma once
// The ABCI socket server: what `cometbft node` connects to as its application (proxy_app).
// CometBFT opens four connections (consensus, mempool, query, snapshot) and sends on each a
// stream of Requests, every one preceded by its length as an unsigned varint (frame.hpp); the
// answers go back in the same order, written out when a Flush has been answered (CometBFT waits
// for the Flush's answer; buffering until then saves a write per CheckTx). Each connection has
// two threads: one reads and parses requests, one answers them.
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

/// Consecutive CheckTx requests handed to Application::check_txs at most (the Flushes among
/// them do not end a run: their answers follow the answers before them). A run is what the
/// reader has queued: a few hundred transfers per 64 KiB read, more when the application is
/// behind. A run's answers are written before the next run once they pass the server's 1 MiB
/// bound on unwritten answers.
inline constexpr size_t kMaxCheckRun = 1024;

struct ServerConfig {
    /// tcp://HOST:PORT (port 0: one the system picks; address() tells which) or unix://PATH.
    std::string address;
    /// Largest frame accepted, checked before anything is allocated for it (1 to 2^31 - 1,
    /// protobuf's own bound; CometBFT's, abci/types maxMsgSize, is the same). A proposal holds
    /// up to the block's max_bytes of transactions (21 MiB by default, at most 100 MB:
    /// types.MaxBlockSizeBytes); the default leaves room for the largest with its framing.
    size_t max_frame_bytes{128u << 20};
    /// Requests read and not yet answered, in bytes of their frames, past which a connection
    /// stops reading until the application catches up (one read of 64 KiB may pass it). Each
    /// connection has a reader thread that drains the socket while the application answers:
    /// CometBFT's socket client re-arms its flush timer every 20 ns (flushThrottleMS, a
    /// time.Duration of 20) for as long as its writer is not waiting, and a writer blocked on a
    /// full socket kept it spinning, which took up to a third of cometbft's CPU in a 4-validator
    /// network (docs/benchmarks.md, "CometBFT's flush timer"). Not more: before each Commit
    /// CometBFT flushes the mempool connection and waits for every CheckTx it has sent, so what is
    /// queued here delays the block. 1 MiB is about 7,000 CheckTx of a transfer, above the
    /// 3,500-6,800 a validator had queued at most in a 20,000-transfer flood, and as fast there as
    /// 16 MiB.
    size_t max_unanswered_bytes{1u << 20};
    /// Connections open at once (each has two threads). CometBFT opens four, and again after each
    /// restart, while the old ones may not be closed yet; one more is closed with a log line.
    size_t max_connections{16};
    /// Each application call and its duration (dispatch's timing point; the node's
    /// barrel_abci_call_duration_seconds). From the connections' threads, at once.
    CallObserver on_call{};
};

class Server {
public:
    /// Receives the server's log lines (no newline), "abci: connection 3 from 127.0.0.1:53012
    /// opened", "abci: connection 3 closed: frame of ... bytes exceeds the limit of ...", one
    /// call at a time, from the server's threads.
    using Log = std::function<void(std::string_view line)>;

    /// Listens on `config.address` and serves each connection on a thread of its own until
    /// stop(). An error if the address is malformed or cannot be bound.
    static Expected<std::unique_ptr<Server>, std::string> start(const ServerConfig& config,
                                                                Application& app, Log log);
    /// Stops (if stop() was not called).
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Closes the listener and every connection and joins their threads (a connection inside
    /// an application call is closed once the call returns). Removes a unix:// socket file.
    void stop();

    /// Where it listens, with the port resolved: tcp://127.0.0.1:40123, unix:///path.
    std::string address() const;

    /// Connections whose threads are not yet joined: the open ones, and closed ones until the
    /// next connection arrives (or stop()), which joins them.
    size_t threads() const;

private:
    struct Impl;
    explicit Server(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace barrel::abci
