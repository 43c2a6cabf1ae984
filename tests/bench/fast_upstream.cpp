// fast_upstream: an OpenAI-compatible provider that answers at once, for the load benchmark.
//
// It must never be the slowest part of a measurement, so it is plain C++ on epoll: one event
// loop per worker thread, all sharing one listening socket (EPOLLEXCLUSIVE wakes one of them per
// new connection), HTTP/1.1 keep-alive, and answers built once at start. No Qt, no allocation per
// request beyond the connection's buffers.
//
//   fast_upstream [--threads N] [--port P] [--stream-events N --event-interval-ms M]
//
// With --event-interval-ms, a streamed answer is paced as a model's would be: N events (the last
// one carries finish_reason "stop"), the first, with the role and the first content, at once and
// each next one M ms later, then `data: [DONE]` with the end of the stream. Pacing is a FIFO per
// worker (every stream has the same interval, so the queue is ordered by due time): constant cost
// per event, so ten thousand paced streams cost this process little.
//
// Listens on 127.0.0.1 (port 0 unless told otherwise), prints "fast_upstream listening on
// 127.0.0.1:PORT" and serves until SIGINT or SIGTERM:
//   POST .../chat/completions              200 JSON completion with Content-Length
//   the same with "stream": true           200 chunked text/event-stream, a few `data:` events
//                                          and `data: [DONE]`, all written in one go
//   anything else                          404; a chunked request body gets 411

#include "http_text.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <string_view>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

// A request head larger than this is not something the benchmark sends; refuse it.
constexpr std::size_t kMaxHeadBytes = 64 * 1024;
constexpr std::size_t kMaxBodyBytes = 16 * 1024 * 1024;
constexpr std::size_t kReadChunkBytes = 64 * 1024;

std::string jsonCompletion()
{
    return R"({"id":"chatcmpl-bench","object":"chat.completion","created":1764374400,)"
           R"("model":"bench-model","system_fingerprint":"fp_bench","choices":[{"index":0,)"
           R"("message":{"role":"assistant","content":"The function leaks the socket when )"
           R"(connect fails; close it on that path and the handle count stays flat."},)"
           R"("logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":412,)"
           R"("completion_tokens":24,"total_tokens":436}})";
}

std::string chunk(std::string_view data)
{
    char size[16];
    const auto end = std::to_chars(size, size + sizeof size, data.size(), 16).ptr;
    std::string framed(size, end);
    framed += "\r\n";
    framed += data;
    framed += "\r\n";
    return framed;
}

std::string streamEvent(std::string_view delta, std::string_view finishReason)
{
    std::string event = R"(data: {"id":"chatcmpl-bench","object":"chat.completion.chunk",)"
                        R"("created":1764374400,"model":"bench-model","choices":[{"index":0,)"
                        R"("delta":)";
    event += delta;
    event += R"(,"logprobs":null,"finish_reason":)";
    event += finishReason;
    event += "}]}\n\n";
    return event;
}

struct Pacing {
    int events = 0;     // 0: the stream is written all at once
    int intervalMs = 0; // between two events of a paced stream
};

struct Answers {
    std::string whole;
    std::string stream;
    std::string notFound;
    std::string lengthRequired;
    // A paced stream: the head with its first event, then one chunk per later event; the
    // last one carries [DONE] and the end of the stream.
    std::string pacedHead;
    std::vector<std::string> pacedEvents;
};

