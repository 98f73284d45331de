#pragma once
/// @file
/// The storage behind block::Transactions: a Slots array, which decode fills in its parallel loop.

#include <barrel/block/block.hpp>

#include "core/slots.hpp"

namespace barrel::block {

struct Transactions::Storage {
    Slots<tx::Transaction> slots;
};

}  // namespace barrel::block
