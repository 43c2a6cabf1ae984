// load_bench: drives an OpenAI-compatible endpoint over loopback and measures it, and when given
// both a provider (--direct) and Switchyard in front of it (--via) reports what the gateway adds.
//
//   load_bench --direct HOST:PORT [--via HOST:PORT] [--connections 1,64] [--duration-s 5]
//              [--warmup-s 1] [--threads N] [--model NAME] [--direct-pid PID] [--via-pid PID]
//              [--via-thread NAME]
//
// Each scenario (target x non-streamed/streamed x connection count) keeps N keep-alive
// connections busy back to back for the warm-up and then the measured window. Every connection
// sends a ~2 KB chat request (system and user message), waits for the whole answer, and sends
// the next at once. Latency runs from just before the request is written to the read that
// completes the answer; time to first token (TTFT) from the same start to the read that brings
// the first `data:` bytes of a streamed answer. Only answers that complete inside the measured
// window count. After the window no new request starts and open ones are drained (at most 2 s),
// so neither side sees connections cut mid-answer. Given the process id of what answers a
// target, the CPU time it spends per request over the window is reported, next to the
// generator's own: on a small machine those costs explain the throughput figures.
//
// Plain C++ on epoll, one event loop per thread, so the generator costs little CPU next to the
// processes it measures; with few cores everything still shares them, and the report says so.

#include "http_text.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <string>
#include <string_view>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

constexpr std::size_t kReadChunkBytes = 64 * 1024;
constexpr std::size_t kMaxHeadBytes = 64 * 1024;
constexpr auto kDrainLimit = std::chrono::seconds(2);

// ---------------------------------------------------------------------------------------------
// The request

// A chat request of the size and shape an agent or IDE assistant sends: a system prompt with
// instructions and a user turn carrying a code excerpt. About 2 KB on the wire with headers.
std::string chatBody(const std::string &model, bool stream)
{
    std::string body = R"({"model":")" + model + R"(","messages":[{"role":"system","content":)";
    body += R"("You are a careful senior C++ reviewer working inside a code review tool. )"
            R"(Answer in English, in at most three short paragraphs. Point out correctness )"
            R"(problems first, then resource leaks, then anything that would surprise the next )"
            R"(maintainer. Quote the exact line you are talking about. Do not rewrite the whole )"
            R"(function and do not comment on formatting; a formatter runs in CI. If the code )"
            R"(is fine, say so in one sentence and stop. When you suggest a change, show only )"
            R"(the lines that change, as a unified diff, and say in one sentence why the old )"
            R"(code was wrong. Assume C++20, Linux, and a single-threaded event loop."},)";
    body += R"({"role":"user","content":"Please review this function from our connection pool. )"
            R"(It is called from the event loop thread whenever a new upstream connection is )"
            R"(needed, and we have seen the process run out of file descriptors after a few )"
            R"(hours when one provider was down.\n\n```cpp\nint ConnectionPool::open(const )"
            R"(Endpoint &endpoint)\n{\n    const int fd = ::socket(AF_INET, SOCK_STREAM | )"
            R"(SOCK_NONBLOCK, 0);\n    if (fd < 0)\n        return -errno;\n    sockaddr_in )"
            R"(address = endpoint.address();\n    if (::connect(fd, reinterpret_cast<sockaddr )"
            R"(*>(&address), sizeof address) != 0 && errno != EINPROGRESS)\n        return )"
            R"(-errno;\n    m_pending.emplace(fd, endpoint.id());\n    m_loop.watch(fd, )"
            R"(Events::Writable, [this, fd] { onConnected(fd); });\n    return fd;\n}\n```\n\n)"
            R"(The caller retries with backoff when open() fails, up to five times per request, )"
            R"(and we run about two hundred requests per second at peak. The pool keeps at )"
            R"(most sixty-four idle connections per endpoint and closes the oldest when it is )"
            R"(full. What is wrong, and what is the smallest change that fixes it?"}],)";
    body += R"("temperature":0.2,"max_tokens":256,"user":"bench-user-17","stream":)";
    body += stream ? "true}" : "false}";
    return body;
}

std::string chatRequest(const std::string &hostPort, const std::string &model, bool stream)
{
    const std::string body = chatBody(model, stream);
    std::string request = "POST /v1/chat/completions HTTP/1.1\r\nHost: " + hostPort +
                          "\r\nUser-Agent: switchyard-load-bench/1\r\n"
                          "Accept: " +
                          (stream ? std::string("text/event-stream") : "application/json") +
                          "\r\nContent-Type: application/json\r\n"
                          "Authorization: Bearer bench-key\r\n"
                          "Content-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n";
    return request + body;
}

