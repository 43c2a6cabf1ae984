// streams_bench: opens N streamed chat requests at once against one target and follows every
// stream to its end, for the concurrent-streams sweep (scripts/bench-streams.sh).
//
// Plain C++ on one epoll loop, so that following ten thousand streams costs this process far
// less than the gateway it measures. Each connection sends one request with "stream": true,
// reads the chunked event stream incrementally and counts its `data:` events; a stream is
// complete when it brought `data: [DONE]` and the final chunk.
//
//   streams_bench --target 127.0.0.1:PORT --streams N [--rounds R] [--pid PID] [--timeout-s S]
//                 [--label TEXT] [--context-bytes B] [--keep-alive]
//
// --context-bytes B adds an earlier turn of B bytes to every request, as an agent's request
// carries its conversation so far.
//
// With --rounds R the N streams are opened R times, each round after the last one ended, and
// the figures are over all rounds: `--streams 1 --rounds 200` measures the time to first token
// of one stream at a time, with nothing queued behind it. Each round opens new connections,
// unless --keep-alive: then each stream's connection, once its answer is complete, carries the
// same stream's request of the next round, as an SDK's connection pool would.
//
// Prints one line, `RESULT key=value ...`: streams completed, errors by kind, events received,
// time to first event (from the request written to the first `data:` bytes) p50/p99, stream
// duration p50/p99, wall time, and with --pid the CPU time that process spent during the run
// (from /proc/PID/stat) per event received, and its peak resident set (VmHWM).

#include "http_text.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

std::int64_t monotonicUs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
}

// `contextBytes` adds an earlier turn of that many bytes, as an agent's request carries its
// conversation so far: what a held stream costs then depends on what is kept of its request.
std::string chatBody(std::size_t contextBytes)
{
    std::string body =
        R"({"model":"bench-model","stream":true,"messages":[)"
        R"({"role":"system","content":"You are a careful code reviewer. Answer briefly."},)";
    if (contextBytes > 0) {
        body += R"({"role":"assistant","content":")";
        body.append(contextBytes, 'x');
        body += R"("},)";
    }
    body +=
        R"({"role":"user","content":"Why does this function leak a socket when connect fails?"}]})";
    return body;
}

std::string requestText(std::string_view host, std::size_t contextBytes)
{
    const std::string body = chatBody(contextBytes);
    std::string request = "POST /v1/chat/completions HTTP/1.1\r\nHost: ";
    request += host;
    request += "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
               "Authorization: Bearer bench\r\nContent-Length: ";
    request += std::to_string(body.size());
    request += "\r\n\r\n";
    request += body;
    return request;
}

enum class Phase { Connecting, Sending, Head, ErrorBody, ChunkSize, ChunkData, ChunkDataEnd, Done };

struct Stream {
    int fd = -1;
    Phase phase = Phase::Connecting;
    std::size_t sent = 0;
    std::string buffer; // undecoded bytes: the head, or a chunk-size line in pieces
    std::string line;   // the current event-stream line, across chunks
    std::size_t chunkLeft = 0;
    int status = 0;
    std::size_t errorBodyLength = 0;
    int events = 0;
    bool sawDone = false;
    std::int64_t writtenUs = 0;
    std::int64_t firstEventUs = 0;
    std::int64_t endUs = 0;
};

struct Totals {
    int completed = 0;
    long long events = 0;
    std::map<std::string, int> errors;
    std::vector<std::int64_t> ttftUs;
    std::vector<std::int64_t> durationUs;
};

long long processCpuTicks(int pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // The command name may hold spaces: fields are counted from after its closing parenthesis.
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos)
        return -1;
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    long long utime = 0;
    long long stime = 0;
    for (int index = 3; fields >> field; ++index) {
        if (index == 14)
            utime = std::atoll(field.c_str());
        if (index == 15) {
            stime = std::atoll(field.c_str());
            break;
        }
    }
    return utime + stime;
}

