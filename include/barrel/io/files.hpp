#pragma once
/// @file
/// File I/O, one way each: a whole file read under a size limit, a file written whole or not at
/// all (barrel-node's and barrel-bench's outputs, the pool's journal, the store's datadir
/// renamed into place), and a chain file read block by block. Failures the
/// user can fix (a missing file, a directory, a path that cannot be written, an input over its
/// limit) come back as values naming the path; failures in the middle of writing (disk full, a
/// file size limit, an I/O error) throw WriteError, which the command lines report as bad input
/// too (exit 2): the environment is at fault, not barrel. Every limit is in docs/formats.md,
/// "Limits".

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <cstddef>
#include <istream>  // ChainReader owns one: its unique_ptr needs the complete type
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace barrel::io {

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

// ---- Replacing a file durably ------------------------------------------------------------------

/// Why a replacement failed: errno, and one line naming the target and the step that failed:
/// "cannot write 'PATH': REASON" (creating, writing, syncing or renaming the new file) or "cannot
/// sync the directory of 'PATH': REASON" (the rename done, its durability not).
struct ReplaceError {
    int code{0};
    std::string message;
    bool renamed{false};  ///< the new file is in place, only the directory's sync failed
};

/// A regular file replaced whole, the one way every file barrel writes is replaced: the bytes go
/// to a new file under a temporary name in the target's own directory (".NAME.tmpPID-N", created
/// with O_EXCL, so never something already there: a leftover, a fifo), and commit() fsyncs it,
/// renames it over the target and fsyncs the directory. A reader sees the old file or the whole
/// new one; after a crash, the same; once commit() returns, the new one survives a power loss.
/// A failed step removes the temporary file at once (a caller may exit without unwinding), an
/// uncommitted replacement removes it when destroyed, and the old file is left as it was. The
/// target itself is replaced, a symbolic link included (AtomicFile follows links first).
class FileReplacement {
public:
    /// The temporary file, created now; "'PATH' is a directory" (EISDIR) when the target is one.
    static Expected<FileReplacement, ReplaceError> create(const std::string& target);
    FileReplacement(FileReplacement&& other) noexcept;
    FileReplacement& operator=(FileReplacement&&) = delete;
    FileReplacement(const FileReplacement&) = delete;
    FileReplacement& operator=(const FileReplacement&) = delete;
    ~FileReplacement();

    /// Appends bytes.
    Expected<void, ReplaceError> write(BytesView bytes);
    /// fsyncs the data (unless `sync` is false: a rewrite that a later synced one supersedes)
    /// and closes the file. A writer of several files finishes them all before committing any.
    Expected<void, ReplaceError> finish(bool sync = true);
    /// finish() if not yet, renames the file over the target, then fsyncs the directory (with
    /// `sync`).
    Expected<void, ReplaceError> commit(bool sync = true);

    const std::string& target() const noexcept { return m_target; }
    /// The file written before the rename (a process that must end without unwinding removes
    /// it itself).
    const std::string& temporary() const noexcept { return m_temp; }

private:
    FileReplacement(std::string target, std::string temp, int fd) noexcept;
    /// Closes and removes the temporary file: "cannot write 'TARGET': strerror(error)".
    ReplaceError fail(int error);

    std::string m_target;
    std::string m_temp;
    int m_fd{-1};
    bool m_done{false};  ///< committed or failed: nothing left to remove
};

/// `target` replaced by `bytes` (FileReplacement: one write, then commit(sync)).
Expected<void, ReplaceError> replace_file(const std::string& target, BytesView bytes,
                                          bool sync = true);

/// rename(2) of `from` (a file or a directory built beside it) over `to`, then an fsync of
/// `to`'s directory so that the rename survives a power loss. The error is rename's errno with
/// "cannot move 'FROM' to 'TO': REASON", or the directory sync's.
Expected<void, ReplaceError> rename_durably(const std::string& from, const std::string& to);

/// fsync of directory `dir`, which makes the entries created, renamed or removed in it durable.
Expected<void, ReplaceError> sync_directory(const std::string& dir);

// ---- Outputs -----------------------------------------------------------------------------------

/// A write that failed after the output was opened: disk full, a file size limit (SIGXFSZ is
/// ignored by both binaries, so write() returns EFBIG), an I/O error. The message is one line,
/// "cannot write 'PATH': REASON"; the temporary file is gone by the time the exception leaves
/// the AtomicFile's scope.
class WriteError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An output file, written one of three ways by what its target is:
/// - a regular file (or a new one): a FileReplacement, renamed over it by commit() (synced, and
///   its directory too), so a reader sees the old file or the whole new one; destroying an
///   uncommitted one removes it. A symbolic link (a chain of them, a dangling one) is followed to
///   its final target, which is replaced; the link stays and points at the new file.
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
    const std::string& temporary() const noexcept;
    /// Whether this writes standard output ("-", /dev/stdout): the caller's own report then goes
    /// to stderr.
    bool is_standard_output() const noexcept { return m_to_stdout; }

private:
    AtomicFile(std::string target, int fd, std::ostream* stream) noexcept;
    [[noreturn]] void fail(int error);

    std::string m_target;
    std::optional<FileReplacement> m_replacement;  ///< a regular file's; else written directly
    int m_fd{-1};                                  ///< a device's, fifo's or descriptor's
    std::ostream* m_stream{nullptr};               ///< "-": the caller's standard output stream
    bool m_to_stdout{false};
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

}  // namespace barrel::io