// ---------------------------------------------------------------------------------------------
// The answer

using bench::equalsIgnoringCase;
using bench::trim;

// Reads one HTTP/1.1 answer incrementally: Content-Length or chunked framing, the decoded body
// kept whole (answers here are small) so it can be checked once complete.
class AnswerReader {
public:
    enum class Progress { NeedMore, Complete, Malformed };

    void reset() { *this = AnswerReader(); }

    // Parses from `buffer[offset]` on, advancing `offset` past what it used.
    Progress advance(const std::string &buffer, std::size_t &offset)
    {
        for (;;) {
            const std::string_view rest = std::string_view(buffer).substr(offset);
            switch (m_state) {
            case State::Head: {
                const std::size_t end = rest.find("\r\n\r\n");
                if (end == std::string_view::npos)
                    return rest.size() > kMaxHeadBytes ? Progress::Malformed : Progress::NeedMore;
                if (!parseHead(rest.substr(0, end)))
                    return Progress::Malformed;
                offset += end + 4;
                if (m_chunked)
                    m_state = State::ChunkSize;
                else if (m_remaining > 0)
                    m_state = State::Body;
                else
                    return Progress::Complete;
                break;
            }
            case State::Body: {
                const std::size_t take = std::min(rest.size(), m_remaining);
                m_body.append(rest.substr(0, take));
                offset += take;
                m_remaining -= take;
                if (m_remaining == 0)
                    return Progress::Complete;
                return Progress::NeedMore;
            }
            case State::ChunkSize: {
                const std::size_t end = rest.find("\r\n");
                if (end == std::string_view::npos)
                    return rest.size() > 1024 ? Progress::Malformed : Progress::NeedMore;
                std::string_view sizeText = rest.substr(0, end);
                sizeText = sizeText.substr(0, sizeText.find(';')); // chunk extensions
                sizeText = trim(sizeText);
                std::size_t size = 0;
                const auto parsed =
                    std::from_chars(sizeText.data(), sizeText.data() + sizeText.size(), size, 16);
                if (parsed.ec != std::errc() || parsed.ptr != sizeText.data() + sizeText.size())
                    return Progress::Malformed;
                offset += end + 2;
                m_remaining = size;
                m_state = size == 0 ? State::Trailers : State::ChunkData;
                break;
            }
            case State::ChunkData: {
                if (rest.empty())
                    return Progress::NeedMore;
                const std::size_t take = std::min(rest.size(), m_remaining);
                m_body.append(rest.substr(0, take));
                offset += take;
                m_remaining -= take;
                if (m_remaining == 0)
                    m_state = State::ChunkEnd;
                break;
            }
            case State::ChunkEnd:
                if (rest.size() < 2)
                    return Progress::NeedMore;
                if (rest.substr(0, 2) != "\r\n")
                    return Progress::Malformed;
                offset += 2;
                m_state = State::ChunkSize;
                break;
            case State::Trailers: {
                const std::size_t end = rest.find("\r\n");
                if (end == std::string_view::npos)
                    return Progress::NeedMore;
                offset += end + 2;
                if (end == 0)
                    return Progress::Complete;
                break;
            }
            }
        }
    }

    int status() const { return m_status; }
    bool closeAfter() const { return m_closeAfter; }
    const std::string &body() const { return m_body; }

private:
    enum class State { Head, Body, ChunkSize, ChunkData, ChunkEnd, Trailers };

    bool parseHead(std::string_view head)
    {
        std::size_t lineEnd = head.find("\r\n");
        const std::string_view statusLine = head.substr(0, lineEnd);
        if (!statusLine.starts_with("HTTP/1.") || statusLine.size() < 12)
            return false;
        const auto parsed =
            std::from_chars(statusLine.data() + 9, statusLine.data() + 12, m_status);
        if (parsed.ec != std::errc())
            return false;
        bool haveLength = false;
        while (lineEnd != std::string_view::npos) {
            const std::size_t lineStart = lineEnd + 2;
            lineEnd = head.find("\r\n", lineStart);
            const std::string_view line = head.substr(lineStart, lineEnd - lineStart);
            const std::size_t colon = line.find(':');
            if (colon == std::string_view::npos)
                continue;
            const std::string_view name = line.substr(0, colon);
            const std::string_view value = trim(line.substr(colon + 1));
            if (equalsIgnoringCase(name, "content-length")) {
                const auto length =
                    std::from_chars(value.data(), value.data() + value.size(), m_remaining);
                if (length.ec != std::errc())
                    return false;
                haveLength = true;
            } else if (equalsIgnoringCase(name, "transfer-encoding")) {
                m_chunked = value.find("chunked") != std::string_view::npos;
            } else if (equalsIgnoringCase(name, "connection")) {
                m_closeAfter = equalsIgnoringCase(value, "close");
            }
        }
        // An answer delimited only by the connection closing cannot be kept alive; the
        // benchmark treats it as an error rather than measure reconnects.
        return m_chunked || haveLength || m_status == 204 || m_status == 304;
    }

