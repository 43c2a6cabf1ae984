#include "otlp/span_exporter.h"
#include "posting/json_poster.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::otlp {

using namespace Qt::StringLiterals;

namespace {

// A collector's answer is a small ExportTraceServiceResponse; anything longer is not read.
constexpr qsizetype kMaxAnswerBytes = 64 * 1024;

posting::JsonPosterOptions posterOptions(const config::OtlpExportConfig &config)
{
    posting::JsonPosterOptions options;
    options.url = config.tracesUrl().toEncoded();
    for (const config::ConfiguredValue &header : config.headers)
        options.headerLines.append(header.name + ": " + header.value);
    options.timeout = config.timeout;
    options.maxAnswerBytes = kMaxAnswerBytes;
    options.tcpKeepAlive = true;
    return options;
}

class CurlSpanPoster final : public SpanPoster {
public:
    explicit CurlSpanPoster(const config::OtlpExportConfig &config)
        : m_poster(posterOptions(config))
    {}

    PostResult post(const QByteArray &body, const posting::CutOff &cutOff) override
    {
        const posting::JsonPostReply reply =
            m_poster.post(body, [&cutOff] { return cutOff.reached(); });
        PostResult result;
        switch (reply.outcome) {
        case posting::JsonPostReply::Outcome::Failed:
            result.error = reply.error;
            return result;
        case posting::JsonPostReply::Outcome::CutOff:
            result.error = u"cut off: the export was stopping"_s;
            return result;
        case posting::JsonPostReply::Outcome::Answered:
            break;
        }
        const int status = reply.httpStatus;
        result.httpStatus = status;
        if (status >= 200 && status < 300) {
            result.outcome = PostResult::Outcome::Accepted;
            readPartialSuccess(reply.answer, result);
            return result;
        }
        // OTLP/HTTP: these say "later"; every other status says the request itself is wrong.
        const bool later = status == 429 || status == 502 || status == 503 || status == 504;
        result.outcome = later ? PostResult::Outcome::Retryable : PostResult::Outcome::Refused;
        result.error = u"HTTP %1%2"_s.arg(QString::number(status), statusMessage(reply.answer));
        return result;
    }

private:
    // A 2xx answer may still say some spans were not taken (OTLP's partial success).
    static void readPartialSuccess(const QByteArray &answer, PostResult &result)
    {
        const QJsonObject partial =
            QJsonDocument::fromJson(answer).object().value(u"partialSuccess"_s).toObject();
        // rejectedSpans is an int64, which the JSON mapping writes as a string, or a number.
        const QJsonValue rejected = partial.value(u"rejectedSpans"_s);
        const qint64 count =
            rejected.isString() ? rejected.toString().toLongLong() : rejected.toInteger();
        result.rejected = quint64(std::max<qint64>(count, 0));
        result.error = partial.value(u"errorMessage"_s).toString();
    }

    // The google.rpc.Status message OTLP collectors answer errors with, when there is one.
    static QString statusMessage(const QByteArray &answer)
    {
        const QString message =
            QJsonDocument::fromJson(answer).object().value(u"message"_s).toString();
        return message.isEmpty() ? QString() : u": "_s + message.left(200);
    }

    posting::JsonPoster m_poster;
};

} // namespace

std::unique_ptr<SpanPoster> makeCurlPoster(const config::OtlpExportConfig &config)
{
    return std::make_unique<CurlSpanPoster>(config);
}

} // namespace switchyard::otlp
