#pragma once
/// @file
/// The command line's names for the file I/O it shares with barrel-bench and the library
/// (barrel/io/files.hpp, where each is documented).

#include <barrel/io/files.hpp>

namespace barrel::cli {

using io::AtomicFile;
using io::ChainReader;
using io::ChainReadError;
using io::FileError;
using io::kMaxGenesisBytes;
using io::kMaxTextInputBytes;
using io::kUndelimitedPeekBytes;
using io::over_limit;
using io::read_file;
using io::read_stream;
using io::WriteError;

}  // namespace barrel::cli