    State m_state = State::Head;
    int m_status = 0;
    bool m_chunked = false;
    bool m_closeAfter = false;
    std::size_t m_remaining = 0;
    std::string m_body;
};

// ---------------------------------------------------------------------------------------------
// One scenario

struct Target {
    std::string name; // "direct" or "via"
    std::string host;
    std::uint16_t port = 0;
    int serverPid = 0;    // the process answering, whose CPU time is measured; 0: not measured
    int serverThread = 0; // one thread of it measured alone too (Switchyard's engine); 0: none
    std::string hostPort() const { return host + ':' + std::to_string(port); }
};

struct Scenario {
    const Target *target = nullptr;
    bool stream = false;
    int connections = 1;
};

struct Samples {
    std::vector<std::int64_t> latencyNs;
    std::vector<std::int64_t> firstTokenNs;
    std::uint64_t errors = 0;
    std::uint64_t reconnects = 0;
    std::string firstError;

    void recordError(std::string description)
    {
        ++errors;
        if (firstError.empty())
            firstError = std::move(description);
    }
};

struct Window {
    Clock::time_point measureFrom;
    Clock::time_point measureUntil;
};

int connectTo(const Target &target)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(target.port);
    if (inet_pton(AF_INET, target.host.c_str(), &address.sin_addr) != 1 ||
        connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        const int error = errno; // for the caller's message; close() may overwrite it
        close(fd);
        errno = error;
        return -1;
    }
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

struct ClientConnection {
    int fd = -1;
    std::size_t requestSent = 0;
    bool inFlight = false;
    bool sawFirstEvent = false;
    bool watchingWritable = false;
    Clock::time_point sentAt;
    Clock::time_point firstEventAt;
    std::string input;
    std::size_t parsed = 0;
    AnswerReader reader;
};

// Runs its share of a scenario's connections on one epoll loop.
class LoadThread {
public:
    LoadThread(const Scenario &scenario, const std::string &request, int connections, Window window)
        : m_scenario(scenario), m_request(request), m_window(window),
          m_connections(std::size_t(connections))
    {}

    Samples &samples() { return m_samples; }

