// The one HTTP client (src/http/client.hpp) against a scripted server on loopback: each request
// it reads is answered with the script's next reply, after which the server keeps the
// connection, closes it, or says nothing more. Nothing waits on time to pass but the timeout
// case, whose bound is the client's own.

#include "http/client.hpp"
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace barrel::http {
namespace {

using namespace std::chrono_literals;

enum class After { keep, close, hang };

struct Reply {
    std::string bytes;
    After after{After::keep};
};

std::string ok(std::string_view body, std::string_view extra_headers = "") {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
           std::string{extra_headers} + "\r\n" + std::string{body};
}

class ScriptedServer {
public:
    explicit ScriptedServer(std::vector<Reply> script) : m_script{script.begin(), script.end()} {
        m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        EXPECT_EQ(::listen(m_listener, 8), 0);
        socklen_t length = sizeof address;
        ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length);
        m_port = ntohs(address.sin_port);
        m_thread = std::thread{[this] { serve(); }};
    }
    ~ScriptedServer() {
        ::shutdown(m_listener, SHUT_RDWR);  // wakes the accept
        m_thread.join();
        ::close(m_listener);
        for (int fd : m_hung) ::close(fd);
    }

    HttpUrl url(std::string target = "/") const {
        return HttpUrl{HostPort{"127.0.0.1", m_port}, std::move(target)};
    }
    /// What the server read, a request an element, and on how many connections.
    std::vector<std::string> requests() {
        std::lock_guard lock{m_mutex};
        return m_requests;
    }
    size_t connections() {
        std::lock_guard lock{m_mutex};
        return m_connections;
    }

private:
    void serve() {
        for (;;) {
            const int fd = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) return;
            {
                std::lock_guard lock{m_mutex};
                ++m_connections;
            }
            if (!serve_connection(fd)) m_hung.push_back(fd);
        }
    }

    /// false: the connection is left open and silent (closed by the destructor).
    bool serve_connection(int fd) {
        std::string in;
        char buffer[4096];
        for (;;) {
            // A whole request: its head, then Content-Length bytes.
            size_t head_end;
            while ((head_end = in.find("\r\n\r\n")) == std::string::npos ||
                   in.size() < head_end + 4 + content_length(in.substr(0, head_end))) {
                const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
                if (n <= 0) return ::close(fd), true;
                in.append(buffer, static_cast<size_t>(n));
            }
            const size_t end = head_end + 4 + content_length(in.substr(0, head_end));
            Reply reply;
            {
                std::lock_guard lock{m_mutex};
                m_requests.push_back(in.substr(0, end));
                if (m_script.empty()) return ::close(fd), true;
                reply = m_script.front();
                m_script.pop_front();
            }
            in.erase(0, end);
            if (reply.after == After::hang) return false;
            EXPECT_EQ(::send(fd, reply.bytes.data(), reply.bytes.size(), MSG_NOSIGNAL),
                      static_cast<ssize_t>(reply.bytes.size()));
            if (reply.after == After::close) return ::close(fd), true;
        }
    }

    static size_t content_length(const std::string& head) {
        const size_t at = head.find("Content-Length: ");
        return at == std::string::npos ? 0 : std::stoul(head.substr(at + 16));
    }

    int m_listener{-1};
    uint16_t m_port{0};
    std::mutex m_mutex;
    std::deque<Reply> m_script;
    std::vector<std::string> m_requests;
    size_t m_connections{0};
    std::vector<int> m_hung;
    std::thread m_thread;
};

std::string prefix(const ScriptedServer& server, std::string target = "/") {
    return server.url(std::move(target)).text() + ": ";
}

