#include "alerts/webhook_notifier.h"

#include "alerts/alert_json.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcAlerts)

namespace switchyard::alerts {

using namespace Qt::StringLiterals;

QString shownUrl(const QUrl &url)
{
    return url
        .adjusted(QUrl::RemoveUserInfo | QUrl::RemovePath | QUrl::RemoveQuery |
                  QUrl::RemoveFragment)
        .toString();
}

namespace {

posting::BackgroundPosterOptions queueOptions(const config::AlertWebhookConfig &config)
{
    posting::BackgroundPosterOptions options;
    options.capacity = quint64(std::max(config.queue, 0));
    options.batchWeight = 1; // each event is posted on its own, as soon as it comes
    // Events still waiting at shutdown are not sent: a receiver that hangs must not hold the
    // gateway's stop.
    options.flushOnStop = std::chrono::milliseconds(0);
    return options;
}

} // namespace

WebhookNotifier::WebhookNotifier(config::AlertWebhookConfig config,
                                 std::unique_ptr<WebhookPoster> poster)
    : m_config(std::move(config)), m_poster(std::move(poster)), m_shownUrl(shownUrl(m_config.url)),
      m_events(queueOptions(m_config),
               {[this](const Poster::Batch &event, const posting::CutOff &cutOff) {
                    return send(event, cutOff);
                },
                [this](const Poster::Batch &event) {
                    m_droppedAtStop.fetch_add(event.weight, std::memory_order_relaxed);
                },
                {}})
{}

void WebhookNotifier::notify(const AlertEvent &event)
{
    m_events.offer(webhookBody(event));
}

WebhookCounts WebhookNotifier::counts() const
{
    WebhookCounts counts;
    counts.enabled = true;
    counts.delivered = m_delivered.load(std::memory_order_relaxed);
    counts.failed = m_failed.load(std::memory_order_relaxed);
    counts.dropped = m_events.droppedWeight() + m_droppedAtStop.load(std::memory_order_relaxed);
    counts.retries = m_retries.load(std::memory_order_relaxed);
    // Counted as queued until it is settled, so the console sees the one being posted.
    counts.queued = m_events.queuedWeight();
    return counts;
}

WebhookNotifier::Poster::RetryAfter WebhookNotifier::send(const Poster::Batch &event,
                                                          const posting::CutOff &cutOff)
{
    const int attempt = event.sendsBefore;
    const WebhookPostResult result = m_poster->post(event.items.first(), cutOff);
    if (result.outcome == WebhookPostResult::Outcome::Delivered) {
        m_delivered.fetch_add(1, std::memory_order_relaxed);
        return {};
    }
    if (cutOff.reached()) {
        m_droppedAtStop.fetch_add(1, std::memory_order_relaxed);
        return {};
    }
    logFailure(result, attempt);
    if (result.outcome == WebhookPostResult::Outcome::Refused || attempt >= m_config.retries) {
        m_failed.fetch_add(1, std::memory_order_relaxed);
        return {};
    }
    // Counted before the wait, so a retry that stopping cancels was still one asked for.
    m_retries.fetch_add(1, std::memory_order_relaxed);
    return m_config.backoff * (qint64(1) << std::min(attempt, 20));
}

void WebhookNotifier::logFailure(const WebhookPostResult &result, int attempt)
{
    const quint64 failures = m_failureWarnings.count(std::chrono::steady_clock::now());
    if (failures == 0)
        return;
    const bool lastTry =
        attempt >= m_config.retries || result.outcome == WebhookPostResult::Outcome::Refused;
    const QString more =
        failures > 1
            ? u" (%1 failed post(s) since the last message)"_s.arg(QString::number(failures))
            : QString();
    qCWarning(lcAlerts).noquote() << u"alert webhook %1: %2; %3%4"_s.arg(
        m_shownUrl, result.error, lastTry ? u"the event is given up"_s : u"it will be retried"_s,
        more);
}

} // namespace switchyard::alerts