    void run()
    {
        m_epoll = epoll_create1(EPOLL_CLOEXEC);
        if (m_epoll < 0) {
            m_samples.recordError("epoll_create1 failed");
            return;
        }
        for (ClientConnection &connection : m_connections) {
            if (!open(connection))
                return shutdown();
        }
        for (ClientConnection &connection : m_connections)
            sendNext(connection);

        epoll_event events[128];
        Clock::time_point drainDeadline{};
        for (;;) {
            const Clock::time_point now = Clock::now();
            if (!m_stopping && now >= m_window.measureUntil) {
                m_stopping = true;
                drainDeadline = now + kDrainLimit;
            }
            if (m_stopping && (m_inFlight == 0 || now >= drainDeadline))
                break;
            const auto wakeAt = m_stopping ? drainDeadline : m_window.measureUntil;
            const auto waitMs = std::chrono::ceil<std::chrono::milliseconds>(wakeAt - now);
            const int count =
                epoll_wait(m_epoll, events, 128, int(std::clamp<long>(waitMs.count(), 0, 100)));
            if (count < 0 && errno != EINTR) {
                m_samples.recordError(std::string("epoll_wait: ") + std::strerror(errno));
                break;
            }
            for (int i = 0; i < count; ++i) {
                ClientConnection &connection = m_connections[std::size_t(events[i].data.u64)];
                if (events[i].events & EPOLLOUT)
                    writeRequest(connection);
                if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
                    readAnswer(connection);
            }
        }
        shutdown();
    }

private:
    bool open(ClientConnection &connection)
    {
        connection.fd = connectTo(*m_scenario.target);
        if (connection.fd < 0) {
            m_samples.recordError("cannot connect to " + m_scenario.target->hostPort() + ": " +
                                  std::strerror(errno));
            return false;
        }
        epoll_event event{};
        event.events = EPOLLIN | EPOLLRDHUP;
        event.data.u64 = std::uint64_t(&connection - m_connections.data());
        if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, connection.fd, &event) != 0) {
            m_samples.recordError("epoll_ctl failed");
            return false;
        }
        connection.watchingWritable = false;
        connection.input.clear();
        connection.parsed = 0;
        connection.reader.reset();
        return true;
    }

    void closeConnection(ClientConnection &connection)
    {
        if (connection.fd < 0)
            return;
        epoll_ctl(m_epoll, EPOLL_CTL_DEL, connection.fd, nullptr);
        close(connection.fd);
        connection.fd = -1;
        if (connection.inFlight) {
            connection.inFlight = false;
            --m_inFlight;
        }
    }

    // The peer closed or the answer was unreadable: start over on a new connection.
    void reconnect(ClientConnection &connection)
    {
        closeConnection(connection);
        if (m_stopping)
            return;
        ++m_samples.reconnects;
        if (open(connection))
            sendNext(connection);
    }

    void sendNext(ClientConnection &connection)
    {
        connection.inFlight = true;
        ++m_inFlight;
        connection.requestSent = 0;
        connection.sawFirstEvent = false;
        connection.sentAt = Clock::now();
        writeRequest(connection);
    }

    void writeRequest(ClientConnection &connection)
    {
        while (connection.inFlight && connection.requestSent < m_request.size()) {
            const ssize_t sent = send(connection.fd, m_request.data() + connection.requestSent,
                                      m_request.size() - connection.requestSent, MSG_NOSIGNAL);
            if (sent > 0) {
                connection.requestSent += std::size_t(sent);
                continue;
            }
            if (sent < 0 && errno == EINTR)
                continue;
            if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                watchWritable(connection, true);
                return;
            }
            m_samples.recordError(std::string("send: ") + std::strerror(errno));
            return reconnect(connection);
        }
        watchWritable(connection, false);
    }

    void watchWritable(ClientConnection &connection, bool writable)
    {
        if (connection.watchingWritable == writable)
            return;
        connection.watchingWritable = writable;
        epoll_event event{};
        event.events = EPOLLIN | EPOLLRDHUP | (writable ? EPOLLOUT : 0u);
        event.data.u64 = std::uint64_t(&connection - m_connections.data());
        epoll_ctl(m_epoll, EPOLL_CTL_MOD, connection.fd, &event);
    }

    void readAnswer(ClientConnection &connection)
    {
        char buffer[kReadChunkBytes];
        bool peerClosed = false;
        for (;;) {
            const ssize_t got = recv(connection.fd, buffer, sizeof buffer, 0);
            if (got > 0) {
                connection.input.append(buffer, std::size_t(got));
                continue;
            }
            if (got < 0 && errno == EINTR)
                continue;
            if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                peerClosed = true;
            break;
        }
        const Clock::time_point now = Clock::now();
        if (connection.inFlight) {
            const AnswerReader::Progress progress =
                connection.reader.advance(connection.input, connection.parsed);
            if (m_scenario.stream && !connection.sawFirstEvent &&
                connection.reader.body().find("data:") != std::string::npos) {
                connection.sawFirstEvent = true;
                connection.firstEventAt = now;
            }
            if (progress == AnswerReader::Progress::Complete)
                return finish(connection, now);
            if (progress == AnswerReader::Progress::Malformed) {
                m_samples.recordError("malformed HTTP answer");
                return reconnect(connection);
            }
        }
        if (peerClosed) {
            if (connection.inFlight)
                m_samples.recordError("connection closed before the answer was complete");
            reconnect(connection);
        }
    }

    void finish(ClientConnection &connection, Clock::time_point now)
    {
        connection.inFlight = false;
        --m_inFlight;
        const AnswerReader &reader = connection.reader;
        const bool counted = now >= m_window.measureFrom && now < m_window.measureUntil;
        std::string problem;
        if (reader.status() != 200) {
            problem =
                "HTTP " + std::to_string(reader.status()) + ": " + reader.body().substr(0, 300);
        } else if (m_scenario.stream) {
            if (reader.body().find("data: [DONE]") == std::string::npos)
                problem = "stream without data: [DONE]: " + reader.body().substr(0, 300);
        } else if (reader.body().find("\"choices\"") == std::string::npos) {
            problem = "answer without choices: " + reader.body().substr(0, 300);
        }
        if (!problem.empty()) {
            if (counted)
                m_samples.recordError(std::move(problem));
        } else if (counted) {
            m_samples.latencyNs.push_back(nanoseconds(now - connection.sentAt).count());
            if (m_scenario.stream) {
                const auto first = connection.sawFirstEvent ? connection.firstEventAt : now;
                m_samples.firstTokenNs.push_back(nanoseconds(first - connection.sentAt).count());
            }
        }

        const bool closeAfter = reader.closeAfter();
        connection.input.erase(0, connection.parsed);
        connection.parsed = 0;
        connection.reader.reset();
        if (closeAfter)
            return reconnect(connection);
        if (!m_stopping && Clock::now() < m_window.measureUntil)
            sendNext(connection);
    }

    void shutdown()
    {
        for (ClientConnection &connection : m_connections)
            closeConnection(connection);
        if (m_epoll >= 0)
            close(m_epoll);
        m_epoll = -1;
    }

    const Scenario &m_scenario;
    const std::string &m_request;
    Window m_window;
    std::vector<ClientConnection> m_connections;
    Samples m_samples;
    int m_epoll = -1;
    int m_inFlight = 0;
    bool m_stopping = false;
};

