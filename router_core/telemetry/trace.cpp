#include "telemetry/trace.h"

#include <QRandomGenerator>
#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

namespace switchyard::telemetry {

namespace {
// What a credential header's value is in a trace: one shared array, not one per header.
const QByteArray kRedacted = QByteArrayLiteral("[redacted]");

// Live text is for a person reading along; a runaway stream keeps its last part only.
constexpr qsizetype kMaxLiveDataBytes = 1024 * 1024;
} // namespace

bool isCredentialHeader(QByteArrayView name)
{
    // By length first: nearly every header is none of these, and each is asked of every header
    // of every request.
    const auto is = [name](QByteArrayView credential) {
        return name.compare(credential, Qt::CaseInsensitive) == 0;
    };
    switch (name.size()) {
    case 6:
        return is("cookie");
    case 7:
        return is("api-key");
    case 9:
        return is("x-api-key");
    case 13:
        return is("authorization");
    case 14:
        return is("x-goog-api-key");
    case 19:
        return is("proxy-authorization");
    default:
        return false;
    }
}

const Span *Trace::span(const QString &name) const
{
    for (const Span &candidate : spans) {
        if (candidate.name == name)
            return &candidate;
    }
    return nullptr;
}

TraceBuilder::TraceBuilder(const timing::Clock &clock, QByteArray requestId, QByteArray traceId,
                           QByteArray parentSpanId)
    : m_clock(&clock), m_startedAt(clock.now()), m_trace(std::make_unique<Trace>())
{
    m_trace->requestId = std::move(requestId);
    m_trace->traceId = std::move(traceId);
    m_trace->spanId = newSpanId();
    m_trace->parentSpanId = std::move(parentSpanId);
    m_trace->startedAtUtc = clock.utcNow();
    // A request served at the first attempt records eight spans (ingress, admission, routing,
    // choice, the attempt, its head, the first byte or the usage, the completion): room for
    // them at once, rather than four reallocations that move every span.
    m_trace->spans.reserve(8);
}

void TraceBuilder::setRequest(QByteArray method, QByteArray path, HeaderPairs headers,
                              QByteArray body)
{
    m_trace->method = std::move(method);
    m_trace->path = std::move(path);
    m_trace->bodiesKept = m_limits.keepBodies;
    m_heldRequest =
        HeldRequest{std::move(headers), m_limits.keepBodies ? std::move(body) : QByteArray()};
}

void TraceBuilder::writeHeld()
{
    fillHeld(*m_trace);
    m_heldSteps = {};
    m_heldRequest.reset();
}

void TraceBuilder::fillHeld(Trace &into) const
{
    if (!m_heldSteps.isEmpty())
        into.explainSteps = explainLines();
    if (!m_heldRequest)
        return;
    const HeldRequest &held = *m_heldRequest;
    into.requestHeaders.clear();
    into.requestHeaders.reserve(held.headers.size());
    for (const auto &[name, value] : held.headers)
        into.requestHeaders.append({name, isCredentialHeader(name) ? kRedacted : value});
    if (m_limits.keepBodies) {
        into.requestBodyCut = held.body.size() > m_limits.bodyMaxBytes;
        into.requestBody = into.requestBodyCut ? held.body.first(m_limits.bodyMaxBytes) : held.body;
    }
}

QStringList TraceBuilder::explainLines() const
{
    if (m_heldSteps.isEmpty())
        return m_trace->explainSteps;
    QStringList lines;
    lines.reserve(m_heldSteps.size());
    for (const ExplainStep &step : m_heldSteps)
        lines.append(step.stage + QStringLiteral(": ") + step.detail);
    return lines;
}

void TraceBuilder::appendResponseBody(QByteArrayView bytes)
{
    if (!m_limits.keepBodies || m_trace->responseBodyCut)
        return;
    const qsizetype room = m_limits.bodyMaxBytes - m_trace->responseBody.size();
    if (bytes.size() > room) {
        m_trace->responseBodyCut = true;
        bytes = bytes.first(std::max<qsizetype>(room, 0));
    }
    m_trace->responseBody.append(bytes);
}

int TraceBuilder::openSpan(const QString &name, const QString &detail, SpanKind kind)
{
    Span span;
    span.name = name;
    span.startMicros = elapsedMicros();
    span.detail = detail;
    span.kind = kind;
    m_trace->spans.append(std::move(span));
    return int(m_trace->spans.size()) - 1;
}

void TraceBuilder::closeSpan(int index, const QString &detail)
{
    Span &span = m_trace->spans[index];
    if (span.durationMicros >= 0)
        return;
    span.durationMicros = elapsedMicros() - span.startMicros;
    if (!detail.isEmpty())
        span.detail = detail;
}

void TraceBuilder::explainChoice(QList<ExplainStep> steps)
{
    m_trace->explainSteps.clear();
    m_heldSteps = std::move(steps);
    pointEvent(QStringLiteral("choice"));
    m_choiceSpan = int(m_trace->spans.size()) - 1;
}

void TraceBuilder::fillChoice(QList<Span> &spans) const
{
    if (m_choiceSpan >= 0 && m_choiceSpan < spans.size() && spans[m_choiceSpan].detail.isEmpty())
        spans[m_choiceSpan].detail = explainLines().join(QStringLiteral("; "));
}

void TraceBuilder::pointEvent(const QString &name, const QString &detail)
{
    Span span;
    span.name = name;
    span.startMicros = elapsedMicros();
    span.durationMicros = 0;
    span.detail = detail;
    span.kind = SpanKind::Event;
    m_trace->spans.append(std::move(span));
}

void TraceBuilder::chunk(qint64 bytes)
{
    ++m_trace->chunkCount;
    m_trace->chunkBytes += bytes;
    if (int(m_trace->chunks.size()) < m_limits.chunkEvents)
        m_trace->chunks.push_back({elapsedMicros(), std::min(bytes, ChunkMark::kMaxBytes)});
}

void TraceBuilder::setWatched(bool watched)
{
    m_watched = watched;
    if (!watched)
        m_liveData.clear();
}

void TraceBuilder::appendLiveData(QByteArrayView eventData)
{
    if (!m_watched)
        return;
    if (m_liveData.size() + eventData.size() > kMaxLiveDataBytes)
        m_liveData.clear(); // nobody took it for a megabyte: start again rather than grow
    m_liveData.append(eventData);
    m_liveData.append('\n');
}

Trace TraceBuilder::finish(int status, const QString &outcome)
{
    for (int i = 0; i < m_trace->spans.size(); ++i)
        closeSpan(i);
    m_trace->status = status;
    m_trace->outcome = outcome;
    m_trace->totalMicros = elapsedMicros();
    writeHeld();
    fillChoice(m_trace->spans);
    return *m_trace;
}

namespace {

// A trace packed for the ring (TraceRing), in one block: numbers as their bytes, text as its
// length and its UTF-16 or bytes, copied with memcpy both ways (one byte a character for Latin-1
// text measured slower: a pass over every character where memcpy moves them in bulk). The request
// id comes first, so that finding a trace reads no more than that; then the rest of the record, so
// that listing records unpacks no span. The "choice" event's detail is the explanation's steps
// joined (TraceBuilder::finish): it is marked, not held twice. The block never leaves the process:
// its layout may change with any build.
//
// The fields are listed once (recordFields, traceFields), for packing and for unpacking alike:
// a Pack walks a const trace, twice (once with a Measure to size the block, once with a Write to
// fill it, so that the block is allocated once at its size); an Unpack fills a trace.

// Whether `detail` is `steps` joined by "; ", as TraceBuilder::finish makes the choice's detail.
bool isJoinedExplanation(const QString &detail, const QStringList &steps)
{
    const QStringView separator = u"; ";
    QStringView rest = detail;
    for (qsizetype i = 0; i < steps.size(); ++i) {
        if (i > 0) {
            if (!rest.startsWith(separator))
                return false;
            rest = rest.sliced(separator.size());
        }
        if (!rest.startsWith(steps[i]))
            return false;
        rest = rest.sliced(steps[i].size());
    }
    return rest.isEmpty();
}

class Measure {
public:
    void raw(const void *, qsizetype size) { m_size += size; }
    qsizetype size() const { return m_size; }

private:
    qsizetype m_size = 0;
};

class Write {
public:
    explicit Write(char *to) : m_to(to) {}
    void raw(const void *from, qsizetype size)
    {
        if (size == 0)
            return; // `from` may be null then (an empty vector's data), which memcpy may not take
        std::memcpy(m_to, from, size_t(size));
        m_to += size;
    }

private:
    char *m_to;
};

template <typename Out>
class Pack {
public:
    explicit Pack(Out &out) : m_out(out) {}

