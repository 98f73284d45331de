#pragma once
/// @file
/// The file I/O of barrel-node and barrel-bench, one way each: a whole file read under a size
/// limit, a file written whole or not at all, and a chain file read block by block. Failures the
/// user can fix (a missing file, a directory, a path that cannot be written, an input over its
/// limit) come back as values naming the path; failures in the middle of writing (disk full, a
/// file size limit, an I/O error) throw WriteError, which the command lines report as bad input
/// too (exit 2): the environment is at fault, not barrel. Every limit is in docs/formats.md,
/// "Limits".

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace barrel::cli {

/// The largest genesis file `init` and `barrel-bench --genesis` read (a genesis of gen's largest
/// account and user sets is well under it).
inline constexpr size_t kMaxGenesisBytes = size_t{256} << 20;
/// The largest text a `HEX|-` or `JSON|-` argument reads from standard input.
inline constexpr size_t kMaxTextInputBytes = size_t{256} << 20;
/// What a reader keeps of input that is no RLP item it can delimit (a malformed prefix, a single
/// byte): enough for the decoder to name what is wrong with it, never the whole of an endless
/// stream.
inline constexpr size_t kUndelimitedPeekBytes = size_t{64} << 10;

/// Why a file could not be opened or read: the caller names the file in its own words ("cannot
/// read genesis 'g.json': No such file or directory").
struct FileError {
    std::string reason;     ///< strerror's text, or "larger than the limit of N bytes"
    bool directory{false};  ///< the path names a directory
    bool too_large{false};  ///< the input has more than the limit: nothing of it was kept
};

/// "larger than the limit of N bytes": the one wording of every limit.
std::string over_limit(size_t limit);

/// The whole of the file at `path`, if it holds at most `limit` bytes. A regular file's size is
/// checked before reading; a pipe or a device (no size) is read up to one byte past the limit.
Expected<Bytes, FileError> read_file(const std::string& path, size_t limit);
/// The rest of `in` (standard input), at most `limit` bytes, as read_file.
Expected<Bytes, FileError> read_stream(std::istream& in, size_t limit);

/// A write that failed after the output was opened: disk full, a file size limit (SIGXFSZ is
/// ignored by both binaries, so write() returns EFBIG), an I/O error. The message is one line,
/// "cannot write 'PATH': REASON"; the temporary file is gone by the time the exception leaves
/// the AtomicFile's scope.
class WriteError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An output file, written one of three ways by what its target is:
/// - a regular file (or a new one): under a temporary name beside it, renamed over it by
///   commit(), so a reader sees the old file or the whole new one; destroying an uncommitted one
///   removes it. A symbolic link (a chain of them, a dangling one) is followed to its final
///   target, which is replaced; the link stays and points at the new file.
/// - anything else (a character device, a fifo, /dev/stdout or /proc/self/fd/N whatever they
///   lead to): written directly, never renamed over.
/// - "-": the caller's standard output stream.
/// A target inside a barrel datadir (a directory holding RocksDB's CURRENT and LOCK files, or
/// below one) is refused: writing there destroys the datadir.
class AtomicFile {
public:
    /// Opens the output now, so that a target that cannot be written is found before any work is
    /// done. The message names the target: "empty path", "'PATH' is a directory", "'PATH' is
    /// inside the datadir 'DIR'" or "cannot write 'PATH': REASON". `standard_output` is what
    /// "-" writes to.
    static Expected<AtomicFile, std::string> create(const std::string& target,
                                                    std::ostream& standard_output);

    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    /// Appends bytes (throws WriteError).
    void write(BytesView bytes);
    void write(std::string_view text) { write(as_bytes(text)); }

    /// Flushes the data to disk and closes the file (throws WriteError). A writer of several
    /// files finishes them all before renaming any (gen's genesis and chain).
    void finish();

    /// finish() if not yet, then renames the file over the target (throws WriteError). Data
    /// first, then the rename: never a half-written target.
    void commit();

    const std::string& target() const noexcept { return m_target; }
    /// The file written before the rename; empty when written directly. For a process that
    /// must end without unwinding (an interrupt): it removes this itself.
    const std::string& temporary() const noexcept { return m_temp; }
    /// Whether this writes standard output ("-", /dev/stdout): the caller's own report then goes
    /// to stderr.
    bool is_standard_output() const noexcept { return m_to_stdout; }

private:
    AtomicFile(std::string target, std::string temp, int fd, std::ostream* stream) noexcept;
    [[noreturn]] void fail(int error);

    std::string m_target;
    std::string m_temp;   ///< empty when written directly
    std::string m_final;  ///< what m_temp is renamed over: the target, its links followed
    int m_fd{-1};
    std::ostream* m_stream{nullptr};  ///< "-": the caller's standard output stream
    bool m_to_stdout{false};
    bool m_committed{false};
};

/// Why a chain file could not be read on.
struct ChainReadError {
    /// The index (from 0) of the block over the limit; nothing for a read error.
    std::optional<size_t> block;
    /// "larger than the limit of N bytes", or "cannot read 'PATH': REASON".
    std::string reason;
};

/// Reads a chain file (wire blocks concatenated) one block at a time, from a file or a stream:
/// each block is the RLP list at the front of what is left, and its prefix alone
/// (rlp::item_length) says how long it is, so memory stays at one block whatever the file's
/// size. A block whose prefix declares more than `max_block_bytes` is refused before any of it
/// is read. Input that is not a list is handed on as one last "block", for the decoder to name
/// what is wrong with it: an RLP string whole (with a bounded look past it), anything else as
/// its first kUndelimitedPeekBytes. A truncated last block is handed on as it is, for the same
/// reason.
class ChainReader {
public:
    /// The file at `path`.
    static Expected<ChainReader, FileError> open(const std::string& path, size_t max_block_bytes);
    /// A stream the caller keeps alive (standard input).
    ChainReader(std::istream& in, size_t max_block_bytes) noexcept
        : m_in{&in}, m_max_block_bytes{max_block_bytes} {}

    /// The next block, nothing at the end of the input, or why the input cannot be read on.
    Expected<std::optional<Bytes>, ChainReadError> next();

private:
    ChainReader(std::unique_ptr<std::istream> owned, std::string path,
                size_t max_block_bytes) noexcept;

    /// Appends up to n bytes to `out`; false when fewer were there (end of input) or on a read
    /// error (m_read_error set).
    bool read_up_to(Bytes& out, size_t n);
    /// The error of a failed read_up_to, else nothing.
    std::optional<ChainReadError> read_error() const;

    std::unique_ptr<std::istream> m_owned;
    std::istream* m_in;
    std::string m_path{"standard input"};
    size_t m_max_block_bytes;
    size_t m_index{0};    ///< blocks handed on so far
    bool m_ended{false};  ///< the last item (not a list) was handed on
    int m_read_errno{0};  ///< errno of a failed read, 0 if none
    Bytes m_ahead;        ///< bytes read past the end of the last block (a prefix is read whole)
};

}  // namespace barrel::cli