struct Measurement {
    Scenario scenario;
    double seconds = 0;
    std::uint64_t completed = 0;
    std::uint64_t errors = 0;
    std::uint64_t reconnects = 0;
    std::string firstError;
    double requestsPerSecond = 0;
    double p50Ms = 0;
    double p99Ms = 0;
    double firstTokenP50Ms = NAN;
    double firstTokenP99Ms = NAN;
    double serverCpuMicrosPerRequest = NAN;
    double serverThreadCpuMicrosPerRequest = NAN;
    double generatorCpuMicrosPerRequest = NAN;
};

// User plus system CPU time a process, or one of its threads, has used so far, in seconds;
// negative when unknown.
double cpuSeconds(const std::string &path);
double processCpuSeconds(int pid)
{
    return pid > 0 ? cpuSeconds("/proc/" + std::to_string(pid) + "/stat") : -1;
}
double threadCpuSeconds(int pid, int thread)
{
    return pid > 0 && thread > 0 ? cpuSeconds("/proc/" + std::to_string(pid) + "/task/" +
                                              std::to_string(thread) + "/stat")
                                 : -1;
}

// The id of the thread of `pid` whose name (as the kernel keeps it, at most 15 bytes) is `name`;
// 0 when there is none.
int findThread(int pid, const std::string &name)
{
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR *directory = opendir(tasks.c_str());
    if (!directory)
        return 0;
    int found = 0;
    while (const dirent *entry = readdir(directory)) {
        if (entry->d_name[0] == '.')
            continue;
        std::FILE *file = std::fopen((tasks + '/' + entry->d_name + "/comm").c_str(), "r");
        if (!file)
            continue;
        char comm[64] = {};
        const bool read = std::fgets(comm, sizeof comm, file) != nullptr;
        std::fclose(file);
        std::string threadName = read ? comm : "";
        if (!threadName.empty() && threadName.back() == '\n')
            threadName.pop_back();
        if (threadName == name.substr(0, 15)) {
            found = std::atoi(entry->d_name);
            break;
        }
    }
    closedir(directory);
    return found;
}

double cpuSeconds(const std::string &path)
{
    std::FILE *file = std::fopen(path.c_str(), "r");
    if (!file)
        return -1;
    char text[1024];
    const std::size_t length = std::fread(text, 1, sizeof text - 1, file);
    std::fclose(file);
    text[length] = '\0';
    // Fields after the command name, which is in parentheses and may itself hold spaces:
    // state is field 3, utime field 14 and stime field 15.
    const char *fields = std::strrchr(text, ')');
    unsigned long long userTicks = 0;
    unsigned long long systemTicks = 0;
    if (!fields || std::sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
                               &userTicks, &systemTicks) != 2)
        return -1;
    return double(userTicks + systemTicks) / double(sysconf(_SC_CLK_TCK));
}

// Nearest-rank percentile of a sorted list.
double percentileMs(const std::vector<std::int64_t> &sorted, double fraction)
{
    if (sorted.empty())
        return NAN;
    const auto rank = std::size_t(std::ceil(fraction * double(sorted.size())));
    return double(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]) / 1e6;
}

