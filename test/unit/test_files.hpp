#pragma once
// Test-only file helpers shared by every test that touches the disk: a scratch directory that
// cleans up after itself, and whole-file writes and reads (binary, no newline translation).
// Failures throw: a test that cannot even write its input must stop, not compare garbage.

#include <barrel/core/bytes.hpp>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace barrel::test {

/// Writes `bytes` to `path`, replacing what was there.
inline void write_file(const std::string& path, BytesView bytes) {
    std::ofstream out{path, std::ios::binary | std::ios::trunc};
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

inline void write_text(const std::string& path, std::string_view text) {
    write_file(path, as_bytes(text));
}

/// The whole file; empty when it cannot be read (the callers compare it with what they expect).
inline Bytes read_file(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    return Bytes(std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{});
}

inline std::string read_text(const std::string& path) {
    std::ifstream in{path, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// A fresh directory under the test temp dir, removed with everything in it at scope exit.
class ScratchDir {
public:
    ScratchDir() {
        std::string pattern =
            (std::filesystem::path{::testing::TempDir()} / "barrel-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        m_path = pattern;
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const noexcept { return m_path; }
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }

    /// Writes `bytes` to the file `name` in here and gives its path.
    std::string write(const std::string& name, BytesView bytes) const {
        const std::string file = *this / name;
        write_file(file, bytes);
        return file;
    }

    /// The names of the entries directly in here, sorted.
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(m_path))
            out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    std::filesystem::path m_path;
};

}  // namespace barrel::test
