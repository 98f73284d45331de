#include "http/client.hpp"

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

namespace barrel::http {

namespace beast_http = boost::beast::http;

namespace {

/// The receive buffer's first size: a batch's answer at once (100 sends: about 7 KB); it
/// doubles for an answer whose head does not fit.
constexpr size_t kChunk = 64 * 1024;

/// Closes a descriptor unless released.
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
    int release() noexcept { return std::exchange(fd, -1); }
};

std::string timed_out(std::chrono::milliseconds timeout) {
    return "timed out after " + std::to_string(timeout.count()) + " ms";
}

/// A connected socket to `address`, or errno (ETIMEDOUT when the timeout passed).
int connect_to(const addrinfo& address, std::chrono::milliseconds timeout, int& error) {
    FdGuard fd{::socket(address.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
    if (fd.fd < 0) return error = errno, -1;
    if (::connect(fd.fd, address.ai_addr, address.ai_addrlen) != 0) {
        if (errno != EINPROGRESS) return error = errno, -1;
        pollfd p{fd.fd, POLLOUT, 0};
        int ready = 0;
        while ((ready = ::poll(&p, 1, static_cast<int>(timeout.count()))) < 0 && errno == EINTR) {
        }
        if (ready == 0) return error = ETIMEDOUT, -1;
        socklen_t length = sizeof error;
        if (ready < 0 || ::getsockopt(fd.fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0)
            error = errno;
        if (error != 0) return -1;
    }
    // Blocking from here on, each wait bounded by the timeout: a send and a receive are then
    // one system call each, as on any blocking socket.
    ::fcntl(fd.fd, F_SETFL, ::fcntl(fd.fd, F_GETFL) & ~O_NONBLOCK);
    const timeval bound{static_cast<time_t>(timeout.count() / 1000),
                        static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd.fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    ::setsockopt(fd.fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    // Requests are small and answered at once: Nagle's delay would hold a request's last
    // segment back until the previous answer's ACK.
    const int one = 1;
    ::setsockopt(fd.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd.release();
}

}  // namespace

Client::Client(HttpUrl url, Options options)
    : m_url{std::move(url)},
      m_options{options},
      m_host_header{"Host: " + m_url.endpoint.text() + "\r\n"} {}

Client::~Client() { close(); }

Client::Client(Client&& other) noexcept
    : m_url{std::move(other.m_url)},
      m_options{other.m_options},
      m_fd{std::exchange(other.m_fd, -1)},
      m_host_header{std::move(other.m_host_header)},
      m_in{std::move(other.m_in)},
      m_parsed{std::exchange(other.m_parsed, 0)},
      m_received{std::exchange(other.m_received, 0)} {}

Client& Client::operator=(Client&& other) noexcept {
    if (this != &other) {
        close();
        m_url = std::move(other.m_url);
        m_options = other.m_options;
        m_fd = std::exchange(other.m_fd, -1);
        m_host_header = std::move(other.m_host_header);
        m_in = std::move(other.m_in);
        m_parsed = std::exchange(other.m_parsed, 0);
        m_received = std::exchange(other.m_received, 0);
    }
    return *this;
}

void Client::close() noexcept {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    m_parsed = m_received = 0;
}

std::string Client::failure(std::string_view target, std::string_view what) const {
    HttpUrl at{m_url.endpoint, std::string{target}};
    return at.text() + ": " + std::string{what};
}

Expected<void, std::string> Client::connect() {
    if (m_fd >= 0) return {};
    return open();
}

Expected<void, std::string> Client::open() {
    close();
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(m_url.endpoint.port);
    if (const int r = ::getaddrinfo(m_url.endpoint.host.c_str(), port.c_str(), &hints, &found);
        r != 0)
        return unexpected(failure(
            m_url.target, "cannot resolve '" + m_url.endpoint.host + "': " + ::gai_strerror(r)));
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses{found, ::freeaddrinfo};
    int error = 0;
    for (const addrinfo* a = found; a != nullptr && m_fd < 0; a = a->ai_next)
        m_fd = connect_to(*a, m_options.timeout, error);
    if (m_fd >= 0) return {};
    return unexpected(failure(
        m_url.target, "cannot connect: " + (error == ETIMEDOUT ? timed_out(m_options.timeout)
                                                               : std::strerror(error))));
}

Expected<Response, std::string> Client::post(std::string_view body) {
    return exchange("POST", m_url.target, body);
}

Expected<Response, std::string> Client::get(std::string_view target) {
    return exchange("GET", target, {});
}

Expected<Response, std::string> Client::exchange(std::string_view method, std::string_view target,
                                                 std::string_view body) {
    const bool reused = m_fd >= 0;
    if (!reused)
        if (auto opened = open(); !opened) return unexpected(opened.error());
    bool answered = false;
    auto response = attempt(method, target, body, answered);
    if (response || !reused || answered) return response;
    // The kept connection was closed by the server while idle: once more on a new one.
    if (auto opened = open(); !opened) return unexpected(opened.error());
    return attempt(method, target, body, answered);
}

Expected<Response, std::string> Client::attempt(std::string_view method, std::string_view target,
                                                std::string_view body, bool& answered) {
    auto fail = [&](std::string_view what) {
        close();
        return unexpected(failure(target, what));
    };
    std::string head;
    head.reserve(128 + target.size());
    head.append(method).append(" ").append(target).append(" HTTP/1.1\r\n").append(m_host_header);
    if (method == "POST")
        head.append("Content-Type: application/json\r\nContent-Length: ")
            .append(std::to_string(body.size()))
            .append("\r\n");
    head.append("\r\n");
    // The head and the body in one system call, the body from where it lies (barrel-load's
    // batches are tens of KB, made before its clock starts).
    iovec parts[2] = {{head.data(), head.size()}, {const_cast<char*>(body.data()), body.size()}};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = body.empty() ? 1 : 2;
    for (size_t left = head.size() + body.size(); left > 0;) {
        const ssize_t n = ::sendmsg(m_fd, &message, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        // EAGAIN (Linux's EWOULDBLOCK too): SO_SNDTIMEO passed.
        if (n < 0 && errno == EAGAIN) return fail("sending: " + timed_out(m_options.timeout));
        if (n < 0) return fail(std::string{"sending: "} + std::strerror(errno));
        left -= static_cast<size_t>(n);
        for (size_t sent = static_cast<size_t>(n); sent > 0;) {
            iovec& part = message.msg_iov[0];
            const size_t step = std::min(sent, part.iov_len);
            part.iov_base = static_cast<char*>(part.iov_base) + step;
            part.iov_len -= step;
            sent -= step;
            if (part.iov_len == 0 && message.msg_iovlen > 1) {
                ++message.msg_iov;
                --message.msg_iovlen;
            }
        }
    }

    beast_http::response_parser<beast_http::string_body> parser;
    // Not eager: Boost 1.81's eager parse of a head and its body in one put() skips the
    // body_limit check of a Content-Length (the body is then parsed by the next put()).
    parser.body_limit(m_options.max_body);
    boost::beast::error_code ec;
    while (!parser.is_done()) {
        if (m_parsed < m_received) {
            const size_t used = parser.put(
                boost::asio::const_buffer{m_in.data() + m_parsed, m_received - m_parsed}, ec);
            m_parsed += used;
            if (ec == beast_http::error::need_more) {
                ec = {};
            } else if (ec == beast_http::error::body_limit) {
                return fail("the answer's body is larger than " +
                            std::to_string(m_options.max_body) + " bytes");
            } else if (ec) {
                return fail("not an HTTP answer: " + ec.message());
            } else if (parser.is_done()) {
                break;
            } else if (used > 0) {
                continue;
            }
        }
        // Received into the buffer where it is parsed: the body is copied once, into the
        // answer. What a head left unparsed moves to the front; a head larger than the
        // buffer doubles it.
        if (m_parsed == m_received) m_parsed = m_received = 0;
        if (m_received == m_in.size()) {
            if (m_parsed > 0) {
                std::memmove(m_in.data(), m_in.data() + m_parsed, m_received - m_parsed);
                m_received -= m_parsed;
                m_parsed = 0;
            }
            if (m_received == m_in.size()) m_in.resize(std::max(kChunk, 2 * m_in.size()));
        }
        ssize_t n;
        while ((n = ::recv(m_fd, m_in.data() + m_received, m_in.size() - m_received, 0)) < 0 &&
               errno == EINTR) {
        }
        if (n > 0) m_received += static_cast<size_t>(n);
        if (n < 0 && errno == EAGAIN)
            return fail("waiting for the answer: " + timed_out(m_options.timeout));
        if (n < 0) return fail(std::string{"receiving: "} + std::strerror(errno));
        if (n == 0) {
            // Beast's put_eof would take no bytes at all for a whole answer: checked first.
            if (!parser.got_some() && m_parsed == m_received)
                return fail("the connection closed before an answer");
            parser.put_eof(ec);
            if (ec || !parser.is_done())
                return fail("the connection closed in the middle of the answer");
            break;
        }
        answered = true;
    }
    auto response = parser.release();
    if (!response.keep_alive()) close();
    return Response{static_cast<int>(response.result_int()), std::move(response.body())};
}

}  // namespace barrel::http
