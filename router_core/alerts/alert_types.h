#pragma once

#include "config/config.h"

#include <QList>
#include <QMetaType>
#include <QString>

namespace switchyard::alerts {

// What an alert is about: a tier's traffic, a budget, or the gateway as a whole (the fail-safe
// rule counts every request, whatever its tier).
enum class SubjectKind { Tier, Budget, Gateway };
QLatin1StringView subjectKindName(SubjectKind kind);

// The unit of an event's value and threshold: a share of requests (0.72 for 72 %), a latency in
// milliseconds, a count of answers, a used share of a budget.
enum class ValueUnit { Ratio, Milliseconds, Answers };
QLatin1StringView valueUnitName(ValueUnit unit);

// One alert that is raised now.
struct ActiveAlert {
    config::AlertRuleKind rule = config::AlertRuleKind::TierSuccessRate;
    config::AlertSeverity severity = config::AlertSeverity::Warning;
    SubjectKind subjectKind = SubjectKind::Tier;
    QString subject;        // the tier's or budget's name; "gateway" for the gateway
    double value = 0.0;     // at the last evaluation
    double threshold = 0.0; // as compared at the last evaluation
    ValueUnit unit = ValueUnit::Ratio;
    qint64 sinceMs = 0;         // when the condition started to hold, ms since the epoch (UTC)
    qint64 raisedAtMs = 0;      // when it had held for the rule's `for`
    quint64 raisedSequence = 0; // the raising event's sequence: a dismissed banner compares it
    QString message;            // the raising event's message
};

// A raise or a clear, as logged, shown and sent to the webhook.
struct AlertEvent {
    enum class Kind { Raised, Cleared };
    quint64 sequence = 0; // 1 for the engine's first event, +1 for each after
    Kind kind = Kind::Raised;
    config::AlertRuleKind rule = config::AlertRuleKind::TierSuccessRate;
    config::AlertSeverity severity = config::AlertSeverity::Warning;
    SubjectKind subjectKind = SubjectKind::Tier;
    QString subject;
    double value = 0.0;     // raise: what held; clear: the value at the clear (NaN: no data)
    double threshold = 0.0; // as compared
    ValueUnit unit = ValueUnit::Ratio;
    qint64 sinceMs = 0; // raise: when the condition started to hold; clear: when it was raised
    qint64 atMs = 0;    // when this event happened
    QString message;    // one line a person reads, English, as logged
};
QLatin1StringView eventKindName(AlertEvent::Kind kind);

// The webhook's counts (alerts.webhook); all zero and not enabled without one.
struct WebhookCounts {
    bool enabled = false;
    quint64 delivered = 0; // events a receiver took (2xx)
    quint64 failed = 0;    // events given up after every retry, or refused with a 4xx
    quint64 dropped = 0;   // events that found the queue full, or were queued at shutdown
    quint64 retries = 0;   // posts repeated after a failure
    quint64 queued = 0;    // waiting now, the one being posted included
};

// What the console and the admin API show: the alerts raised now, the newest events, the
// webhook's counts.
struct AlertsState {
    QList<ActiveAlert> active; // oldest raise first
    QList<AlertEvent> recent;  // newest last, bounded by alerts.events_kept
    quint64 eventsTotal = 0;   // every event since start; more than `recent` holds when it wrapped
    WebhookCounts webhook;
};

} // namespace switchyard::alerts

Q_DECLARE_METATYPE(switchyard::alerts::AlertEvent)
Q_DECLARE_METATYPE(switchyard::alerts::AlertsState)