long long peakResidentKb(int pid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmHWM:", 0) == 0)
            return std::atoll(line.c_str() + 6);
    }
    return -1;
}

std::string lowerCase(std::string_view text)
{
    std::string lower(text);
    for (char &c : lower)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return lower;
}

double percentileMs(std::vector<std::int64_t> values, double fraction)
{
    if (values.empty())
        return -1;
    std::sort(values.begin(), values.end());
    const std::size_t index =
        std::min(values.size() - 1, std::size_t(fraction * double(values.size() - 1) + 0.5));
    return double(values[index]) / 1000.0;
}

class Driver {
public:
    Driver(sockaddr_in target, std::string request, bool keepAlive)
        : m_target(target), m_request(std::move(request)), m_keepAlive(keepAlive)
    {
        m_epoll = epoll_create1(EPOLL_CLOEXEC);
    }
    ~Driver()
    {
        for (const Stream &stream : m_streams) {
            if (stream.fd >= 0)
                close(stream.fd);
        }
        close(m_epoll);
    }
    Driver(const Driver &) = delete;
    Driver &operator=(const Driver &) = delete;

    Totals run(int streams, int timeoutS)
    {
        m_streams.resize(std::size_t(streams));
        m_open = 0;
        for (int i = 0; i < streams; ++i)
            start(i);
        const std::int64_t deadline = monotonicUs() + std::int64_t(timeoutS) * 1000000;
        std::vector<epoll_event> ready(1024);
        while (m_open > 0) {
            const std::int64_t left = deadline - monotonicUs();
            if (left <= 0)
                break;
            const int count =
                epoll_wait(m_epoll, ready.data(), int(ready.size()), int(left / 1000) + 1);
            for (int i = 0; i < count; ++i)
                handle(int(ready[std::size_t(i)].data.u32), ready[std::size_t(i)].events);
        }
        for (Stream &stream : m_streams) {
            if (stream.fd >= 0 && stream.phase != Phase::Done)
                fail(stream, "timeout");
        }
        return std::exchange(m_totals, {});
    }

private:
    void start(int index)
    {
        Stream &stream = m_streams[std::size_t(index)];
        const int kept = stream.fd;
        stream = Stream{};
        if (kept >= 0) {
            // Kept alive from the last round: the same connection sends the next request.
            stream.fd = kept;
            stream.phase = Phase::Sending;
            ++m_open;
            watch(index, EPOLL_CTL_MOD);
            return;
        }
        stream.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (stream.fd < 0) {
            ++m_totals.errors[std::string("socket_") + strerrorname_np(errno)];
            return;
        }
        const int on = 1;
        setsockopt(stream.fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        ++m_open;
        const int result =
            connect(stream.fd, reinterpret_cast<const sockaddr *>(&m_target), sizeof m_target);
        if (result != 0 && errno != EINPROGRESS) {
            fail(stream, std::string("connect_") + strerrorname_np(errno));
            return;
        }
        watch(index, EPOLL_CTL_ADD);
    }

    // Ready to send (connected, or a kept connection idle) and to read.
    void watch(int index, int operation)
    {
        epoll_event event{};
        event.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP;
        event.data.u32 = std::uint32_t(index);
        epoll_ctl(m_epoll, operation, m_streams[std::size_t(index)].fd, &event);
    }

    void fail(Stream &stream, const std::string &kind)
    {
        ++m_totals.errors[kind];
        finish(stream);
    }

    // A completed stream's connection stays open for the next round when kept alive; a failed
    // one is always closed.
    void finish(Stream &stream, bool completed = false)
    {
        if (stream.fd >= 0) {
            if (!(completed && m_keepAlive)) {
                close(stream.fd);
                stream.fd = -1;
            }
            stream.phase = Phase::Done;
            --m_open;
        }
        m_totals.events += stream.events;
        stream.buffer = {};
        stream.line = {};
    }

    void handle(int index, std::uint32_t events)
    {
        Stream &stream = m_streams[std::size_t(index)];
        if (stream.fd < 0)
            return;
        if (stream.phase == Phase::Done) {
            // A kept-alive connection between its requests: closed by the other side, it is
            // not kept any longer (the next round connects again).
            if (events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
                close(stream.fd);
                stream.fd = -1;
            }
            return;
        }
        if (stream.phase == Phase::Connecting) {
            int error = 0;
            socklen_t length = sizeof error;
            getsockopt(stream.fd, SOL_SOCKET, SO_ERROR, &error, &length);
            if (error != 0)
                return fail(stream, std::string("connect_") + strerrorname_np(error));
            if (!(events & EPOLLOUT))
                return;
            stream.phase = Phase::Sending;
        }
        if (stream.phase == Phase::Sending) {
            while (stream.sent < m_request.size()) {
                const ssize_t sent = send(stream.fd, m_request.data() + stream.sent,
                                          m_request.size() - stream.sent, MSG_NOSIGNAL);
                if (sent > 0) {
                    stream.sent += std::size_t(sent);
                } else if (sent < 0 && errno == EAGAIN) {
                    return;
                } else {
                    return fail(stream, errno == ECONNRESET ? "reset" : "send_failed");
                }
            }
            stream.writtenUs = monotonicUs();
            stream.phase = Phase::Head;
            epoll_event event{};
            event.events = EPOLLIN | EPOLLRDHUP;
            event.data.u32 = std::uint32_t(index);
            epoll_ctl(m_epoll, EPOLL_CTL_MOD, stream.fd, &event);
        }
        char bytes[16384];
        for (;;) {
            const ssize_t got = recv(stream.fd, bytes, sizeof bytes, 0);
            if (got > 0) {
                if (!consume(stream, std::string_view(bytes, std::size_t(got))))
                    return;
                continue;
            }
            if (got < 0 && errno == EAGAIN)
                return;
            if (got < 0 && errno == ECONNRESET)
                return fail(stream, stream.phase == Phase::Head ? "reset_before_answer"
                                                                : "reset_mid_stream");
            return fail(stream,
                        stream.phase == Phase::Head ? "closed_before_answer" : "cut_mid_stream");
        }
    }

    // False once the stream is finished or failed (its descriptor is closed).
    bool consume(Stream &stream, std::string_view bytes)
    {
        while (!bytes.empty()) {
            switch (stream.phase) {
            case Phase::Head: {
                stream.buffer.append(bytes);
                bytes = {};
                const std::size_t end = stream.buffer.find("\r\n\r\n");
                if (end == std::string::npos)
                    break;
                const std::string_view head(stream.buffer.data(), end);
                const int status = head.size() > 12 ? std::atoi(head.data() + 9) : 0;
                const std::string rest = stream.buffer.substr(end + 4);
                if (status != 200) {
                    // Read the error's body: its OpenAI error code tells refusals apart.
                    stream.status = status;
                    const std::size_t lengthAt = lowerCase(head).find("content-length:");
                    stream.errorBodyLength =
                        lengthAt == std::string::npos
                            ? 0
                            : std::size_t(std::atoll(head.data() + lengthAt + 15));
                    stream.buffer = rest;
                    stream.phase = Phase::ErrorBody;
                    return consume(stream, {});
                }
                stream.buffer.clear();
                stream.phase = Phase::ChunkSize;
                if (!consume(stream, rest))
                    return false;
                break;
            }
            case Phase::ErrorBody:
                stream.buffer.append(bytes);
                bytes = {};
                break;
            case Phase::ChunkSize: {
                const std::size_t newline = bytes.find('\n');
                if (newline == std::string_view::npos) {
                    stream.buffer.append(bytes);
                    bytes = {};
                    break;
                }
                stream.buffer.append(bytes.substr(0, newline));
                bytes.remove_prefix(newline + 1);
                std::size_t size = 0;
                const std::string_view text = bench::trim(stream.buffer);
                std::from_chars(text.data(), text.data() + text.size(), size, 16);
                stream.buffer.clear();
                if (size == 0) {
                    // The last chunk: the stream is over.
                    stream.endUs = monotonicUs();
                    if (stream.sawDone) {
                        ++m_totals.completed;
                        m_totals.durationUs.push_back(stream.endUs - stream.writtenUs);
                        finish(stream, true);
                    } else {
                        fail(stream, "ended_without_done");
                    }
                    return false;
                }
                stream.chunkLeft = size;
                stream.phase = Phase::ChunkData;
                break;
            }
            case Phase::ChunkData: {
                const std::size_t take = std::min(stream.chunkLeft, bytes.size());
                scanEvents(stream, bytes.substr(0, take));
                bytes.remove_prefix(take);
                stream.chunkLeft -= take;
                if (stream.chunkLeft == 0)
                    stream.phase = Phase::ChunkDataEnd;
                break;
            }
            case Phase::ChunkDataEnd: {
                // The CRLF after a chunk's data, possibly split across reads.
                const std::size_t newline = bytes.find('\n');
                if (newline == std::string_view::npos) {
                    bytes = {};
                    break;
                }
                bytes.remove_prefix(newline + 1);
                stream.phase = Phase::ChunkSize;
                break;
            }
            default:
                return false;
            }
        }
        if (stream.phase == Phase::ErrorBody && stream.buffer.size() >= stream.errorBodyLength) {
            std::string kind = "status_" + std::to_string(stream.status);
            const std::size_t codeAt = stream.buffer.find("\"code\":\"");
            if (codeAt != std::string::npos) {
                const std::size_t start = codeAt + 8;
                const std::size_t end = stream.buffer.find('"', start);
                kind += '_';
                // Appended in place: "_" + substr() trips a false -Wrestrict in GCC 12 at -O3.
                kind.append(stream.buffer, start, end == std::string::npos ? end : end - start);
            }
            fail(stream, kind);
            return false;
        }
        return true;
    }

    void scanEvents(Stream &stream, std::string_view data)
    {
        while (!data.empty()) {
            const std::size_t newline = data.find('\n');
            if (newline == std::string_view::npos) {
                stream.line.append(data);
                return;
            }
            stream.line.append(data.substr(0, newline));
            data.remove_prefix(newline + 1);
            if (stream.line.rfind("data:", 0) == 0) {
                if (stream.events == 0) {
                    stream.firstEventUs = monotonicUs();
                    m_totals.ttftUs.push_back(stream.firstEventUs - stream.writtenUs);
                }
                ++stream.events;
                if (bench::trim(std::string_view(stream.line).substr(5)) == "[DONE]")
                    stream.sawDone = true;
            }
            stream.line.clear();
        }
    }

    sockaddr_in m_target;
    std::string m_request;
    bool m_keepAlive = false;
    int m_epoll = -1;
    int m_open = 0;
    std::vector<Stream> m_streams;
    Totals m_totals;
};

[[noreturn]] void usage(int exitCode)
{
    std::fprintf(exitCode == 0 ? stdout : stderr,
                 "usage: streams_bench --target HOST:PORT --streams N [--rounds R] [--pid PID] "
                 "[--timeout-s S] [--label TEXT] [--context-bytes B] [--keep-alive]\n");
    std::exit(exitCode);
}

} // namespace