Measurement runScenario(const Scenario &scenario, int threadLimit, double warmupSeconds,
                        double durationSeconds, const std::string &model)
{
    const std::string request = chatRequest(scenario.target->hostPort(), model, scenario.stream);
    const int threadCount = std::clamp(threadLimit, 1, scenario.connections);
    const auto start = Clock::now();
    Window window;
    window.measureFrom = start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(warmupSeconds));
    window.measureUntil = window.measureFrom + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(durationSeconds));

    std::vector<LoadThread> loads;
    loads.reserve(std::size_t(threadCount));
    for (int i = 0; i < threadCount; ++i) {
        const int share =
            scenario.connections / threadCount + (i < scenario.connections % threadCount ? 1 : 0);
        loads.emplace_back(scenario, request, share, window);
    }
    std::vector<std::thread> threads;
    for (LoadThread &load : loads)
        threads.emplace_back([&load] { load.run(); });
    // The serving process's CPU time over the measured window alone: a cost per request that
    // holds up even when other work on the machine bends the throughput figures.
    std::this_thread::sleep_until(window.measureFrom);
    const Target &target = *scenario.target;
    const double cpuBefore = processCpuSeconds(target.serverPid);
    const double threadCpuBefore = threadCpuSeconds(target.serverPid, target.serverThread);
    const double ownCpuBefore = processCpuSeconds(getpid());
    std::this_thread::sleep_until(window.measureUntil);
    const double cpuAfter = processCpuSeconds(target.serverPid);
    const double threadCpuAfter = threadCpuSeconds(target.serverPid, target.serverThread);
    const double ownCpuAfter = processCpuSeconds(getpid());
    for (std::thread &thread : threads)
        thread.join();

    Samples all;
    for (LoadThread &load : loads) {
        Samples &samples = load.samples();
        all.latencyNs.insert(all.latencyNs.end(), samples.latencyNs.begin(),
                             samples.latencyNs.end());
        all.firstTokenNs.insert(all.firstTokenNs.end(), samples.firstTokenNs.begin(),
                                samples.firstTokenNs.end());
        all.errors += samples.errors;
        all.reconnects += samples.reconnects;
        if (all.firstError.empty())
            all.firstError = samples.firstError;
    }
    std::sort(all.latencyNs.begin(), all.latencyNs.end());
    std::sort(all.firstTokenNs.begin(), all.firstTokenNs.end());

    Measurement result;
    result.scenario = scenario;
    result.seconds = durationSeconds;
    result.completed = all.latencyNs.size();
    result.errors = all.errors;
    result.reconnects = all.reconnects;
    result.firstError = all.firstError;
    result.requestsPerSecond = double(result.completed) / durationSeconds;
    result.p50Ms = percentileMs(all.latencyNs, 0.50);
    result.p99Ms = percentileMs(all.latencyNs, 0.99);
    if (scenario.stream) {
        result.firstTokenP50Ms = percentileMs(all.firstTokenNs, 0.50);
        result.firstTokenP99Ms = percentileMs(all.firstTokenNs, 0.99);
    }
    if (cpuBefore >= 0 && cpuAfter >= 0 && result.completed > 0)
        result.serverCpuMicrosPerRequest = (cpuAfter - cpuBefore) * 1e6 / double(result.completed);
    if (threadCpuBefore >= 0 && threadCpuAfter >= 0 && result.completed > 0) {
        result.serverThreadCpuMicrosPerRequest =
            (threadCpuAfter - threadCpuBefore) * 1e6 / double(result.completed);
    }
    if (ownCpuBefore >= 0 && ownCpuAfter >= 0 && result.completed > 0) {
        result.generatorCpuMicrosPerRequest =
            (ownCpuAfter - ownCpuBefore) * 1e6 / double(result.completed);
    }
    return result;
}

// ---------------------------------------------------------------------------------------------
// Report

const char *modeName(bool stream)
{
    return stream ? "streamed" : "non-streamed";
}

std::string milliseconds(double value)
{
    if (std::isnan(value))
        return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", value);
    return text;
}

std::string signedMilliseconds(double value)
{
    if (std::isnan(value))
        return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%+.3f", value);
    return text;
}

void printRaw(const std::vector<Measurement> &measurements)
{
    std::printf("| target | mode | connections | requests/s | p50 ms | p99 ms | TTFT p50 ms "
                "| TTFT p99 ms | server CPU µs/request | of which engine thread | "
                "generator CPU µs/request | errors |\n");
    std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                "|\n");
    const auto micros = [](double value) {
        char text[32] = "-";
        if (!std::isnan(value))
            std::snprintf(text, sizeof text, "%.1f", value);
        return std::string(text);
    };
    for (const Measurement &m : measurements) {
        std::printf("| %s | %s | %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %llu |\n",
                    m.scenario.target->name.c_str(), modeName(m.scenario.stream),
                    m.scenario.connections, m.requestsPerSecond, milliseconds(m.p50Ms).c_str(),
                    milliseconds(m.p99Ms).c_str(), milliseconds(m.firstTokenP50Ms).c_str(),
                    milliseconds(m.firstTokenP99Ms).c_str(),
                    micros(m.serverCpuMicrosPerRequest).c_str(),
                    micros(m.serverThreadCpuMicrosPerRequest).c_str(),
                    micros(m.generatorCpuMicrosPerRequest).c_str(),
                    static_cast<unsigned long long>(m.errors));
    }
}