Answers buildAnswers(const Pacing &pacing)
{
    Answers answers;
    if (pacing.events > 0) {
        const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
        for (int i = 0; i < pacing.events; ++i) {
            std::string event;
            // The first event carries content with its role: Switchyard holds an event that
            // only opens the answer (the role alone) until the first content, so that a provider
            // failing before any content can still be failed over (docs/resilience.md). The
            // sweep measures the time the gateway adds to an event, not that hold.
            if (i == 0)
                event = chunk(streamEvent(R"({"role":"assistant","content":"token0"})", "null"));
            else if (i + 1 == pacing.events)
                event = chunk(streamEvent("{}", R"("stop")"));
            else
                event =
                    chunk(streamEvent(R"({"content":" token)" + std::to_string(i) + "\"}", "null"));
            if (i + 1 == pacing.events)
                event += chunk("data: [DONE]\n\n") + "0\r\n\r\n";
            answers.pacedEvents.push_back(event);
        }
        answers.pacedHead = head + answers.pacedEvents.front();
    }
    const std::string body = jsonCompletion();
    answers.whole = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;

    // One chunk per event, as a real provider flushes them, but all written at once: the
    // benchmark measures the gateway, not a model's pace.
    answers.stream = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    answers.stream += chunk(streamEvent(R"({"role":"assistant","content":""})", "null"));
    for (const char *piece :
         {"The function leaks", " the socket when connect fails;", " close it on that path."}) {
        answers.stream +=
            chunk(streamEvent(std::string(R"({"content":")") + piece + "\"}", "null"));
    }
    answers.stream += chunk(streamEvent("{}", R"("stop")"));
    answers.stream += chunk("data: [DONE]\n\n");
    answers.stream += "0\r\n\r\n";

    const std::string missing = R"({"error":{"message":"Unknown path.","type":)"
                                R"("invalid_request_error","param":null,"code":"not_found"}})";
    answers.notFound = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                       "Content-Length: " +
                       std::to_string(missing.size()) + "\r\n\r\n" + missing;
    answers.lengthRequired = "HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\n"
                             "Connection: close\r\n\r\n";
    return answers;
}

using bench::equalsIgnoringCase;
using bench::trim;

// True when the JSON body asks for a stream. A scan instead of a parse: the benchmark's own
// request is the only input, and a parser here would only slow the "fast" upstream down.
bool wantsStream(std::string_view body)
{
    std::size_t at = 0;
    while ((at = body.find("\"stream\"", at)) != std::string_view::npos) {
        at += 8;
        std::size_t next = at;
        while (next < body.size() && (body[next] == ' ' || body[next] == '\n'))
            ++next;
        if (next >= body.size() || body[next] != ':')
            continue; // the word inside a string, not a key
        ++next;
        while (next < body.size() && (body[next] == ' ' || body[next] == '\n'))
            ++next;
        return body.substr(next, 4) == "true";
    }
    return false;
}

std::int64_t monotonicMs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

struct Connection {
    int fd = -1;
    std::uint64_t serial = 0; // tells a paced event's connection from a later one on the same fd
    int nextPacedEvent = 0;   // 0: no paced stream running
    std::string input;
    std::string output;
    std::size_t outputSent = 0;
    bool closeAfterWrite = false;
    bool waitingForWritable = false;
};

enum class Parsed { NeedMore, Answered, Close };

class Worker {
public:
    Worker(int listenFd, int stopFd, const Answers &answers, const Pacing &pacing)
        : m_listenFd(listenFd), m_stopFd(stopFd), m_answers(answers), m_pacing(pacing)
    {}

