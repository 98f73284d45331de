#pragma once
// Drives barrel-node's command line in-process (barrel::cli::run) for the cli_*_test.cpp files.

#include <barrel/cli/cli.hpp>
#include <barrel/core/bytes.hpp>

#include <algorithm>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace barrel::test {

struct CliResult {
    int status{-1};
    std::string out;
    std::string err;
};

/// Runs `barrel-node ARGS...` with `in` as standard input (an endless one, say).
inline CliResult run_cli(const std::vector<std::string>& args, std::istream& in) {
    const std::vector<std::string_view> views(args.begin(), args.end());
    std::ostringstream out;
    std::ostringstream err;
    CliResult r;
    r.status = cli::run(views, in, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

/// Runs `barrel-node ARGS...` with `input` as standard input.
inline CliResult run_cli(const std::vector<std::string>& args, const std::string& input = "") {
    std::istringstream in{input};
    return run_cli(args, in);
}

/// An endless input: `head`, then `fill` forever; counts what was taken from it, so a test can
/// say how much a reader read.
class EndlessBuf : public std::streambuf {
public:
    EndlessBuf(Bytes head, char fill) : m_head{std::move(head)}, m_fill{fill} {
        m_buffer.assign(4096, m_fill);
    }
    size_t taken() const noexcept { return m_taken - static_cast<size_t>(egptr() - gptr()); }

protected:
    int_type underflow() override {
        if (m_head_pos < m_head.size()) {
            const size_t n = std::min(m_buffer.size(), m_head.size() - m_head_pos);
            std::copy_n(m_head.begin() + static_cast<std::ptrdiff_t>(m_head_pos), n,
                        m_buffer.begin());
            std::fill(m_buffer.begin() + static_cast<std::ptrdiff_t>(n), m_buffer.end(), m_fill);
            m_head_pos += n;
        } else {
            std::fill(m_buffer.begin(), m_buffer.end(), m_fill);
        }
        setg(m_buffer.data(), m_buffer.data(), m_buffer.data() + m_buffer.size());
        m_taken += m_buffer.size();
        return traits_type::to_int_type(m_buffer[0]);
    }

private:
    Bytes m_head;
    size_t m_head_pos{0};
    char m_fill;
    std::vector<char> m_buffer;
    size_t m_taken{0};
};

/// One way the arguments or the input can be wrong, and the one line it must produce.
struct BadInputCase {
    std::vector<std::string> args;
    std::string input;  ///< standard input
    std::string error;  ///< the whole stderr line, without its newline
};

}  // namespace barrel::test