    template <typename Number>
    void field(const Number &value)
    {
        static_assert(std::is_trivially_copyable_v<Number>);
        m_out.raw(&value, sizeof value);
    }
    void field(const QString &value)
    {
        field(qint32(value.size()));
        m_out.raw(value.constData(), value.size() * qsizetype(sizeof(char16_t)));
    }
    void field(const QByteArray &value)
    {
        field(qint32(value.size()));
        m_out.raw(value.constData(), value.size());
    }
    void field(const QDateTime &value)
    {
        field(value.isValid());
        field(value.isValid() ? value.toMSecsSinceEpoch() : qint64(0));
    }
    template <typename List>
    void count(const List &list)
    {
        field(qint32(list.size()));
    }
    void detail(const QString &detail, const QStringList &explanation)
    {
        const bool joined = !detail.isEmpty() && isJoinedExplanation(detail, explanation);
        field(joined);
        if (!joined)
            field(detail);
    }

private:
    Out &m_out;
};

class Unpack {
public:
    explicit Unpack(QByteArrayView from) : m_from(from) {}

    template <typename Number>
    void field(Number &value)
    {
        static_assert(std::is_trivially_copyable_v<Number>);
        take(&value, sizeof value);
    }
    void field(QString &value)
    {
        value = QString(number<qint32>(), Qt::Uninitialized);
        take(value.data(), value.size() * qsizetype(sizeof(char16_t)));
    }
    void field(QByteArray &value) { value = bytesInPlace().toByteArray(); }
    void field(QDateTime &value)
    {
        const bool valid = number<bool>();
        const qint64 ms = number<qint64>();
        value = valid ? QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC) : QDateTime();
    }
    template <typename List>
    void count(List &list)
    {
        list.resize(number<qint32>());
    }
    void detail(QString &detail, const QStringList &explanation)
    {
        if (number<bool>())
            detail = explanation.join(QStringLiteral("; "));
        else
            field(detail);
    }
    QByteArrayView bytesInPlace()
    {
        const qint32 size = number<qint32>();
        Q_ASSERT(m_at + size <= m_from.size());
        const QByteArrayView value = m_from.sliced(m_at, size);
        m_at += size;
        return value;
    }

private:
    template <typename Number>
    Number number()
    {
        Number value;
        field(value);
        return value;
    }
    void take(void *to, qsizetype size)
    {
        Q_ASSERT(m_at + size <= m_from.size());
        if (size > 0)
            std::memcpy(to, m_from.data() + m_at, size_t(size));
        m_at += size;
    }

