#pragma once
/// @file
/// The file I/O of barrel-node and barrel-bench, one way each: a whole file read, a file
/// written whole or not at all, and a chain file read block by block. Failures the user can fix
/// (a missing file, a directory, a path that cannot be written) come back as a one-line message
/// naming the path; failures in the middle of writing (disk full, I/O error) throw
/// std::runtime_error, since nothing the user typed caused them.

#include <barrel/core/bytes.hpp>
#include <barrel/core/expected.hpp>

#include <istream>
#include <memory>
#include <optional>
#include <string>

namespace barrel::cli {

/// Why a file could not be opened: the caller names the file in its own words ("cannot read
/// genesis 'g.json': No such file or directory").
struct FileError {
    std::string reason;     ///< strerror's text
    bool directory{false};  ///< the path names a directory
};

/// The whole of the file at `path`.
Expected<Bytes, FileError> read_file(const std::string& path);

/// A file written under a temporary name beside its target and renamed over it by commit(), so
/// a reader sees the old file or the whole new one; destroying an uncommitted one removes it.
class AtomicFile {
public:
    /// Creates the temporary file now, so that a target that cannot be written is found before
    /// any work is done. The message names the target: "empty path", "'PATH' is a directory" or
    /// "cannot write 'PATH': REASON".
    static Expected<AtomicFile, std::string> create(const std::string& target);

    AtomicFile(AtomicFile&& other) noexcept;
    AtomicFile& operator=(AtomicFile&&) = delete;
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();

    /// Appends bytes (throws std::runtime_error on a write error).
    void write(BytesView bytes);
    void write(std::string_view text) { write(as_bytes(text)); }

    /// Flushes the data to disk and closes the file (throws std::runtime_error on failure). A
    /// writer of several files finishes them all before renaming any (gen's genesis and chain).
    void finish();

    /// finish() if not yet, then renames the file over the target (throws std::runtime_error on
    /// failure). Data first, then the rename: never a half-written target.
    void commit();

    const std::string& target() const noexcept { return m_target; }

private:
    AtomicFile(std::string target, std::string temp, int fd) noexcept;

    std::string m_target;
    std::string m_temp;
    int m_fd{-1};
    bool m_committed{false};
};

/// Reads a chain file (wire blocks concatenated) one block at a time, from a file or a stream:
/// each block is the RLP list at the front of what is left, and its prefix alone
/// (rlp::item_length) says how long it is, so memory stays at one block whatever the file's
/// size. Input that is not a list, or whose prefix is malformed, is handed on whole, from there
/// to its end, as one last "block": the decoder then names what is wrong with it, as it would
/// for any undecodable block. A truncated last block is handed on as it is, for the same reason.
class ChainReader {
public:
    /// The file at `path`.
    static Expected<ChainReader, FileError> open(const std::string& path);
    /// A stream the caller keeps alive (standard input).
    explicit ChainReader(std::istream& in) noexcept : m_in{&in} {}

    /// The next block, or nothing at the end of the input. Throws std::runtime_error on a read
    /// error.
    std::optional<Bytes> next();

private:
    ChainReader(std::unique_ptr<std::istream> owned, std::string path) noexcept;

    /// Appends up to n bytes to `out`; false when fewer were there (end of input).
    bool read_up_to(Bytes& out, size_t n);

    std::unique_ptr<std::istream> m_owned;
    std::istream* m_in;
    std::string m_path{"standard input"};
    Bytes m_ahead;  ///< bytes read past the end of the last block (a prefix is read whole)
};

}  // namespace barrel::cli
