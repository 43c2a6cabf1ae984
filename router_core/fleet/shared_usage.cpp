#include "fleet/shared_usage.h"

#include "fleet/fleet_node.h"
#include "usage/usage_ledger.h"
#include "usage/usage_query.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <memory>

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kHourMs = 3'600'000;

qint64 hourStart(qint64 ms)
{
    return ms - ms % kHourMs;
}

QString hourText(qint64 hourStartMs)
{
    return QDateTime::fromMSecsSinceEpoch(hourStartMs, Qt::UTC).toString(Qt::ISODate);
}

// A group's sums as the hash holds them, and back.
QByteArray sumsJson(const usage::UsageGroup &group)
{
    const QJsonArray sums{double(group.requests),
                          double(group.inputTokens),
                          double(group.outputTokens),
                          double(group.estimatedRequests),
                          double(group.unpricedRequests),
                          double(group.cacheReadTokens),
                          double(group.cacheWriteTokens),
                          group.costUsd,
                          group.cacheSavedUsd,
                          double(group.responseCacheHits),
                          double(group.responseCacheMisses),
                          group.responseCacheSavedUsd};
    return QJsonDocument(sums).toJson(QJsonDocument::Compact);
}

void readSums(const QByteArray &json, usage::UsageGroup &group)
{
    const QJsonArray sums = QJsonDocument::fromJson(json).array();
    if (sums.size() < 9)
        return;
    group.requests = qint64(sums[0].toDouble());
    group.inputTokens = qint64(sums[1].toDouble());
    group.outputTokens = qint64(sums[2].toDouble());
    group.estimatedRequests = qint64(sums[3].toDouble());
    group.unpricedRequests = qint64(sums[4].toDouble());
    group.cacheReadTokens = qint64(sums[5].toDouble());
    group.cacheWriteTokens = qint64(sums[6].toDouble());
    group.costUsd = sums[7].toDouble();
    group.cacheSavedUsd = sums[8].toDouble();
    // Written by a node of a release before the response cache: none of its requests used it.
    if (sums.size() >= 12) {
        group.responseCacheHits = qint64(sums[9].toDouble());
        group.responseCacheMisses = qint64(sums[10].toDouble());
        group.responseCacheSavedUsd = sums[11].toDouble();
    }
}

// What the publishing query groups by; a field names the node, then these but the hour.
const QList<usage::UsageDimension> kCellDimensions{
    usage::UsageDimension::Hour, usage::UsageDimension::Tenant, usage::UsageDimension::Key,
    usage::UsageDimension::Model, usage::UsageDimension::Provider};

// The keys of a cell (an hour's group of one node) under a report's grouping.
QStringList keysUnder(const QList<usage::UsageDimension> &groupBy, const QString &hour,
                      const QJsonArray &field)
{
    QStringList keys;
    for (usage::UsageDimension dimension : groupBy) {
        switch (dimension) {
        case usage::UsageDimension::Tenant:
            keys.append(field[1].toString());
            break;
        case usage::UsageDimension::Key:
            keys.append(field[2].toString());
            break;
        case usage::UsageDimension::Model:
            keys.append(field[3].toString());
            break;
        case usage::UsageDimension::Provider:
            keys.append(field[4].toString());
            break;
        case usage::UsageDimension::Day:
            keys.append(hour.left(10));
            break;
        case usage::UsageDimension::Hour:
            keys.append(hour);
            break;
        }
    }
    return keys;
}

qint64 steadyMs()
{
    static QElapsedTimer timer = [] {
        QElapsedTimer started;
        started.start();
        return started;
    }();
    return timer.elapsed();
}

} // namespace

SharedUsage::SharedUsage(FleetNode &node, usage::UsageLedger &ledger, QObject *parent)
    : QObject(parent), m_node(node), m_ledger(ledger)
{
    connect(&m_node, &FleetNode::joined, this, [this] { m_republishAll = true; });
    m_node.onSync([this] { sync(); });
}

QByteArray SharedUsage::hourKey(qint64 hourStartMs) const
{
    return m_node.keyPrefix() + "usage:hour:" + hourText(hourStartMs).toUtf8();
}

void SharedUsage::traceFinished(const telemetry::Trace &)
{
    const qint64 hour = hourStart(QDateTime::currentMSecsSinceEpoch());
    if (m_currentHourMs != 0 && hour != m_currentHourMs)
        m_dirtyHours.insert(m_currentHourMs); // the last requests of the hour before, once more
    m_currentHourMs = hour;
    m_dirtyHours.insert(hour);
}

void SharedUsage::sync()
{
    if (m_publishing || steadyMs() < m_nextPublishMs)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (m_republishAll) {
        m_republishAll = false;
        m_dirtyHours.clear();
        publish(hourStart(now) - qint64(kKeptHours - 1) * kHourMs, hourStart(now) + kHourMs);
        return;
    }
    if (m_dirtyHours.isEmpty())
        return;
    const auto [first, last] = std::minmax_element(m_dirtyHours.cbegin(), m_dirtyHours.cend());
    const qint64 from = *first;
    const qint64 to = *last + kHourMs;
    m_dirtyHours.clear();
    publish(from, to);
}

