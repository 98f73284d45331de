#pragma once
/// @file
/// The umbrella header of libbarrel: everything a node links to turn block bytes into committed,
/// queryable state (see docs/library.md). Every module of barrel::barrel; not the command line
/// (barrel/cli/, which is barrel-node's and is not installed).

#include <barrel/block/block.hpp>
#include <barrel/block/header.hpp>
#include <barrel/block/merkle.hpp>
#include <barrel/block/sender_cache.hpp>
#include <barrel/chain/genesis.hpp>
#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>
#include <barrel/core/hex.hpp>
#include <barrel/core/keccak.hpp>
#include <barrel/core/uint256.hpp>
#include <barrel/exec/dag_transfer.hpp>
#include <barrel/exec/execute.hpp>
#include <barrel/io/files.hpp>
#include <barrel/json/conventions.hpp>
#include <barrel/json/tx_json.hpp>
#include <barrel/pipeline/pipeline.hpp>
#include <barrel/pool/pool.hpp>
#include <barrel/rlp/decode.hpp>
#include <barrel/rlp/encode.hpp>
#include <barrel/rlp/stream.hpp>
#include <barrel/seal/sealer.hpp>
#include <barrel/state/state.hpp>
#include <barrel/store/documents.hpp>
#include <barrel/store/store.hpp>
#include <barrel/tx/transaction.hpp>
