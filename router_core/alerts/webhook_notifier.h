#pragma once

#include "alerts/alert_types.h"
#include "config/config.h"
#include "posting/background_poster.h"

#include <QByteArray>
#include <QString>
#include <atomic>
#include <chrono>
#include <memory>

namespace switchyard::alerts {

// What one POST to the webhook came to.
struct WebhookPostResult {
    enum class Outcome {
        Delivered, // 2xx
        Retryable, // no answer, a timeout, 408, 429 or 5xx: the receiver may take it later
        Refused,   // any other status: the same body would be refused again
    };
    Outcome outcome = Outcome::Retryable;
    int httpStatus = 0; // 0 when no answer came
    QString error;      // what went wrong, for the log; empty when delivered
};

// The seam between the notifier's queue and retries and the wire, so both can be tested. Called
// on the notifier's own thread only.
class WebhookPoster {
public:
    virtual ~WebhookPoster() = default;
    // Sends one body; returns within the configured timeout, and soon after `cutOff` is reached.
    virtual WebhookPostResult post(const QByteArray &body, const posting::CutOff &cutOff) = 0;
};

// What a log line may say of the webhook's URL: scheme, host and port. A Slack-style incoming
// webhook carries its credential in the path.
QString shownUrl(const QUrl &url);

// Posts with a libcurl easy handle of its own, on the notifier's thread.
std::unique_ptr<WebhookPoster> makeCurlWebhookPoster(const config::AlertWebhookConfig &config);

// Sends every raised and cleared alert to `alerts.webhook` (docs/operations.md, "Alerts"). On
// the engine thread notify() encodes the event (a few hundred bytes, a handful of times an hour)
// and pushes it under a lock held for the push: it never waits for the network. A background
// poster posts the events in order, one at a time, retrying a failed post `retries` times after
// `backoff`, 2 x backoff, 4 x backoff... An event that finds `queue` events waiting is dropped and
// counted. Stopping cuts the post in flight short and counts what is still queued as dropped.
class WebhookNotifier final {
public:
    WebhookNotifier(config::AlertWebhookConfig config, std::unique_ptr<WebhookPoster> poster);

    WebhookNotifier(const WebhookNotifier &) = delete;
    WebhookNotifier &operator=(const WebhookNotifier &) = delete;

    // Engine thread.
    void notify(const AlertEvent &event);
    // Any thread.
    WebhookCounts counts() const;
    const config::AlertWebhookConfig &config() const { return m_config; }

    // At most one warning per this period; the next one says how many more failures there were.
    static constexpr std::chrono::seconds kLogInterval{60};

private:
    using Poster = posting::BackgroundPoster<QByteArray>;

    Poster::RetryAfter send(const Poster::Batch &event, const posting::CutOff &cutOff);
    void logFailure(const WebhookPostResult &result, int attempt);

    const config::AlertWebhookConfig m_config;
    const std::unique_ptr<WebhookPoster> m_poster;
    const QString m_shownUrl; // without user info, for the log

    posting::WarningThrottle m_failureWarnings{kLogInterval}; // the poster thread's own

    std::atomic<quint64> m_delivered{0};
    std::atomic<quint64> m_failed{0};
    std::atomic<quint64> m_droppedAtStop{0}; // cut off, or still queued, when stopping
    std::atomic<quint64> m_retries{0};

    Poster m_events; // last: its thread starts once everything above exists, and stops first
};

} // namespace switchyard::alerts
