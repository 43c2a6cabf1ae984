#include "resilience/error_class.h"

#include <QLocale>
#include <QTimeZone>
#include <algorithm>
#include <cmath>

namespace switchyard::resilience {

using health::CallOutcome;
using upstream::TransportError;

QString errorClassName(ErrorClass error)
{
    switch (error) {
    case ErrorClass::None:
        return QStringLiteral("ok");
    case ErrorClass::ConnectFailed:
        return QStringLiteral("connect_failed");
    case ErrorClass::Timeout:
        return QStringLiteral("timeout");
    case ErrorClass::RateLimited:
        return QStringLiteral("rate_limited");
    case ErrorClass::ServerError:
        return QStringLiteral("server_error");
    case ErrorClass::ConnectionLost:
        return QStringLiteral("connection_lost");
    case ErrorClass::UnusableAnswer:
        return QStringLiteral("unusable_answer");
    case ErrorClass::RequestRejected:
        return QStringLiteral("request_rejected");
    }
    return {};
}

ErrorClass classify(TransportError transport, int httpStatus, TimeoutKind timeout)
{
    if (timeout != TimeoutKind::None)
        return ErrorClass::Timeout;
    switch (transport) {
    case TransportError::None:
        break;
    case TransportError::ConnectFailed:
    case TransportError::TlsFailed:
    case TransportError::LocalResources: // the executor blames the gateway for it, not the class
        return ErrorClass::ConnectFailed;
    case TransportError::ConnectTimeout:
    case TransportError::TotalTimeout:
        return ErrorClass::Timeout;
    case TransportError::ConnectionLost:
    case TransportError::ProtocolError:
    case TransportError::Other:
        return ErrorClass::ConnectionLost;
    }
    if (httpStatus >= 200 && httpStatus < 300)
        return ErrorClass::None;
    switch (httpStatus) {
    case 400:
    case 401:
    case 403:
    case 404:
    case 413:
    case 422:
        return ErrorClass::RequestRejected;
    case 429:
        return ErrorClass::RateLimited;
    default:
        return ErrorClass::ServerError;
    }
}

CallOutcome callOutcomeFor(ErrorClass error, bool cutShortByRequestBudget)
{
    switch (error) {
    case ErrorClass::None:
        return CallOutcome::Success;
    case ErrorClass::RequestRejected:
        return CallOutcome::RequestFault;
    case ErrorClass::UnusableAnswer:
        return CallOutcome::Unusable;
    case ErrorClass::Timeout:
        return cutShortByRequestBudget ? CallOutcome::Cancelled : CallOutcome::CallFailure;
    case ErrorClass::RateLimited:
        return CallOutcome::RateLimited;
    case ErrorClass::ConnectFailed:
    case ErrorClass::ServerError:
    case ErrorClass::ConnectionLost:
        return CallOutcome::CallFailure;
    }
    return CallOutcome::CallFailure;
}

bool mayTryAnotherEndpoint(ErrorClass error)
{
    return error != ErrorClass::None && error != ErrorClass::RequestRejected;
}

std::optional<std::chrono::milliseconds>
retryAfterDelay(const QByteArray &retryAfterMs, const QByteArray &retryAfter, const QDateTime &now)
{
    using std::chrono::milliseconds;
    // Ten minutes of waiting is already far beyond any gateway's patience; larger numbers are
    // kept from overflowing, not honoured.
    constexpr double kLongestMs = 600'000.0;
    bool parsed = false;
    const double ms = retryAfterMs.trimmed().toDouble(&parsed);
    if (parsed && std::isfinite(ms) && ms >= 0)
        return milliseconds(std::llround(std::min(ms, kLongestMs)));
    const QByteArray text = retryAfter.trimmed();
    if (text.isEmpty())
        return std::nullopt;
    const qint64 seconds = text.toLongLong(&parsed);
    if (parsed)
        return seconds < 0 ? std::nullopt
                           : std::optional(milliseconds(
                                 std::llround(std::min(double(seconds) * 1000.0, kLongestMs))));
    // An HTTP date, e.g. "Wed, 21 Oct 2015 07:28:00 GMT" (RFC 9110, IMF-fixdate).
    const QDateTime when =
        QLocale::c().toDateTime(QString::fromLatin1(text).remove(QStringLiteral(" GMT")),
                                QStringLiteral("ddd, dd MMM yyyy HH:mm:ss"));
    if (!when.isValid())
        return std::nullopt;
    const QDateTime utc(when.date(), when.time(), QTimeZone::utc());
    const qint64 delta = now.msecsTo(utc);
    return milliseconds(std::llround(std::clamp(double(delta), 0.0, kLongestMs)));
}

} // namespace switchyard::resilience
