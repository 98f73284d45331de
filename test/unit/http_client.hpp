#pragma once
// A blocking HTTP/1.1 client over one keep-alive connection, for the tests of the node's
// JSON-RPC server: whole requests, raw bytes (half a request), and whether the server closed.

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <string>
#include <string_view>

namespace barrel::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

class Client {
    using tcp = asio::ip::tcp;

public:
    explicit Client(uint16_t port) : m_socket{m_ioc} {
        m_socket.connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port});
    }

    void send_raw(std::string_view bytes) { asio::write(m_socket, asio::buffer(bytes)); }

    /// Every later read fails (would_block) rather than wait longer than this: a test of a
    /// server that might never answer ends instead of hanging.
    void set_receive_timeout(std::chrono::milliseconds limit) {
        timeval tv{};
        tv.tv_sec = static_cast<time_t>(limit.count() / 1000);
        tv.tv_usec = static_cast<suseconds_t>((limit.count() % 1000) * 1000);
        ::setsockopt(m_socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }

    /// Whatever the server sends within the receive timeout, as raw text.
    std::string receive_raw() {
        std::string out(4096, '\0');
        beast::error_code ec;
        const size_t n = m_socket.read_some(asio::buffer(out), ec);
        out.resize(ec ? 0 : n);
        return out;
    }

    void send(http::verb verb, std::string target, std::string body,
              std::string content_type = "application/json", bool keep_alive = true) {
        http::request<http::string_body> req{verb, target, 11};
        req.set(http::field::host, "127.0.0.1");
        if (!content_type.empty()) req.set(http::field::content_type, content_type);
        req.keep_alive(keep_alive);
        req.body() = std::move(body);
        req.prepare_payload();
        http::write(m_socket, req);
    }

    http::response<http::string_body> receive() {
        http::response<http::string_body> res;
        http::read(m_socket, m_buffer, res);
        return res;
    }

    http::response<http::string_body> post(std::string body) {
        send(http::verb::post, "/", std::move(body));
        return receive();
    }

    /// True once the server closed the connection (a read ends without data).
    bool closed_by_server() {
        beast::error_code ec;
        char byte;
        const size_t n = m_socket.read_some(asio::buffer(&byte, 1), ec);
        return n == 0 && (ec == asio::error::eof || ec == asio::error::connection_reset);
    }

private:
    asio::io_context m_ioc;
    tcp::socket m_socket;
    beast::flat_buffer m_buffer;
};

}  // namespace barrel::test