    QByteArrayView m_from;
    qsizetype m_at = 0;
};

// A field added to these structs must be listed below, and set in the round trip test of
// tst_telemetry_health. These sizes make the build say so for most new fields; not for one that
// fits in padding (a bool beside `priced`, an int beside `chunkCount`).
static_assert(sizeof(void *) != 8 || sizeof(RequestRecord) == 584,
              "RequestRecord changed: list its fields in recordFields");
static_assert(sizeof(void *) != 8 || sizeof(Span) == 208, "Span changed: list it in traceFields");
static_assert(sizeof(void *) != 8 || sizeof(Trace) == 800, "Trace changed: list it in traceFields");

// `Record` is `const RequestRecord` when packing, `RequestRecord` when unpacking.
template <typename Io, typename Record>
void recordFields(Io &io, Record &record)
{
    io.field(record.requestId); // first: TraceRing::find reads no more
    io.field(record.sequence);
    io.field(record.traceId);
    io.field(record.spanId);
    io.field(record.parentSpanId);
    io.field(record.shadowOf);
    io.field(record.shadowRequestId);
    io.field(record.startedAtUtc);
    io.field(record.operation);
    io.field(record.endpoint);
    io.field(record.tenant);
    io.field(record.keyId);
    io.field(record.model);
    io.field(record.route);
    io.field(record.tier);
    io.field(record.provider);
    io.field(record.upstreamModel);
    io.field(record.streamed);
    io.field(record.status);
    io.field(record.outcome);
    io.field(record.errorClass);
    io.field(record.attempts);
    io.field(record.degradedLevel);
    io.field(record.totalMicros);
    io.field(record.timeToFirstByteMicros);
    io.field(record.queuedMicros);
    io.field(record.inputTokens);
    io.field(record.outputTokens);
    io.field(record.tokensEstimated);
    io.field(record.cacheReadTokens);
    io.field(record.cacheWriteTokens);
    io.field(record.costUsd);
    io.field(record.cacheSavedUsd);
    io.field(record.priced);
    io.field(record.responseCache);
    io.field(record.responseCacheSavedUsd);
    io.field(record.finishReason);
}

// `TraceType` is `const Trace` when packing, `Trace` when unpacking.
template <typename Io, typename TraceType>
void traceFields(Io &io, TraceType &trace)
{
    recordFields(io, trace);
    // The explanation before the spans: the choice's detail is made from it.
    io.count(trace.explainSteps);
    for (auto &step : trace.explainSteps)
        io.field(step);
    io.count(trace.spans);
    for (auto &span : trace.spans) {
        io.field(span.name);
        io.field(span.startMicros);
        io.field(span.durationMicros);
        io.detail(span.detail, trace.explainSteps);
        io.field(span.kind);
        io.field(span.attempt);
        io.field(span.httpStatus);
        io.field(span.spanId);
        io.field(span.provider);
        io.field(span.upstreamModel);
        io.field(span.outcome);
        io.field(span.errorClass);
        io.field(span.bytes);
    }
    io.count(trace.chunks);
    for (auto &mark : trace.chunks)
        io.field(mark);
    io.field(trace.chunkCount);
    io.field(trace.chunkBytes);
    io.field(trace.method);
    io.field(trace.path);
    io.count(trace.requestHeaders);
    for (auto &[name, value] : trace.requestHeaders) {
        io.field(name);
        io.field(value);
    }
    io.field(trace.requestBody);
    io.field(trace.responseBody);
    io.field(trace.bodiesKept);
    io.field(trace.requestBodyCut);
    io.field(trace.responseBodyCut);
}

QByteArray packed(const Trace &trace)
{
    Measure measure;
    Pack measuring(measure);
    traceFields(measuring, trace);
    QByteArray block(measure.size(), Qt::Uninitialized);
    Write write(block.data());
    Pack writing(write);
    traceFields(writing, trace);
    return block;
}

} // namespace

