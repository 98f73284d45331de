#include "rpc/context.hpp"

namespace barrel::rpc {

Expected<std::optional<uint64_t>, Error> block_number(const Context& c, const BlockRef& ref) {
    switch (ref.kind) {
        case BlockRef::Kind::latest:
        case BlockRef::Kind::pending: return std::optional<uint64_t>{c.view.head().number};
        case BlockRef::Kind::earliest: return std::optional<uint64_t>{c.view.earliest()};
        case BlockRef::Kind::number:
            if (ref.number > c.view.head().number) return std::optional<uint64_t>{};
            return std::optional<uint64_t>{ref.number};
        case BlockRef::Kind::hash: return stored(c.view.block_number(ref.hash));
    }
    return std::optional<uint64_t>{};
}

Expected<void, Error> require_head_state(const Context& c, const BlockRef& ref) {
    auto n = block_number(c, ref);
    if (!n) return unexpected(n.error());
    if (!*n) return server_error("header not found");
    if (**n != c.view.head().number)
        return server_error("historical state is not available: block " + std::to_string(**n) +
                            " (the node keeps the state of its head, block " +
                            std::to_string(c.view.head().number) + ")");
    return {};
}

Expected<void, Error> require_block(const Context& c, const BlockRef& ref) {
    auto n = block_number(c, ref);
    if (!n) return unexpected(n.error());
    if (!*n) return server_error("header not found");
    return {};
}

Expected<state::Account, Error> account_of(const Context& c, const Address& a) {
    auto account = c.view.account(a);
    if (!account) return state_failure(account.error());
    return account->value_or(state::Account{});
}

}  // namespace barrel::rpc