TEST(http_client, keeps_one_connection_and_sends_the_body_after_its_head) {
    ScriptedServer server{{{ok("[1]")}, {ok("[2]")}, {ok("metrics")}}};
    Client client{server.url("/rpc")};
    auto first = client.post("{}");
    ASSERT_TRUE(first) << first.error();
    EXPECT_EQ(first->status, 200);
    EXPECT_EQ(first->body, "[1]");
    EXPECT_EQ(client.post("[]").value().body, "[2]");
    EXPECT_EQ(client.get("/metrics").value().body, "metrics");
    EXPECT_EQ(server.connections(), 1u);
    const std::string host = "Host: 127.0.0.1:" + std::to_string(server.url().endpoint.port);
    EXPECT_EQ(server.requests(),
              (std::vector<std::string>{
                  "POST /rpc HTTP/1.1\r\n" + host +
                      "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
                  "POST /rpc HTTP/1.1\r\n" + host +
                      "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]",
                  "GET /metrics HTTP/1.1\r\n" + host + "\r\n\r\n"}));
}

TEST(http_client, a_status_other_than_200_and_a_chunked_body_are_answers) {
    ScriptedServer server{{{"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"},
                           {"HTTP/1.1 200 OK\r\nTransfer-Encoding: "
                            "chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"}}};
    Client client{server.url()};
    auto busy = client.post("{}");
    ASSERT_TRUE(busy) << busy.error();
    EXPECT_EQ(busy->status, 503);
    EXPECT_EQ(busy->body, "busy");
    EXPECT_EQ(client.post("{}").value().body, "abcde");
    EXPECT_EQ(server.connections(), 1u);
}

TEST(http_client, a_connection_the_server_closes_is_opened_again) {
    // Closed as it says (Connection: close), then closed while idle without a word: the
    // request on it goes once more, on a new connection.
    ScriptedServer server{
        {{ok("1", "Connection: close\r\n"), After::close}, {ok("2"), After::close}, {ok("3")}}};
    Client client{server.url()};
    EXPECT_EQ(client.post("{}").value().body, "1");
    EXPECT_EQ(client.post("{}").value().body, "2");
    const auto third = client.post("{}");
    ASSERT_TRUE(third) << third.error();
    EXPECT_EQ(third->body, "3");
    EXPECT_EQ(server.connections(), 3u);
    EXPECT_EQ(server.requests().size(), 3u);
}

TEST(http_client, every_failure_names_the_url) {
    uint16_t closed_port = 0;
    {
        ScriptedServer gone{{}};
        closed_port = gone.url().endpoint.port;
    }
    const HttpUrl nobody{HostPort{"127.0.0.1", closed_port}, "/status"};
    EXPECT_EQ(Client{nobody}.get("/status").error(),
              nobody.text() + ": cannot connect: Connection refused");
    EXPECT_EQ(Client{nobody}.connect().error(),
              nobody.text() + ": cannot connect: Connection refused");

    ScriptedServer silent{{{"", After::hang}}};
    Client waiting{silent.url(), Options{.timeout = 100ms}};
    EXPECT_EQ(waiting.post("{}").error(),
              prefix(silent) + "waiting for the answer: timed out after 100 ms");

    ScriptedServer large{{{ok("12345678901")}}};
    Client bounded{large.url(), Options{.max_body = 10}};
    EXPECT_EQ(bounded.post("{}").error(),
              prefix(large) + "the answer's body is larger than 10 bytes");

    ScriptedServer garbled{{{"hello\r\n\r\n"}}};
    EXPECT_EQ(Client{garbled.url()}.post("{}").error(),
              prefix(garbled) + "not an HTTP answer: bad version");

    ScriptedServer cut{{{"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", After::close}}};
    EXPECT_EQ(Client{cut.url()}.post("{}").error(),
              prefix(cut) + "the connection closed in the middle of the answer");

    ScriptedServer mute{{{"", After::close}}};
    EXPECT_EQ(Client{mute.url()}.post("{}").error(),
              prefix(mute) + "the connection closed before an answer");

    const HttpUrl unnamed{HostPort{"no-such-host.invalid", 80}, "/"};
    const auto unresolved = Client{unnamed}.get("/").error();
    // The resolver's own words follow (they differ with the system's configuration).
    EXPECT_TRUE(
        unresolved.starts_with("http://no-such-host.invalid:80: cannot resolve "
                               "'no-such-host.invalid': "))
        << unresolved;
}

}  // namespace
}  // namespace barrel::http