    void run()
    {
        m_epoll = epoll_create1(EPOLL_CLOEXEC);
        if (m_epoll < 0) {
            std::perror("fast_upstream: epoll_create1");
            return;
        }
        epoll_event listenEvent{};
        listenEvent.events = EPOLLIN | EPOLLEXCLUSIVE;
        listenEvent.data.fd = m_listenFd;
        epoll_event stopEvent{};
        stopEvent.events = EPOLLIN;
        stopEvent.data.fd = m_stopFd;
        if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_listenFd, &listenEvent) != 0 ||
            epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_stopFd, &stopEvent) != 0) {
            std::perror("fast_upstream: epoll_ctl");
            close(m_epoll);
            return;
        }
        epoll_event events[256];
        bool running = true;
        while (running) {
            int timeoutMs = -1;
            if (!m_paced.empty())
                timeoutMs = int(std::max<std::int64_t>(0, m_paced.front().dueMs - monotonicMs()));
            const int count = epoll_wait(m_epoll, events, 256, timeoutMs);
            if (count < 0) {
                if (errno == EINTR)
                    continue;
                std::perror("fast_upstream: epoll_wait");
                break;
            }
            for (int i = 0; i < count; ++i) {
                const int fd = events[i].data.fd;
                if (fd == m_stopFd)
                    running = false;
                else if (fd == m_listenFd)
                    acceptAll();
                else
                    serve(fd, events[i].events);
            }
            sendDuePacedEvents();
        }
        for (auto &[fd, connection] : m_connections)
            close(fd);
        m_connections.clear();
        close(m_epoll);
    }

