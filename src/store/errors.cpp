#include "errors.hpp"

namespace barrel::store {

std::string_view to_string(StoreErrorCode code) noexcept {
    switch (code) {
        case StoreErrorCode::not_a_datadir: return "not_a_datadir";
        case StoreErrorCode::already_initialized: return "already_initialized";
        case StoreErrorCode::locked: return "locked";
        case StoreErrorCode::io: return "io";
        case StoreErrorCode::corruption: return "corruption";
        case StoreErrorCode::invalid_argument: return "invalid_argument";
        case StoreErrorCode::unsupported: return "unsupported";
        case StoreErrorCode::out_of_memory: return "out_of_memory";
        case StoreErrorCode::internal: return "internal";
    }
    return "unknown";
}

StoreErrorCode code_of(const rocksdb::Status& status) noexcept {
    using C = rocksdb::Status::Code;
    if (status.IsMemoryLimit()) return StoreErrorCode::out_of_memory;  // an Aborted subcode
    switch (status.code()) {
        case C::kCorruption:
        case C::kNotFound: return StoreErrorCode::corruption;
        case C::kIOError: return StoreErrorCode::io;
        case C::kInvalidArgument: return StoreErrorCode::invalid_argument;
        case C::kNotSupported: return StoreErrorCode::unsupported;
        default: return StoreErrorCode::internal;
    }
}

}  // namespace barrel::store