qint64 TraceRing::bytesOf(const Stored &stored)
{
    // The block and its header, and the ring's own entry for it.
    return stored.packed.capacity() + 16 + qint64(sizeof(Stored));
}

RequestRecord TraceRing::unpackRecord(const QByteArray &packed)
{
    Unpack in(packed);
    RequestRecord record;
    recordFields(in, record);
    return record;
}

Trace TraceRing::unpack(const QByteArray &packed)
{
    Unpack in(packed);
    Trace trace;
    traceFields(in, trace);
    return trace;
}

void TraceRing::add(const Trace &trace)
{
    Stored stored{trace.sequence, packed(trace)};
    m_bytes += bytesOf(stored);
    m_traces.push_back(std::move(stored));
    // The newest always stays, even a trace larger than the whole bound.
    while (m_traces.size() > 1 && (int(m_traces.size()) > m_capacity || m_bytes > m_maxBytes)) {
        m_bytes -= bytesOf(m_traces.front());
        m_traces.pop_front();
        ++m_dropped;
    }
}

std::optional<Trace> TraceRing::find(QByteArrayView requestId) const
{
    for (auto it = m_traces.rbegin(); it != m_traces.rend(); ++it) {
        Unpack in(it->packed);
        if (in.bytesInPlace() == requestId)
            return unpack(it->packed);
    }
    return std::nullopt;
}

QList<Trace> TraceRing::latest(int count) const
{
    QList<Trace> result;
    for (auto it = m_traces.rbegin(); it != m_traces.rend() && result.size() < count; ++it)
        result.append(unpack(it->packed));
    return result;
}

