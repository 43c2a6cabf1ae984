#include "otlp/span_exporter.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <curl/curl.h>

namespace switchyard::otlp {

using namespace Qt::StringLiterals;

namespace {

// A collector's answer is a small ExportTraceServiceResponse; anything longer is not read.
constexpr qsizetype kMaxAnswerBytes = 64 * 1024;

class CurlSpanPoster final : public SpanPoster {
public:
    explicit CurlSpanPoster(const config::OtlpExportConfig &config)
    {
        // Reference-counted: pairs with the cleanup below, whatever the transport does.
        curl_global_init(CURL_GLOBAL_DEFAULT);
        m_easy = curl_easy_init();
        m_url = config.tracesUrl().toEncoded();
        m_headers = curl_slist_append(m_headers, "Content-Type: application/json");
        // libcurl waits for a 100 Continue on a large body unless told not to.
        m_headers = curl_slist_append(m_headers, "Expect:");
        for (const config::ConfiguredValue &header : config.headers)
            m_headers =
                curl_slist_append(m_headers, (header.name + ": " + header.value).constData());
        if (!m_easy)
            return;
        curl_easy_setopt(m_easy, CURLOPT_URL, m_url.constData());
        curl_easy_setopt(m_easy, CURLOPT_HTTPHEADER, m_headers);
        curl_easy_setopt(m_easy, CURLOPT_POST, 1L);
        curl_easy_setopt(m_easy, CURLOPT_NOSIGNAL, 1L);
        // As for providers: no proxy from http_proxy and friends by accident.
        curl_easy_setopt(m_easy, CURLOPT_PROXY, "");
        curl_easy_setopt(m_easy, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(m_easy, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(m_easy, CURLOPT_TCP_KEEPALIVE, 1L);
        curl_easy_setopt(m_easy, CURLOPT_TIMEOUT_MS, long(config.timeout.count()));
        curl_easy_setopt(m_easy, CURLOPT_CONNECTTIMEOUT_MS, long(config.timeout.count()));
        curl_easy_setopt(m_easy, CURLOPT_WRITEFUNCTION, &CurlSpanPoster::onAnswer);
        curl_easy_setopt(m_easy, CURLOPT_WRITEDATA, this);
        curl_easy_setopt(m_easy, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(m_easy, CURLOPT_XFERINFOFUNCTION, &CurlSpanPoster::onProgress);
        curl_easy_setopt(m_easy, CURLOPT_XFERINFODATA, this);
        curl_easy_setopt(m_easy, CURLOPT_ERRORBUFFER, m_errorText);
    }

    ~CurlSpanPoster() override
    {
        if (m_easy)
            curl_easy_cleanup(m_easy);
        curl_slist_free_all(m_headers);
        curl_global_cleanup();
    }

    PostResult post(const QByteArray &body, const std::atomic<qint64> &cutOffAtNanos) override
    {
        PostResult result;
        if (!m_easy) {
            result.error = u"libcurl could not make a handle"_s;
            return result;
        }
        m_answer.clear();
        m_errorText[0] = '\0';
        m_cutOffAtNanos = &cutOffAtNanos;
        curl_easy_setopt(m_easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
        curl_easy_setopt(m_easy, CURLOPT_POSTFIELDS, body.constData());
        const CURLcode code = curl_easy_perform(m_easy);
        m_cutOffAtNanos = nullptr;
        if (code != CURLE_OK) {
            result.error =
                code == CURLE_ABORTED_BY_CALLBACK
                    ? u"cut off: the export was stopping"_s
                    : QString::fromUtf8(m_errorText[0] != '\0' ? m_errorText
                                                               : curl_easy_strerror(code));
            return result;
        }
        long status = 0;
        curl_easy_getinfo(m_easy, CURLINFO_RESPONSE_CODE, &status);
        result.httpStatus = int(status);
        if (status >= 200 && status < 300) {
            result.outcome = PostResult::Outcome::Accepted;
            readPartialSuccess(result);
            return result;
        }
        // OTLP/HTTP: these say "later"; every other status says the request itself is wrong.
        const bool later = status == 429 || status == 502 || status == 503 || status == 504;
        result.outcome = later ? PostResult::Outcome::Retryable : PostResult::Outcome::Refused;
        result.error = u"HTTP %1%2"_s.arg(QString::number(status), statusMessage());
        return result;
    }

private:
    static size_t onAnswer(char *data, size_t size, size_t count, void *self)
    {
        auto *poster = static_cast<CurlSpanPoster *>(self);
        const qsizetype bytes = qsizetype(size * count);
        const qsizetype room = kMaxAnswerBytes - poster->m_answer.size();
        if (room > 0)
            poster->m_answer.append(data, std::min(bytes, room));
        return size * count;
    }

    static int onProgress(void *self, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
    {
        auto *poster = static_cast<CurlSpanPoster *>(self);
        const qint64 now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
        return poster->m_cutOffAtNanos && now > poster->m_cutOffAtNanos->load() ? 1 : 0;
    }

    // A 2xx answer may still say some spans were not taken (OTLP's partial success).
    void readPartialSuccess(PostResult &result) const
    {
        const QJsonObject partial =
            QJsonDocument::fromJson(m_answer).object().value(u"partialSuccess"_s).toObject();
        // rejectedSpans is an int64, which the JSON mapping writes as a string, or a number.
        const QJsonValue rejected = partial.value(u"rejectedSpans"_s);
        const qint64 count =
            rejected.isString() ? rejected.toString().toLongLong() : rejected.toInteger();
        result.rejected = quint64(std::max<qint64>(count, 0));
        result.error = partial.value(u"errorMessage"_s).toString();
    }

    // The google.rpc.Status message OTLP collectors answer errors with, when there is one.
    QString statusMessage() const
    {
        const QString message =
            QJsonDocument::fromJson(m_answer).object().value(u"message"_s).toString();
        return message.isEmpty() ? QString() : u": "_s + message.left(200);
    }

    CURL *m_easy = nullptr;
    curl_slist *m_headers = nullptr;
    QByteArray m_url;
    QByteArray m_answer;
    char m_errorText[CURL_ERROR_SIZE] = {};
    const std::atomic<qint64> *m_cutOffAtNanos = nullptr;
};

} // namespace

std::unique_ptr<SpanPoster> makeCurlPoster(const config::OtlpExportConfig &config)
{
    return std::make_unique<CurlSpanPoster>(config);
}

} // namespace switchyard::otlp
