#include "alerts/webhook_notifier.h"
#include "posting/json_poster.h"

namespace switchyard::alerts {

using namespace Qt::StringLiterals;

namespace {

// A receiver's answer is read only for its first words, for the log.
constexpr qsizetype kMaxAnswerBytes = 4 * 1024;

posting::JsonPosterOptions posterOptions(const config::AlertWebhookConfig &config)
{
    posting::JsonPosterOptions options;
    options.url = config.url.toEncoded();
    for (const config::ConfiguredValue &header : config.headers)
        options.headerLines.append(header.name + ": " + header.value);
    options.timeout = config.timeout;
    options.maxAnswerBytes = kMaxAnswerBytes;
    return options;
}

class CurlWebhookPoster final : public WebhookPoster {
public:
    explicit CurlWebhookPoster(const config::AlertWebhookConfig &config)
        : m_poster(posterOptions(config))
    {}

    WebhookPostResult post(const QByteArray &body, const posting::CutOff &cutOff) override
    {
        const posting::JsonPostReply reply =
            m_poster.post(body, [&cutOff] { return cutOff.reached(); });
        WebhookPostResult result;
        switch (reply.outcome) {
        case posting::JsonPostReply::Outcome::Failed:
            result.error = reply.error;
            return result;
        case posting::JsonPostReply::Outcome::CutOff:
            result.error = u"cut off: the gateway is stopping"_s;
            return result;
        case posting::JsonPostReply::Outcome::Answered:
            break;
        }
        const int status = reply.httpStatus;
        result.httpStatus = status;
        if (status >= 200 && status < 300) {
            result.outcome = WebhookPostResult::Outcome::Delivered;
            return result;
        }
        const bool later = status == 408 || status == 429 || status >= 500;
        result.outcome =
            later ? WebhookPostResult::Outcome::Retryable : WebhookPostResult::Outcome::Refused;
        const QString answer = QString::fromUtf8(reply.answer).simplified().left(200);
        result.error = u"HTTP %1%2"_s.arg(QString::number(status),
                                          answer.isEmpty() ? QString() : u": "_s + answer);
        return result;
    }

private:
    posting::JsonPoster m_poster;
};

} // namespace

std::unique_ptr<WebhookPoster> makeCurlWebhookPoster(const config::AlertWebhookConfig &config)
{
    return std::make_unique<CurlWebhookPoster>(config);
}

} // namespace switchyard::alerts