namespace {
// The ids below are unique, not secret: knowing one grants nothing (a trace is read through the
// admin API's own key). So each thread draws them from its own xoshiro256** generator, seeded
// once from the system's, rather than taking the global generator's lock several times a
// request.
quint64 nextIdBits()
{
    thread_local std::array<quint64, 4> state = [] {
        std::array<quint64, 4> seed{};
        do
            QRandomGenerator::system()->fillRange(seed.data(), qsizetype(seed.size()));
        while (seed == std::array<quint64, 4>{}); // the one state xoshiro never leaves
        return seed;
    }();
    const auto rotate = [](quint64 x, int k) { return (x << k) | (x >> (64 - k)); };
    const quint64 result = rotate(state[1] * 5, 7) * 9;
    const quint64 t = state[1] << 17;
    state[2] ^= state[0];
    state[3] ^= state[1];
    state[1] ^= state[2];
    state[0] ^= state[3];
    state[2] ^= t;
    state[3] = rotate(state[3], 45);
    return result;
}

// Eight lower-case hex digits for the 32 bits given, all at once: each nibble spread into a byte
// of its own, then every byte mapped to '0'-'9' or 'a'-'f' by one addition. The digits come out in
// no particular order, which is all a random id needs: every nibble is its own digit.
quint64 hexDigitsOf(quint32 bits)
{
    quint64 x = bits;
    x = ((x & 0xFFFF0000ull) << 16) | (x & 0x0000FFFFull);
    x = ((x & 0x0000FF000000FF00ull) << 8) | (x & 0x000000FF000000FFull);
    x = ((x & 0x00F000F000F000F0ull) << 4) | (x & 0x000F000F000F000Full);
    // 1 in each byte whose nibble is 10 or more: adding 6 carries it into the byte's bit 4.
    const quint64 letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
    return x + 0x3030303030303030ull + letters * ('a' - '0' - 10);
}

// `prefix`, then `bytes` (a multiple of 4, at most 16) fresh random bytes as lower-case hex: one
// allocation, made by every request several times. Eight digits at a time: a digit at a time was
// 2 % of the instructions on a request's way to its provider.
QByteArray randomHex(int bytes, QByteArrayView prefix = {})
{
    Q_ASSERT(bytes > 0 && bytes % 4 == 0 && bytes <= 16);
    QByteArray text(prefix.size() + 2 * bytes, Qt::Uninitialized);
    char *out = std::copy(prefix.begin(), prefix.end(), text.data());
    quint64 bits = 0;
    for (int word = 0; word < bytes / 4; ++word, out += 8) {
        if (word % 2 == 0)
            bits = nextIdBits();
        const quint64 digits = hexDigitsOf(quint32(bits >> (32 * (word % 2))));
        std::memcpy(out, &digits, sizeof digits);
    }
    return text;
}

bool isLowerHex(QByteArrayView text)
{
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}
} // namespace

QByteArray newTraceId()
{
    return randomHex(16);
}

QByteArray newSpanId()
{
    return randomHex(8);
}

QByteArray newRequestId()
{
    return randomHex(12, "req_");
}

std::optional<TraceParent> parseTraceparent(QByteArrayView traceparent)
{
    // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
    const QByteArrayView value = traceparent.trimmed();
    if (value.size() != 55 || value[2] != '-' || value[35] != '-' || value[52] != '-')
        return std::nullopt;
    const QByteArrayView traceId = value.sliced(3, 32);
    const QByteArrayView parentId = value.sliced(36, 16);
    if (!isLowerHex(value.first(2)) || value.first(2) == "ff" || !isLowerHex(traceId) ||
        !isLowerHex(parentId) || !isLowerHex(value.sliced(53, 2)))
        return std::nullopt;
    if (traceId == QByteArrayView("00000000000000000000000000000000") ||
        parentId == QByteArrayView("0000000000000000"))
        return std::nullopt;
    return TraceParent{traceId.toByteArray(), parentId.toByteArray()};
}

QByteArray traceIdFromTraceparent(QByteArrayView traceparent)
{
    const std::optional<TraceParent> parsed = parseTraceparent(traceparent);
    return parsed ? parsed->traceId : QByteArray();
}

QByteArray formatTraceparent(const QByteArray &traceId, const QByteArray &spanId)
{
    // Written in place: one allocation and two copies, where appending piece by piece checked
    // and grew the array five times on every provider call's way out.
    QByteArray traceparent(3 + traceId.size() + 1 + spanId.size() + 3, Qt::Uninitialized);
    char *to = traceparent.data();
    std::memcpy(to, "00-", 3);
    std::memcpy(to += 3, traceId.constData(), std::size_t(traceId.size()));
    *(to += traceId.size()) = '-';
    std::memcpy(++to, spanId.constData(), std::size_t(spanId.size()));
    std::memcpy(to + spanId.size(), "-01", 3);
    return traceparent;
}

} // namespace switchyard::telemetry
