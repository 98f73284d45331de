#pragma once
// eth_subscribe / eth_unsubscribe reach the connection a call came in on: only a WebSocket
// connection can carry notifications. Methods hands those two calls to the request's
// Subscriber; a request without one (HTTP) answers them -32601 "notifications not supported"
// (go-ethereum's code and words).

#include "rpc/jsonrpc.hpp"

#include <string>
#include <string_view>

namespace barrel::rpc {

class Subscriber {
public:
    virtual ~Subscriber() = default;
    /// eth_subscribe with its whole params array (the kind first, then the kind's arguments):
    /// the new subscription's id ("0x…", go-ethereum's form), or the error to answer. The
    /// response carrying the id is written before the subscription's first notification.
    virtual Expected<std::string, Error> subscribe(const json& params) = 0;
    /// eth_unsubscribe(id): whether a subscription of this connection had that id.
    virtual bool unsubscribe(std::string_view id) = 0;
};

}  // namespace barrel::rpc
