#include "alerts/webhook_notifier.h"

#include <curl/curl.h>

namespace switchyard::alerts {

using namespace Qt::StringLiterals;

namespace {

// A receiver's answer is read only for its first words, for the log.
constexpr qsizetype kMaxAnswerBytes = 4 * 1024;

class CurlWebhookPoster final : public WebhookPoster {
public:
    explicit CurlWebhookPoster(const config::AlertWebhookConfig &config)
    {
        // Reference-counted: pairs with the cleanup below, whatever the transport does.
        curl_global_init(CURL_GLOBAL_DEFAULT);
        m_easy = curl_easy_init();
        m_url = config.url.toEncoded();
        m_headers = curl_slist_append(m_headers, "Content-Type: application/json");
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
        curl_easy_setopt(m_easy, CURLOPT_TIMEOUT_MS, long(config.timeout.count()));
        curl_easy_setopt(m_easy, CURLOPT_CONNECTTIMEOUT_MS, long(config.timeout.count()));
        curl_easy_setopt(m_easy, CURLOPT_WRITEFUNCTION, &CurlWebhookPoster::onAnswer);
        curl_easy_setopt(m_easy, CURLOPT_WRITEDATA, this);
        curl_easy_setopt(m_easy, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(m_easy, CURLOPT_XFERINFOFUNCTION, &CurlWebhookPoster::onProgress);
        curl_easy_setopt(m_easy, CURLOPT_XFERINFODATA, this);
        curl_easy_setopt(m_easy, CURLOPT_ERRORBUFFER, m_errorText);
    }

    ~CurlWebhookPoster() override
    {
        if (m_easy)
            curl_easy_cleanup(m_easy);
        curl_slist_free_all(m_headers);
        curl_global_cleanup();
    }

    WebhookPostResult post(const QByteArray &body, const std::atomic<bool> &stopping) override
    {
        WebhookPostResult result;
        if (!m_easy) {
            result.error = u"libcurl could not make a handle"_s;
            return result;
        }
        m_answer.clear();
        m_errorText[0] = '\0';
        m_stopping = &stopping;
        curl_easy_setopt(m_easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
        curl_easy_setopt(m_easy, CURLOPT_POSTFIELDS, body.constData());
        const CURLcode code = curl_easy_perform(m_easy);
        m_stopping = nullptr;
        if (code != CURLE_OK) {
            result.error =
                code == CURLE_ABORTED_BY_CALLBACK
                    ? u"cut off: the gateway is stopping"_s
                    : QString::fromUtf8(m_errorText[0] != '\0' ? m_errorText
                                                               : curl_easy_strerror(code));
            return result;
        }
        long status = 0;
        curl_easy_getinfo(m_easy, CURLINFO_RESPONSE_CODE, &status);
        result.httpStatus = int(status);
        if (status >= 200 && status < 300) {
            result.outcome = WebhookPostResult::Outcome::Delivered;
            return result;
        }
        const bool later = status == 408 || status == 429 || status >= 500;
        result.outcome =
            later ? WebhookPostResult::Outcome::Retryable : WebhookPostResult::Outcome::Refused;
        const QString answer = QString::fromUtf8(m_answer).simplified().left(200);
        result.error = u"HTTP %1%2"_s.arg(QString::number(status),
                                          answer.isEmpty() ? QString() : u": "_s + answer);
        return result;
    }

private:
    static size_t onAnswer(char *data, size_t size, size_t count, void *self)
    {
        auto *poster = static_cast<CurlWebhookPoster *>(self);
        const qsizetype bytes = qsizetype(size * count);
        const qsizetype room = kMaxAnswerBytes - poster->m_answer.size();
        if (room > 0)
            poster->m_answer.append(data, std::min(bytes, room));
        return size * count;
    }

    static int onProgress(void *self, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
    {
        auto *poster = static_cast<CurlWebhookPoster *>(self);
        return poster->m_stopping && poster->m_stopping->load() ? 1 : 0;
    }

    CURL *m_easy = nullptr;
    curl_slist *m_headers = nullptr;
    QByteArray m_url;
    QByteArray m_answer;
    char m_errorText[CURL_ERROR_SIZE] = {};
    const std::atomic<bool> *m_stopping = nullptr;
};

} // namespace

std::unique_ptr<WebhookPoster> makeCurlWebhookPoster(const config::AlertWebhookConfig &config)
{
    return std::make_unique<CurlWebhookPoster>(config);
}

} // namespace switchyard::alerts