int main(int argc, char **argv)
{
    std::string target;
    std::string label = "run";
    int streams = 100;
    int rounds = 1;
    int pid = 0;
    int timeoutS = 120;
    long contextBytes = 0;
    bool keepAlive = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view option(argv[i]);
        if (option == "--help" || option == "-h")
            usage(0);
        if (option == "--keep-alive") {
            keepAlive = true;
            continue;
        }
        if (i + 1 >= argc)
            usage(2);
        const char *value = argv[++i];
        if (option == "--target")
            target = value;
        else if (option == "--streams")
            streams = std::atoi(value);
        else if (option == "--rounds")
            rounds = std::atoi(value);
        else if (option == "--pid")
            pid = std::atoi(value);
        else if (option == "--timeout-s")
            timeoutS = std::atoi(value);
        else if (option == "--label")
            label = value;
        else if (option == "--context-bytes")
            contextBytes = std::atol(value);
        else
            usage(2);
    }
    const std::size_t colon = target.rfind(':');
    if (colon == std::string::npos || streams < 1 || rounds < 1 || timeoutS < 1 || contextBytes < 0)
        usage(2);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(std::uint16_t(std::atoi(target.c_str() + colon + 1)));
    if (inet_pton(AF_INET, target.substr(0, colon).c_str(), &address.sin_addr) != 1)
        usage(2);

    rusage ownBefore{};
    getrusage(RUSAGE_SELF, &ownBefore);
    const long long serverTicksBefore = pid > 0 ? processCpuTicks(pid) : -1;
    const std::int64_t startUs = monotonicUs();
    Totals totals;
    // One driver for every round: with --keep-alive its streams' connections carry over.
    Driver driver(address, requestText(target, std::size_t(contextBytes)), keepAlive);
    for (int round = 0; round < rounds; ++round) {
        Totals one = driver.run(streams, timeoutS);
        totals.completed += one.completed;
        totals.events += one.events;
        for (const auto &[kind, count] : one.errors)
            totals.errors[kind] += count;
        totals.ttftUs.insert(totals.ttftUs.end(), one.ttftUs.begin(), one.ttftUs.end());
        totals.durationUs.insert(totals.durationUs.end(), one.durationUs.begin(),
                                 one.durationUs.end());
    }
    const std::int64_t wallUs = monotonicUs() - startUs;
    const long long serverTicksAfter = pid > 0 ? processCpuTicks(pid) : -1;
    rusage ownAfter{};
    getrusage(RUSAGE_SELF, &ownAfter);

    const auto microseconds = [](const timeval &time) {
        return double(time.tv_sec) * 1e6 + double(time.tv_usec);
    };
    const double ownCpuUs = microseconds(ownAfter.ru_utime) + microseconds(ownAfter.ru_stime) -
                            microseconds(ownBefore.ru_utime) - microseconds(ownBefore.ru_stime);
    const double ticksPerSecond = double(sysconf(_SC_CLK_TCK));
    const double serverCpuUs =
        pid > 0 ? double(serverTicksAfter - serverTicksBefore) / ticksPerSecond * 1e6 : -1;
    const double events = double(std::max(1LL, totals.events));

    std::string errors;
    int errorCount = 0;
    for (const auto &[kind, count] : totals.errors) {
        errors += (errors.empty() ? "" : ",") + kind + ":" + std::to_string(count);
        errorCount += count;
    }
    std::printf(
        "RESULT label=%s streams=%d rounds=%d completed=%d errors=%d error_kinds=%s events=%lld "
        "wall_s=%.2f ttft_p50_ms=%.2f ttft_p99_ms=%.2f duration_p50_ms=%.0f "
        "duration_p99_ms=%.0f server_cpu_s=%.2f server_cpu_us_per_event=%.1f "
        "server_peak_rss_mb=%.1f driver_cpu_us_per_event=%.1f\n",
        label.c_str(), streams, rounds, totals.completed, errorCount,
        errors.empty() ? "-" : errors.c_str(), totals.events, double(wallUs) / 1e6,
        percentileMs(totals.ttftUs, 0.5), percentileMs(totals.ttftUs, 0.99),
        percentileMs(totals.durationUs, 0.5), percentileMs(totals.durationUs, 0.99),
        serverCpuUs / 1e6, pid > 0 ? serverCpuUs / events : -1.0,
        pid > 0 ? double(peakResidentKb(pid)) / 1024.0 : -1.0, ownCpuUs / events);
    return 0;
}