private:
    struct PacedEvent {
        std::int64_t dueMs;
        int fd;
        std::uint64_t serial;
    };

    void sendDuePacedEvents()
    {
        const std::int64_t now = monotonicMs();
        while (!m_paced.empty() && m_paced.front().dueMs <= now) {
            const PacedEvent due = m_paced.front();
            m_paced.pop_front();
            const auto found = m_connections.find(due.fd);
            if (found == m_connections.end() || found->second->serial != due.serial)
                continue; // the client went away
            Connection &connection = *found->second;
            connection.output += m_answers.pacedEvents[std::size_t(connection.nextPacedEvent)];
            ++connection.nextPacedEvent;
            if (connection.nextPacedEvent == m_pacing.events)
                connection.nextPacedEvent = 0;
            else
                m_paced.push_back({due.dueMs + m_pacing.intervalMs, due.fd, due.serial});
            if (!flush(connection))
                drop(connection);
        }
    }

    void acceptAll()
    {
        for (;;) {
            const int fd = accept4(m_listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                return; // EAGAIN: another worker took it, or none left
            const int on = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
            epoll_event event{};
            event.events = EPOLLIN | EPOLLRDHUP;
            event.data.fd = fd;
            if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event) != 0) {
                close(fd);
                continue;
            }
            auto connection = std::make_unique<Connection>();
            connection->fd = fd;
            connection->serial = ++m_serials;
            m_connections.emplace(fd, std::move(connection));
        }
    }

    void serve(int fd, std::uint32_t eventMask)
    {
        const auto found = m_connections.find(fd);
        if (found == m_connections.end())
            return;
        Connection &connection = *found->second;
        if (eventMask & EPOLLOUT) {
            if (!flush(connection))
                return drop(connection);
        }
        if (eventMask & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            if (!readAvailable(connection))
                return drop(connection);
        }
    }

    // Reads what the socket holds and answers every complete request in it. False: close it.
    bool readAvailable(Connection &connection)
    {
        char buffer[kReadChunkBytes];
        for (;;) {
            const ssize_t got = recv(connection.fd, buffer, sizeof buffer, 0);
            if (got > 0) {
                connection.input.append(buffer, std::size_t(got));
                continue;
            }
            if (got == 0)
                return false;
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return false;
        }
        std::size_t consumed = 0;
        for (;;) {
            const Parsed parsed = answerOne(connection, consumed);
            if (parsed == Parsed::Close) {
                connection.closeAfterWrite = true;
                break;
            }
            if (parsed == Parsed::NeedMore)
                break;
        }
        connection.input.erase(0, consumed);
        if (!connection.closeAfterWrite &&
            connection.input.size() > kMaxHeadBytes + kMaxBodyBytes) {
            return false;
        }
        return flush(connection);
    }

    // Answers the request starting at `consumed`, if it is complete, and moves past it.
    Parsed answerOne(Connection &connection, std::size_t &consumed)
    {
        const std::string_view input = std::string_view(connection.input).substr(consumed);
        const std::size_t headEnd = input.find("\r\n\r\n");
        if (headEnd == std::string_view::npos)
            return input.size() > kMaxHeadBytes ? Parsed::Close : Parsed::NeedMore;
        const std::string_view head = input.substr(0, headEnd);

        std::size_t contentLength = 0;
        bool chunkedBody = false;
        bool closeRequested = false;
        std::size_t lineStart = head.find("\r\n");
        const std::string_view requestLine = head.substr(0, lineStart);
        while (lineStart != std::string_view::npos) {
            lineStart += 2;
            const std::size_t lineEnd = head.find("\r\n", lineStart);
            const std::string_view line = head.substr(lineStart, lineEnd - lineStart);
            lineStart = lineEnd;
            const std::size_t colon = line.find(':');
            if (colon == std::string_view::npos)
                continue;
            const std::string_view name = line.substr(0, colon);
            const std::string_view value = trim(line.substr(colon + 1));
            if (equalsIgnoringCase(name, "content-length")) {
                const auto result =
                    std::from_chars(value.data(), value.data() + value.size(), contentLength);
                if (result.ec != std::errc() || contentLength > kMaxBodyBytes)
                    return Parsed::Close;
            } else if (equalsIgnoringCase(name, "transfer-encoding")) {
                chunkedBody = true;
            } else if (equalsIgnoringCase(name, "connection")) {
                closeRequested = equalsIgnoringCase(value, "close");
            }
        }
        if (chunkedBody) {
            connection.output += m_answers.lengthRequired;
            return Parsed::Close;
        }
        const std::size_t total = headEnd + 4 + contentLength;
        if (input.size() < total)
            return Parsed::NeedMore;
        const std::string_view body = input.substr(headEnd + 4, contentLength);

        const bool chat = requestLine.starts_with("POST ") &&
                          requestLine.find("/chat/completions ") != std::string_view::npos;
        if (!chat) {
            connection.output += m_answers.notFound;
        } else if (!wantsStream(body)) {
            connection.output += m_answers.whole;
        } else if (m_pacing.events > 0 && connection.nextPacedEvent == 0) {
            connection.output += m_answers.pacedHead;
            if (m_pacing.events > 1) {
                connection.nextPacedEvent = 1;
                m_paced.push_back(
                    {monotonicMs() + m_pacing.intervalMs, connection.fd, connection.serial});
            }
        } else if (m_pacing.events > 0) {
            return Parsed::Close; // a second request while a paced stream runs: not supported
        } else {
            connection.output += m_answers.stream;
        }
        consumed += total;
        return closeRequested ? Parsed::Close : Parsed::Answered;
    }

    // Writes what is pending. False when the connection should be closed now.
    bool flush(Connection &connection)
    {
        while (connection.outputSent < connection.output.size()) {
            const ssize_t sent =
                send(connection.fd, connection.output.data() + connection.outputSent,
                     connection.output.size() - connection.outputSent, MSG_NOSIGNAL);
            if (sent > 0) {
                connection.outputSent += std::size_t(sent);
                continue;
            }
            if (sent < 0 && errno == EINTR)
                continue;
            if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return watchWritable(connection, true);
            return false;
        }
        connection.output.clear();
        connection.outputSent = 0;
        if (connection.closeAfterWrite)
            return false;
        return watchWritable(connection, false);
    }

    bool watchWritable(Connection &connection, bool writable)
    {
        if (connection.waitingForWritable == writable)
            return true;
        connection.waitingForWritable = writable;
        epoll_event event{};
        event.events = EPOLLIN | EPOLLRDHUP | (writable ? EPOLLOUT : 0u);
        event.data.fd = connection.fd;
        return epoll_ctl(m_epoll, EPOLL_CTL_MOD, connection.fd, &event) == 0;
    }

    void drop(Connection &connection)
    {
        const int fd = connection.fd;
        epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
        close(fd);
        m_connections.erase(fd);
    }

    int m_listenFd;
    int m_stopFd;
    const Answers &m_answers;
    const Pacing &m_pacing;
    std::deque<PacedEvent> m_paced; // ordered by due time: every stream has the same interval
    std::uint64_t m_serials = 0;
    int m_epoll = -1;
    std::unordered_map<int, std::unique_ptr<Connection>> m_connections;
};