void SharedUsage::publish(qint64 fromHourMs, qint64 toHourMs)
{
    usage::UsageQuery query;
    query.groupBy = kCellDimensions;
    query.from = QDateTime::fromMSecsSinceEpoch(fromHourMs, Qt::UTC);
    query.to = QDateTime::fromMSecsSinceEpoch(toHourMs, Qt::UTC);
    m_publishing = true;
    const qint64 startedMs = steadyMs();
    m_ledger.query(query, this, [this, startedMs](const usage::UsageReport &report) {
        m_publishing = false;
        const qint64 took = steadyMs() - startedMs;
        m_nextPublishMs = steadyMs() + std::max<qint64>(1000, 10 * took);
        if (!report.problem.isEmpty()) {
            // The database could not be read: these sums would be too low. Again later, whole.
            m_republishAll = true;
            m_nextPublishMs = steadyMs() + 10'000;
            return;
        }
        redis::Link &link = m_node.link();
        if (!link.isUp()) {
            m_republishAll = true; // written whole once the link is back
            return;
        }
        const QString node = m_node.config().node;
        QSet<qint64> hours;
        for (const usage::UsageGroup &group : report.groups) {
            const qint64 hour =
                QDateTime::fromString(group.keys[0], Qt::ISODate).toMSecsSinceEpoch();
            const QJsonArray field{node, group.keys[1], group.keys[2], group.keys[3],
                                   group.keys[4]};
            link.send({"HSET", hourKey(hour), QJsonDocument(field).toJson(QJsonDocument::Compact),
                       sumsJson(group)},
                      {});
            hours.insert(hour);
        }
        for (const qint64 hour : std::as_const(hours)) {
            const qint64 expiry = hour + qint64(kKeptHours + 24) * kHourMs;
            link.send({"PEXPIREAT", hourKey(hour), QByteArray::number(expiry)}, {});
        }
    });
}

void SharedUsage::complete(usage::UsageReport own, std::function<void(usage::UsageReport)> done)
{
    redis::Link &link = m_node.link();
    if (!link.isUp()) {
        own.fleetProblem = u"Redis is unreachable: the report is this node's usage only"_s;
        done(std::move(own));
        return;
    }
    // The other nodes' hours that start inside the range, no older than Redis keeps.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const qint64 oldest = hourStart(now) - qint64(kKeptHours - 1) * kHourMs;
    const qint64 fromMs = own.query.from.toMSecsSinceEpoch();
    qint64 first = hourStart(fromMs) + (fromMs % kHourMs ? kHourMs : 0);
    if (first < oldest) {
        own.fleetProblem = u"the other nodes' usage is kept for %1 days: older hours are this "
                           u"node's only"_s.arg(kKeptHours / 24);
        first = oldest;
    }
    const qint64 last = std::min(own.query.to.toMSecsSinceEpoch(), hourStart(now) + kHourMs);
    QList<qint64> hours;
    for (qint64 hour = first; hour < last; hour += kHourMs)
        hours.append(hour);
    if (hours.isEmpty()) {
        done(std::move(own));
        return;
    }

    struct Gathering {
        usage::UsageReport report;
        std::unique_ptr<usage::UsageAggregate> aggregate;
        QSet<QString> nodes;
        qsizetype waiting = 0;
        bool failed = false;
        std::function<void(usage::UsageReport)> done;
    };
    auto gathering = std::make_shared<Gathering>();
    gathering->aggregate = std::make_unique<usage::UsageAggregate>(own.query.groupBy);
    for (const usage::UsageGroup &group : own.groups)
        gathering->aggregate->add(group);
    gathering->report = std::move(own);
    gathering->waiting = hours.size();
    gathering->done = std::move(done);
    const QString self = m_node.config().node;
    for (const qint64 hour : std::as_const(hours)) {
        link.send({"HGETALL", hourKey(hour)}, [gathering, self, hour](const redis::Result &result) {
            if (!result.ok()) {
                gathering->failed = true;
            } else {
                const QString hourName = hourText(hour);
                const QList<redis::Reply> &fields = result.reply.elements;
                for (qsizetype i = 0; i + 1 < fields.size(); i += 2) {
                    const QJsonArray field = QJsonDocument::fromJson(fields[i].text).array();
                    if (field.size() != 5 || field[0].toString() == self)
                        continue; // this node's own figures come from its ledger, exactly
                    usage::UsageGroup group;
                    group.keys = keysUnder(gathering->report.query.groupBy, hourName, field);
                    readSums(fields[i + 1].text, group);
                    gathering->aggregate->add(group);
                    gathering->nodes.insert(field[0].toString());
                }
            }
            if (--gathering->waiting > 0)
                return;
            usage::UsageReport &report = gathering->report;
            if (gathering->failed) {
                report.fleetProblem = u"Redis did not answer for every hour: the report is this "
                                      u"node's usage only"_s;
            } else {
                report.groups = gathering->aggregate->groups();
                report.fleetNodes = QStringList(gathering->nodes.cbegin(), gathering->nodes.cend());
                report.fleetNodes.sort();
            }
            gathering->done(std::move(report));
        });
    }
}

} // namespace switchyard::fleet