struct Pair {
    const Measurement *direct;
    const Measurement *via;
};

// The aims from the issue that asked for this benchmark.
constexpr double kThroughputAim = 0.15;            // at 64 connections, via/direct at least
constexpr double kAddedMedianAimMs = 0.15;         // at 1 connection, at most
constexpr double kFirstTokenDifferenceAimMs = 0.5; // streamed, at 1 connection, at most

void printComparison(const std::vector<Pair> &pairs)
{
    std::printf("| mode | connections | throughput via/direct | added p50 ms | added p99 ms "
                "| added TTFT p50 ms |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const Pair &pair : pairs) {
        const Measurement &d = *pair.direct;
        const Measurement &v = *pair.via;
        std::printf("| %s | %d | %.1f %% | %s | %s | %s |\n", modeName(d.scenario.stream),
                    d.scenario.connections, 100.0 * v.requestsPerSecond / d.requestsPerSecond,
                    signedMilliseconds(v.p50Ms - d.p50Ms).c_str(),
                    signedMilliseconds(v.p99Ms - d.p99Ms).c_str(),
                    signedMilliseconds(v.firstTokenP50Ms - d.firstTokenP50Ms).c_str());
    }

    std::printf("\n");
    for (const Pair &pair : pairs) {
        const Measurement &d = *pair.direct;
        const Measurement &v = *pair.via;
        const char *mode = modeName(d.scenario.stream);
        if (d.scenario.connections == 64) {
            const double ratio = v.requestsPerSecond / d.requestsPerSecond;
            std::printf("- %s, 64 connections: throughput %.1f %% of direct (aim: at least "
                        "%.0f %%): %s\n",
                        mode, 100.0 * ratio, 100.0 * kThroughputAim,
                        ratio >= kThroughputAim ? "met" : "missed");
        }
        if (d.scenario.connections == 1) {
            const double added = v.p50Ms - d.p50Ms;
            std::printf("- %s, 1 connection: median %.3f ms added (aim: at most %.2f ms): %s\n",
                        mode, added, kAddedMedianAimMs,
                        added <= kAddedMedianAimMs ? "met" : "missed");
            if (d.scenario.stream) {
                const double difference = v.firstTokenP50Ms - d.firstTokenP50Ms;
                std::printf("- streamed, 1 connection: time to first token %.3f ms after direct "
                            "(aim: within %.1f ms): %s\n",
                            difference, kFirstTokenDifferenceAimMs,
                            difference <= kFirstTokenDifferenceAimMs ? "met" : "missed");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Command line

[[noreturn]] void usage(int exitCode)
{
    std::fprintf(exitCode == 0 ? stdout : stderr,
                 "usage: load_bench --direct HOST:PORT [--via HOST:PORT] [--connections 1,64]\n"
                 "                  [--duration-s 5] [--warmup-s 1] [--threads N] "
                 "[--model NAME]\n"
                 "                  [--direct-pid PID] [--via-pid PID] [--via-thread NAME]\n"
                 "Runs non-streamed and streamed chat completions against each target at each\n"
                 "connection count and prints Markdown tables; with --via also the ratios of\n"
                 "Switchyard (via) to the provider it fronts (direct). With a PID, the CPU time\n"
                 "that process spends per request is reported for that target; with\n"
                 "--via-thread also that of the via process's thread of that name.\n");
    std::exit(exitCode);
}

std::optional<Target> parseTarget(std::string name, std::string_view text)
{
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    Target target;
    target.name = std::move(name);
    target.host = std::string(text.substr(0, colon));
    const std::string_view portText = text.substr(colon + 1);
    unsigned port = 0;
    const auto parsed = std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (parsed.ec != std::errc() || parsed.ptr != portText.data() + portText.size() || port == 0 ||
        port > 65535)
        return std::nullopt;
    target.port = std::uint16_t(port);
    sockaddr_in probe{};
    if (inet_pton(AF_INET, target.host.c_str(), &probe.sin_addr) != 1)
        return std::nullopt;
    return target;
}

double parseSeconds(const char *text)
{
    char *end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(value > 0) || value > 600) {
        std::fprintf(stderr, "load_bench: `%s` must be a number of seconds above 0\n", text);
        usage(2);
    }
    return value;
}

int parseCount(std::string_view text, int maximum)
{
    int value = 0;
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
    if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() || value < 1 ||
        value > maximum) {
        std::fprintf(stderr, "load_bench: `%.*s` must be a whole number from 1 to %d\n",
                     int(text.size()), text.data(), maximum);
        usage(2);
    }
    return value;
}

} // namespace

int main(int argc, char **argv)
{
    std::optional<Target> direct;
    std::optional<Target> via;
    int directPid = 0;
    int viaPid = 0;
    std::string viaThread;
    std::vector<int> connectionCounts{1, 64};
    double durationSeconds = 5.0;
    double warmupSeconds = 1.0;
    int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    std::string model = "bench-model";

    for (int i = 1; i < argc; ++i) {
        const std::string_view option(argv[i]);
        if (option == "--help" || option == "-h")
            usage(0);
        if (i + 1 >= argc)
            usage(2);
        const char *value = argv[++i];
        if (option == "--direct" || option == "--via") {
            auto target = parseTarget(std::string(option.substr(2)), value);
            if (!target) {
                std::fprintf(stderr,
                             "load_bench: %s wants an IPv4 HOST:PORT such as "
                             "127.0.0.1:8080, got `%s`\n",
                             argv[i - 1], value);
                return 2;
            }
            (option == "--direct" ? direct : via) = std::move(target);
        } else if (option == "--direct-pid" || option == "--via-pid") {
            (option == "--direct-pid" ? directPid : viaPid) = parseCount(value, 1 << 30);
        } else if (option == "--via-thread") {
            viaThread = value;
        } else if (option == "--connections") {
            connectionCounts.clear();
            std::string_view list(value);
            while (!list.empty()) {
                const std::size_t comma = list.find(',');
                connectionCounts.push_back(parseCount(list.substr(0, comma), 4096));
                list =
                    comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
            }
            if (connectionCounts.empty())
                usage(2);
        } else if (option == "--duration-s") {
            durationSeconds = parseSeconds(value);
        } else if (option == "--warmup-s") {
            warmupSeconds = parseSeconds(value);
        } else if (option == "--threads") {
            threads = parseCount(value, 256);
        } else if (option == "--model") {
            model = value;
        } else {
            usage(2);
        }
    }
    if (!direct)
        usage(2);
    direct->serverPid = directPid;
    if (via) {
        via->serverPid = viaPid;
        if (!viaThread.empty() && viaPid > 0) {
            via->serverThread = findThread(viaPid, viaThread);
            if (via->serverThread == 0)
                std::fprintf(stderr, "load_bench: process %d has no thread named `%s`\n", viaPid,
                             viaThread.c_str());
        }
    }

    // Direct and via run back to back for each case, so drift in the machine (thermal, other
    // load) lands on both sides of a ratio alike.
    std::vector<Measurement> measurements;
    std::vector<std::pair<std::size_t, std::size_t>> pairIndexes;
    bool failed = false;
    for (bool stream : {false, true}) {
        for (int connections : connectionCounts) {
            std::size_t directIndex = 0;
            for (const Target *target : {&*direct, via ? &*via : nullptr}) {
                if (!target)
                    continue;
                const Scenario scenario{target, stream, connections};
                std::fprintf(stderr,
                             "load_bench: %-6s %-12s %3d connection(s): ", target->name.c_str(),
                             modeName(stream), connections);
                std::fflush(stderr);
                Measurement m =
                    runScenario(scenario, threads, warmupSeconds, durationSeconds, model);
                std::fprintf(stderr, "%.0f requests/s, p50 %s ms, p99 %s ms, %llu error(s)\n",
                             m.requestsPerSecond, milliseconds(m.p50Ms).c_str(),
                             milliseconds(m.p99Ms).c_str(),
                             static_cast<unsigned long long>(m.errors));
                if (!m.firstError.empty())
                    std::fprintf(stderr, "load_bench:   first error: %s\n", m.firstError.c_str());
                failed = failed || m.errors > 0 || m.completed == 0;
                if (target == &*direct)
                    directIndex = measurements.size();
                else
                    pairIndexes.emplace_back(directIndex, measurements.size());
                measurements.push_back(std::move(m));
            }
        }
    }

    std::printf("%g s measured per scenario after a %g s warm-up; latency and TTFT in "
                "milliseconds, from writing the request to reading the whole answer (or its "
                "first `data:` event).\n\n",
                durationSeconds, warmupSeconds);
    printRaw(measurements);
    if (!pairIndexes.empty()) {
        std::vector<Pair> pairs;
        for (const auto &[d, v] : pairIndexes)
            pairs.push_back({&measurements[d], &measurements[v]});
        std::printf("\n");
        printComparison(pairs);
    }
    std::fflush(stdout);
    return failed ? 1 : 0;
}
