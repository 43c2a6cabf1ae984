#include "admin/trace_admin.h"

#include "telemetry/request_recorder.h"
#include "telemetry/trace_json.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

constexpr int kDefaultPage = 50;
constexpr int kLargestPage = 500;

std::optional<qint64> wholeNumber(const QUrlQuery &query, const char *name, qint64 fallback)
{
    const QString text = query.queryItemValue(QLatin1String(name));
    if (text.isEmpty())
        return fallback;
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    return ok && value >= 0 ? std::optional(value) : std::nullopt;
}

http::AdminReply listTraces(const telemetry::RequestRecorder &recorder,
                            const http::AdminRequest &request)
{
    QString problem;
    const std::optional<telemetry::TraceFilter> filter =
        telemetry::TraceFilter::fromQuery(request.query, &problem);
    if (!filter)
        return http::AdminReply::error(http::invalidAdminRequest(problem, {}));
    const std::optional<qint64> limit = wholeNumber(request.query, "limit", kDefaultPage);
    if (!limit || *limit < 1 || *limit > kLargestPage) {
        return http::AdminReply::error(http::invalidAdminRequest(
            u"`limit` must be a whole number from 1 to %1."_s.arg(kLargestPage), u"limit"_s));
    }
    const std::optional<qint64> before = wholeNumber(request.query, "before", 0);
    if (!before) {
        return http::AdminReply::error(http::invalidAdminRequest(
            u"`before` must be the `next_before` of an earlier page, a whole number."_s,
            u"before"_s));
    }
    QJsonArray data;
    bool more = false;
    quint64 last = 0;
    recorder.ring().visitNewestFirst(quint64(*before), [&](const telemetry::RequestRecord &record) {
        if (!filter->matches(record))
            return true;
        if (data.size() == *limit) {
            more = true;
            return false;
        }
        data.append(telemetry::recordJson(record));
        last = record.sequence;
        return true;
    });
    const telemetry::TraceRing &ring = recorder.ring();
    return http::AdminReply::json(QJsonDocument(QJsonObject{
        {u"object"_s, u"list"_s},
        {u"data"_s, data},
        {u"has_more"_s, more},
        {u"next_before"_s, more ? QJsonValue(double(last)) : QJsonValue()},
        {u"running"_s, recorder.liveCount()},
        {u"ring"_s, QJsonObject{{u"kept"_s, ring.size()},
                                {u"capacity"_s, ring.capacity()},
                                {u"bytes"_s, double(ring.bytes())},
                                {u"max_bytes"_s, double(ring.maxBytes())},
                                {u"dropped"_s, double(ring.droppedCount())}}},
    }));
}

} // namespace

void registerTraceAdmin(http::AdminEndpoints &api, const telemetry::RequestRecorder &recorder)
{
    api.add(Method::Get, u"traces"_s,
            [&recorder](const http::AdminRequest &request, const QStringList &) {
                return listTraces(recorder, request);
            });
    api.add(Method::Get, u"traces/{}"_s,
            [&recorder](const http::AdminRequest &, const QStringList &captures) {
                bool running = false;
                if (const std::optional<telemetry::Trace> trace =
                        recorder.find(captures[0].toUtf8(), &running))
                    return http::AdminReply::json(
                        QJsonDocument(telemetry::traceJson(*trace, running)));
                return http::AdminReply::error(
                    {404,
                     u"No trace for request `%1`: it never ran here, or the ring (trace.capacity, "
                     "trace.max_bytes) has dropped it."_s.arg(captures[0]),
                     u"invalid_request_error"_s,
                     {},
                     u"trace_not_found"_s,
                     {}});
            });
}

} // namespace switchyard::admin
