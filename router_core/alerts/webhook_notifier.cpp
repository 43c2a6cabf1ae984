#include "alerts/webhook_notifier.h"

#include "alerts/alert_json.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcAlerts)

namespace switchyard::alerts {

using namespace Qt::StringLiterals;
using Clock = std::chrono::steady_clock;

QString shownUrl(const QUrl &url)
{
    return url
        .adjusted(QUrl::RemoveUserInfo | QUrl::RemovePath | QUrl::RemoveQuery |
                  QUrl::RemoveFragment)
        .toString();
}

WebhookNotifier::WebhookNotifier(config::AlertWebhookConfig config,
                                 std::unique_ptr<WebhookPoster> poster)
    : m_config(std::move(config)), m_poster(std::move(poster)), m_shownUrl(shownUrl(m_config.url)),
      m_thread([this] { run(); })
{}

WebhookNotifier::~WebhookNotifier()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_one();
    m_thread.join();
}

void WebhookNotifier::notify(const AlertEvent &event)
{
    QByteArray body = webhookBody(event);
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping || m_queue.size() >= std::size_t(m_config.queue)) {
            m_dropped.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        m_queue.push_back(std::move(body));
        m_queued.fetch_add(1, std::memory_order_relaxed);
    }
    m_wake.notify_one();
}

WebhookCounts WebhookNotifier::counts() const
{
    WebhookCounts counts;
    counts.enabled = true;
    counts.delivered = m_delivered.load(std::memory_order_relaxed);
    counts.failed = m_failed.load(std::memory_order_relaxed);
    counts.dropped = m_dropped.load(std::memory_order_relaxed);
    counts.retries = m_retries.load(std::memory_order_relaxed);
    counts.queued = m_queued.load(std::memory_order_relaxed);
    return counts;
}

void WebhookNotifier::run()
{
    std::unique_lock lock(m_mutex);
    while (true) {
        m_wake.wait(lock, [this] { return m_stopping.load() || !m_queue.empty(); });
        if (m_stopping)
            break;
        // Counted as queued until it is settled, so the console sees the one being posted.
        QByteArray body = std::move(m_queue.front());
        m_queue.pop_front();
        lock.unlock();
        deliver(body);
        lock.lock();
    }
    // Events still waiting at shutdown are not sent: a receiver that hangs must not hold the
    // gateway's stop.
    const auto left = quint64(m_queue.size());
    m_queue.clear();
    m_dropped.fetch_add(left, std::memory_order_relaxed);
    m_queued.fetch_sub(left, std::memory_order_relaxed);
}

void WebhookNotifier::deliver(const QByteArray &body)
{
    for (int attempt = 0; attempt <= m_config.retries; ++attempt) {
        if (attempt > 0) {
            m_retries.fetch_add(1, std::memory_order_relaxed);
            const auto wait = m_config.backoff * (qint64(1) << std::min(attempt - 1, 20));
            std::unique_lock lock(m_mutex);
            if (m_wake.wait_for(lock, wait, [this] { return m_stopping.load(); })) {
                m_dropped.fetch_add(1, std::memory_order_relaxed);
                m_queued.fetch_sub(1, std::memory_order_relaxed);
                return;
            }
        }
        const WebhookPostResult result = m_poster->post(body, m_stopping);
        if (result.outcome == WebhookPostResult::Outcome::Delivered) {
            m_delivered.fetch_add(1, std::memory_order_relaxed);
            m_queued.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        if (m_stopping) {
            m_dropped.fetch_add(1, std::memory_order_relaxed);
            m_queued.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        logFailure(result, attempt);
        if (result.outcome == WebhookPostResult::Outcome::Refused)
            break;
    }
    m_failed.fetch_add(1, std::memory_order_relaxed);
    m_queued.fetch_sub(1, std::memory_order_relaxed);
}

void WebhookNotifier::logFailure(const WebhookPostResult &result, int attempt)
{
    ++m_failuresSinceLog;
    const Clock::time_point now = Clock::now();
    if (m_failureLogged && now - m_lastFailureLog < kLogInterval)
        return;
    const bool lastTry =
        attempt >= m_config.retries || result.outcome == WebhookPostResult::Outcome::Refused;
    const QString more = m_failuresSinceLog > 1
                             ? u" (%1 failed post(s) since the last message)"_s.arg(
                                   QString::number(m_failuresSinceLog))
                             : QString();
    qCWarning(lcAlerts).noquote() << u"alert webhook %1: %2; %3%4"_s.arg(
        m_shownUrl, result.error, lastTry ? u"the event is given up"_s : u"it will be retried"_s,
        more);
    m_failuresSinceLog = 0;
    m_failureLogged = true;
    m_lastFailureLog = now;
}

} // namespace switchyard::alerts
