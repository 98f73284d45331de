#pragma once
/// @file
/// World state: accounts (address → nonce, balance) and the DagTransfer table (user → balance).
/// Execution only reads a StateReader; what a block changes comes back as a WriteSet that the
/// caller applies (memory) or commits (RocksDB), so a rejected block leaves state untouched.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/uint256.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace barrel::state {

struct Account {
    uint64_t nonce{0};
    u256 balance;
    friend bool operator==(const Account&, const Account&) = default;
};

/// Why a state read failed: the storage behind a StateReader could not be read, or what it
/// holds does not decode. Either way there is no state to execute against.
enum class [[nodiscard]] ReadErrorCode : uint8_t{
    io,          ///< the storage failed to read
    corruption,  ///< a stored value does not decode
};

struct ReadError {
    ReadErrorCode code{ReadErrorCode::io};
    std::string message;  ///< one line for the user
};

std::string_view to_string(ReadErrorCode code) noexcept;

/// A state value (nullopt: absent) or why it could not be read.
template <class T>
using ReadResult = Expected<std::optional<T>, ReadError>;

/// Read access to the state a block executes against. Implementations must allow concurrent
/// calls from many threads (execution reads a block's keys from parallel tasks), and report a
/// failed read as a ReadError, never by throwing: the reads run inside the execute stage.
class StateReader {
public:
    virtual ~StateReader() = default;
    virtual ReadResult<Account> account(const Address& address) const = 0;
    virtual ReadResult<u256> user(std::string_view name) const = 0;
};

/// Everything a block changed, sorted by key: the input of the state commitment and of the commit.
/// Deleting an entry is not possible today (nothing is deleted), so each key has a new value.
struct WriteSet {
    std::vector<std::pair<Address, Account>> accounts;  ///< sorted by address
    std::vector<std::pair<std::string, u256>> users;    ///< sorted by name (bytewise)
    /// Each key's value before the block, index for index with `accounts` and `users` (nullopt:
    /// the entry did not exist): what the state commitment subtracts (next_lattice). Execution
    /// fills them; a write set that lists a whole state (a genesis) leaves them empty.
    std::vector<std::optional<Account>> accounts_before;
    std::vector<std::optional<u256>> users_before;

    bool empty() const noexcept { return accounts.empty() && users.empty(); }
    size_t size() const noexcept { return accounts.size() + users.size(); }
    /// Whether the `before` values are there, one per key.
    bool has_before() const noexcept {
        return accounts_before.size() == accounts.size() && users_before.size() == users.size();
    }
    friend bool operator==(const WriteSet&, const WriteSet&) = default;
};

/// Hash functor for user names (chosen by callers, so keyed like FixedBytesHasher).
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept;
};

/// The in-memory state: for tests, the generator's sealer and as the store's cache model.
class MemoryState final : public StateReader {
public:
    /// Never fails.
    ReadResult<Account> account(const Address& address) const override {
        return find_account(address);
    }
    ReadResult<u256> user(std::string_view name) const override { return find_user(name); }
    /// The same reads without the error that memory never has.
    std::optional<Account> find_account(const Address& address) const;
    std::optional<u256> find_user(std::string_view name) const;

    void set_account(const Address& address, const Account& account);
    void set_user(std::string_view name, const u256& balance);
    void apply(const WriteSet& writes);

    const std::unordered_map<Address, Account, FixedBytesHasher>& accounts() const noexcept {
        return m_accounts;
    }
    const std::unordered_map<std::string, u256, StringHash, std::equal_to<>>& users()
        const noexcept {
        return m_users;
    }

private:
    std::unordered_map<Address, Account, FixedBytesHasher> m_accounts;
    std::unordered_map<std::string, u256, StringHash, std::equal_to<>> m_users;
};

}  // namespace barrel::state