[[noreturn]] void usage(int exitCode)
{
    std::fprintf(exitCode == 0 ? stdout : stderr,
                 "usage: fast_upstream [--threads N] [--port P] [--stream-events N "
                 "--event-interval-ms M]\n"
                 "Serves POST /v1/chat/completions on 127.0.0.1 with fixed answers (streamed "
                 "when the body has \"stream\": true) until SIGINT or SIGTERM. With "
                 "--event-interval-ms, streams are N events M ms apart.\n");
    std::exit(exitCode);
}

int parseNumber(const char *text, int minimum, int maximum)
{
    int value = 0;
    const std::string_view view(text);
    const auto result = std::from_chars(view.data(), view.data() + view.size(), value);
    if (result.ec != std::errc() || result.ptr != view.data() + view.size() || value < minimum ||
        value > maximum) {
        std::fprintf(stderr, "fast_upstream: `%s` must be a number from %d to %d\n", text, minimum,
                     maximum);
        usage(2);
    }
    return value;
}

} // namespace

int main(int argc, char **argv)
{
    int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    int port = 0;
    Pacing pacing;
    for (int i = 1; i < argc; ++i) {
        const std::string_view option(argv[i]);
        if (option == "--help" || option == "-h")
            usage(0);
        if (i + 1 >= argc)
            usage(2);
        if (option == "--threads")
            threads = parseNumber(argv[++i], 1, 64);
        else if (option == "--port")
            port = parseNumber(argv[++i], 0, 65535);
        else if (option == "--stream-events")
            pacing.events = parseNumber(argv[++i], 1, 100000);
        else if (option == "--event-interval-ms")
            pacing.intervalMs = parseNumber(argv[++i], 1, 600000);
        else
            usage(2);
    }

    // Workers inherit this mask, so SIGINT and SIGTERM reach only sigwait() below.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

    const int listenFd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listenFd < 0) {
        std::perror("fast_upstream: socket");
        return 1;
    }
    const int on = 1;
    setsockopt(listenFd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(std::uint16_t(port));
    if (bind(listenFd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        listen(listenFd, 16384) != 0) { // the streams sweep opens thousands at once
        std::perror("fast_upstream: bind/listen on 127.0.0.1");
        return 1;
    }
    socklen_t length = sizeof address;
    getsockname(listenFd, reinterpret_cast<sockaddr *>(&address), &length);
    const int stopFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stopFd < 0) {
        std::perror("fast_upstream: eventfd");
        return 1;
    }

    if ((pacing.events > 0) != (pacing.intervalMs > 0)) {
        std::fprintf(stderr,
                     "fast_upstream: --stream-events and --event-interval-ms go together\n");
        usage(2);
    }
    const Answers answers = buildAnswers(pacing);
    std::vector<std::thread> workers;
    for (int i = 0; i < threads; ++i)
        workers.emplace_back([&] { Worker(listenFd, stopFd, answers, pacing).run(); });
    std::printf("fast_upstream listening on 127.0.0.1:%u with %d thread(s)\n",
                unsigned(ntohs(address.sin_port)), threads);
    std::fflush(stdout);

    int received = 0;
    sigwait(&stopSignals, &received);
    // The eventfd stays readable once written, so every worker sees it and returns.
    const std::uint64_t one = 1;
    if (write(stopFd, &one, sizeof one) != ssize_t(sizeof one))
        std::perror("fast_upstream: eventfd write");
    for (std::thread &worker : workers)
        worker.join();
    close(stopFd);
    close(listenFd);
    return 0;
}
