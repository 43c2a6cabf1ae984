#include "routing/request_context.h"

#include "protocol/gateway_headers.h"

#include <cmath>
#include <limits>

namespace switchyard::routing {

using namespace Qt::StringLiterals;

namespace {

// Identities (tenant, user, session) are opaque to the gateway but end up in logs, traces and
// hash keys: bounded, and free of control characters.
constexpr qsizetype kLongestIdentityBytes = 256;
constexpr qsizetype kLongestTokenBytes = 64;
constexpr qsizetype kLongestShownBytes = 60;
// One day: a budget beyond that is a unit mistake rather than a wish.
constexpr qint64 kLongestTimeoutBudgetMs = 24LL * 60 * 60 * 1000;
constexpr qint64 kDeepestDepth = 1'000'000;

// The value as a message shows it: cut, and with anything unprintable replaced.
QString shown(const QByteArray &value)
{
    QByteArray cut = value.left(kLongestShownBytes);
    for (char &c : cut) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = '?';
    }
    QString text = QString::fromUtf8(cut);
    if (value.size() > kLongestShownBytes)
        text += u"..."_s;
    return text;
}

protocol::ApiError invalidHeader(QByteArrayView name, const QString &expected,
                                 const QByteArray &value)
{
    const QString header = QString::fromLatin1(name);
    protocol::ApiError error = protocol::ApiError::invalidRequest(
        u"Invalid value for header '%1': expected %2, but got '%3'."_s.arg(header, expected,
                                                                           shown(value)),
        header);
    error.code = u"invalid_header"_s;
    return error;
}

bool isToken(QByteArrayView value, qsizetype longest)
{
    if (value.isEmpty() || value.size() > longest)
        return false;
    for (char c : value) {
        const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                             (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == ':';
        if (!allowed)
            return false;
    }
    return true;
}

bool isIdentity(QByteArrayView value)
{
    if (value.size() > kLongestIdentityBytes)
        return false;
    for (char c : value) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

std::optional<qint64> integerIn(const QByteArray &value, qint64 minimum, qint64 maximum)
{
    bool parsed = false;
    const qint64 number = value.toLongLong(&parsed);
    if (!parsed || number < minimum || number > maximum)
        return std::nullopt;
    return number;
}

// The metadata headers, by the name after "x-switchyard-".
enum class MetadataHeader {
    Tenant,
    User,
    Session,
    Priority,
    Tier,
    Task,
    Sensitivity,
    MaxCost,
    TimeoutBudget,
    FallbackLevel,
    Depth,
    Intent,
};

struct KnownHeader {
    QByteArrayView suffix;
    MetadataHeader header;
};

constexpr KnownHeader kMetadataHeaders[] = {
    {"tenant", MetadataHeader::Tenant},
    {"user", MetadataHeader::User},
    {"session", MetadataHeader::Session},
    {"priority", MetadataHeader::Priority},
    {"tier", MetadataHeader::Tier},
    {"task", MetadataHeader::Task},
    {"sensitivity", MetadataHeader::Sensitivity},
    {"max-cost", MetadataHeader::MaxCost},
    {"timeout-budget-ms", MetadataHeader::TimeoutBudget},
    {"fallback-level", MetadataHeader::FallbackLevel},
    {"depth", MetadataHeader::Depth},
    {"intent", MetadataHeader::Intent},
};

bool isIntent(QByteArrayView value)
{
    // domain/action/attribute: three non-empty tokens.
    if (value.size() > kLongestIdentityBytes)
        return false;
    int segments = 0;
    qsizetype start = 0;
    for (qsizetype i = 0; i <= value.size(); ++i) {
        if (i < value.size() && value[i] != '/')
            continue;
        if (!isToken(value.sliced(start, i - start), kLongestTokenBytes))
            return false;
        ++segments;
        start = i + 1;
    }
    return segments == 3;
}

std::optional<protocol::ApiError> readHeader(MetadataHeader which, QByteArrayView name,
                                             const QByteArray &value, RequestContext &context)
{
    switch (which) {
    case MetadataHeader::Tenant:
    case MetadataHeader::User:
    case MetadataHeader::Session: {
        if (!isIdentity(value))
            return invalidHeader(name, u"at most 256 bytes without control characters"_s, value);
        QString &target = which == MetadataHeader::Tenant ? context.tenant
                          : which == MetadataHeader::User ? context.user
                                                          : context.session;
        target = QString::fromUtf8(value);
        return std::nullopt;
    }
    case MetadataHeader::Priority: {
        const QByteArray lower = value.toLower();
        if (lower != "low" && lower != "normal" && lower != "high")
            return invalidHeader(name, u"one of `low`, `normal` or `high`"_s, value);
        context.priority = QString::fromLatin1(lower);
        return std::nullopt;
    }
    case MetadataHeader::Tier: {
        const QByteArray lower = value.toLower();
        if (lower != "light" && lower != "pro")
            return invalidHeader(name, u"`light` or `pro`"_s, value);
        context.tierHint = QString::fromLatin1(lower);
        return std::nullopt;
    }
    case MetadataHeader::Task:
    case MetadataHeader::Sensitivity:
        if (!isToken(value, kLongestTokenBytes))
            return invalidHeader(
                name, u"a word of at most 64 letters, digits, `-`, `_`, `.` or `:`"_s, value);
        (which == MetadataHeader::Task ? context.task : context.sensitivity) =
            QString::fromLatin1(value);
        return std::nullopt;
    case MetadataHeader::MaxCost: {
        bool parsed = false;
        const double cost = value.toDouble(&parsed);
        if (!parsed || !std::isfinite(cost) || cost < 0.0)
            return invalidHeader(name, u"a number of at least 0"_s, value);
        context.maxCost = cost;
        return std::nullopt;
    }
    case MetadataHeader::TimeoutBudget: {
        const auto budget = integerIn(value, 1, kLongestTimeoutBudgetMs);
        if (!budget)
            return invalidHeader(name, u"a whole number of milliseconds from 1 to 86400000"_s,
                                 value);
        context.timeoutBudget = std::chrono::milliseconds(*budget);
        return std::nullopt;
    }
    case MetadataHeader::FallbackLevel: {
        const auto level =
            integerIn(value, RequestContext::kPlannedTargetOnly, RequestContext::kFailSafeMessage);
        if (!level)
            return invalidHeader(name, u"a whole number from 0 to 3"_s, value);
        context.fallbackLevel = int(*level);
        return std::nullopt;
    }
    case MetadataHeader::Depth: {
        // Any depth is accepted here: refusing loops (depth above 5) is admission's answer.
        const auto depth = integerIn(value, 0, kDeepestDepth);
        if (!depth)
            return invalidHeader(name, u"a whole number of at least 0"_s, value);
        context.depth = int(*depth);
        return std::nullopt;
    }
    case MetadataHeader::Intent:
        if (!isIntent(value))
            return invalidHeader(name,
                                 u"`domain/action/attribute`, each a word of letters, "
                                 u"digits, `-`, `_`, `.` or `:`"_s,
                                 value);
        context.intent = QString::fromLatin1(value);
        return std::nullopt;
    }
    return std::nullopt;
}

} // namespace

QByteArray RequestContext::header(QByteArrayView name) const
{
    return protocol::headerValue(headers, name);
}

QByteArray acceptedRequestId(const QList<QPair<QByteArray, QByteArray>> &headers)
{
    for (const auto &[key, value] : headers) {
        if (!protocol::sameHeaderName(key, "x-request-id"))
            continue;
        const QByteArray candidate = value.trimmed();
        constexpr qsizetype longestRequestIdBytes = 128;
        return isToken(candidate, longestRequestIdBytes) ? candidate : QByteArray();
    }
    return {};
}

std::variant<RequestContext, protocol::ApiError>
buildRequestContext(const QList<QPair<QByteArray, QByteArray>> &headers,
                    const protocol::ChatRequest &chat)
{
    RequestContext context;
    context.model = chat.model;
    context.stream = chat.stream;
    context.headers = headers;
    context.requestId = acceptedRequestId(headers);

    constexpr QByteArrayView prefix = "x-switchyard-";
    for (const auto &[name, rawValue] : headers) {
        if (name.size() <= prefix.size() ||
            QByteArrayView(name).first(prefix.size()).compare(prefix, Qt::CaseInsensitive) != 0)
            continue;
        const QByteArrayView suffix = QByteArrayView(name).sliced(prefix.size());
        for (const KnownHeader &known : kMetadataHeaders) {
            if (!protocol::sameHeaderName(suffix, known.suffix))
                continue;
            const QByteArray value = rawValue.trimmed();
            // An empty header says nothing: the same as leaving it out.
            if (!value.isEmpty()) {
                if (auto error = readHeader(known.header, name, value, context))
                    return *error;
            }
            break;
        }
    }

    for (const auto &[key, value] : chat.routingMetadata)
        context.meta.insert(key, value);

    context.estimatedInputTokens =
        int(std::min<qint64>(chat.estimatedInputTokens, std::numeric_limits<int>::max()));
    context.messageCount = chat.messageCount;
    context.toolCount = chat.toolCount;
    context.codeBlockCount = chat.codeBlockCount;
    context.characterCount = chat.characterCount;
    return context;
}

QByteArray forwardedBody(const protocol::ChatRequest &chat, const QByteArray &body)
{
    return chat.withoutRoutingObject(body);
}

} // namespace switchyard::routing
