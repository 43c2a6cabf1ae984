#include "alerts_model.h"

#include <QDateTime>
#include <QLocale>
#include <cmath>

namespace switchyard::ui {

using config::AlertRuleKind;
using config::AlertSeverity;

QString AlertText::ruleTitle(AlertRuleKind rule)
{
    switch (rule) {
    case AlertRuleKind::TierSuccessRate:
        return tr("Tier success rate");
    case AlertRuleKind::TierErrorRate:
        return tr("Tier error rate");
    case AlertRuleKind::TierLatencyP95:
        return tr("Tier p95 latency");
    case AlertRuleKind::FailSafeAnswers:
        return tr("Fail-safe answers");
    case AlertRuleKind::BudgetUsed:
        return tr("Budget used");
    }
    return {};
}

QString AlertText::severityName(AlertSeverity severity)
{
    return severity == AlertSeverity::Critical ? tr("Critical") : tr("Warning");
}

QColor AlertText::severityColor(AlertSeverity severity)
{
    return severity == AlertSeverity::Critical ? QColor(0xb9, 0x1c, 0x1c)
                                               : QColor(0xb4, 0x53, 0x09);
}

QString AlertText::subject(alerts::SubjectKind kind, const QString &name)
{
    switch (kind) {
    case alerts::SubjectKind::Tier:
        //: The subject of an alert: a tier by name, e.g. "tier light"
        return tr("tier %1").arg(name);
    case alerts::SubjectKind::Budget:
        //: The subject of an alert: a budget by name
        return tr("budget %1").arg(name);
    case alerts::SubjectKind::Gateway:
        //: The subject of the fail-safe alert: the whole gateway
        return tr("the gateway");
    }
    return name;
}

QString AlertText::value(double value, alerts::ValueUnit unit)
{
    if (std::isnan(value))
        //: An alert's value when there was too little traffic to compute it
        return tr("no data");
    const QLocale locale;
    switch (unit) {
    case alerts::ValueUnit::Ratio:
        return tr("%1 %").arg(locale.toString(value * 100.0, 'f', 1));
    case alerts::ValueUnit::Milliseconds:
        return tr("%1 ms").arg(locale.toString(value, 'f', 0));
    case alerts::ValueUnit::Answers:
        //: A count of fail-safe answers
        return tr("%n answer(s)", nullptr, int(value));
    }
    return locale.toString(value);
}

QString AlertText::time(qint64 msSinceEpoch)
{
    return QLocale().toString(QDateTime::fromMSecsSinceEpoch(msSinceEpoch).time(),
                              QStringLiteral("HH:mm:ss"));
}

// ---- ActiveAlertsModel ----------------------------------------------------------------------

int ActiveAlertsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString ActiveAlertsModel::idOf(const alerts::ActiveAlert &alert) const
{
    return QString::number(int(alert.rule)) + QLatin1Char('/') + alert.subject;
}

std::pair<int, int> ActiveAlertsModel::changedColumns(const alerts::ActiveAlert &before,
                                                      const alerts::ActiveAlert &after) const
{
    // A re-raise after a clear is a new alert under the same id: every cell may differ.
    if (before.raisedSequence != after.raisedSequence || before.severity != after.severity)
        return {SeverityColumn, SinceColumn};
    const bool valueChanged =
        before.value != after.value && !(std::isnan(before.value) && std::isnan(after.value));
    const bool thresholdChanged = before.threshold != after.threshold;
    if (valueChanged || thresholdChanged)
        return {valueChanged ? ValueColumn : ThresholdColumn,
                thresholdChanged ? ThresholdColumn : ValueColumn};
    return {-1, -1};
}

QVariant ActiveAlertsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const alerts::ActiveAlert &alert = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn:
            return AlertText::severityName(alert.severity);
        case RuleColumn:
            return AlertText::ruleTitle(alert.rule);
        case SubjectColumn:
            return AlertText::subject(alert.subjectKind, alert.subject);
        case ValueColumn:
            return AlertText::value(alert.value, alert.unit);
        case ThresholdColumn:
            return AlertText::value(alert.threshold, alert.unit);
        case SinceColumn:
            return AlertText::time(alert.sinceMs);
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == SeverityColumn)
            return AlertText::severityColor(alert.severity);
        if (index.column() == SinceColumn)
            return QColor(0x6b, 0x72, 0x80);
        break;
    case Qt::ToolTipRole:
        return alert.message;
    }
    return {};
}

QVariant ActiveAlertsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeverityColumn:
        return tr("Severity");
    case RuleColumn:
        return tr("Rule");
    case SubjectColumn:
        return tr("Subject");
    case ValueColumn:
        return tr("Value");
    case ThresholdColumn:
        return tr("Threshold");
    case SinceColumn:
        //: When an alert's condition started to hold
        return tr("Since");
    }
    return {};
}

void ActiveAlertsModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

// ---- AlertEventsModel -----------------------------------------------------------------------

int AlertEventsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int AlertEventsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AlertEventsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const alerts::AlertEvent &event = m_rows.at(index.row());
    const bool raised = event.kind == alerts::AlertEvent::Kind::Raised;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn:
            return AlertText::time(event.atMs);
        case EventColumn:
            return raised ? tr("Raised") : tr("Cleared");
        case SeverityColumn:
            return AlertText::severityName(event.severity);
        case RuleColumn:
            return AlertText::ruleTitle(event.rule);
        case SubjectColumn:
            return AlertText::subject(event.subjectKind, event.subject);
        case ValueColumn:
            //: An event's value against its threshold, e.g. "50.0 % (threshold 90.0 %)"
            return tr("%1 (threshold %2)")
                .arg(AlertText::value(event.value, event.unit),
                     AlertText::value(event.threshold, event.unit));
        }
        break;
    case Qt::ForegroundRole:
        if (index.column() == EventColumn)
            return raised ? AlertText::severityColor(event.severity) : QColor(0x15, 0x80, 0x3d);
        if (index.column() == SeverityColumn)
            return AlertText::severityColor(event.severity);
        if (index.column() == TimeColumn)
            return QColor(0x6b, 0x72, 0x80);
        break;
    case Qt::ToolTipRole:
        return event.message;
    }
    return {};
}

QVariant AlertEventsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case TimeColumn:
        return tr("Time");
    case EventColumn:
        return tr("Event");
    case SeverityColumn:
        return tr("Severity");
    case RuleColumn:
        return tr("Rule");
    case SubjectColumn:
        return tr("Subject");
    case ValueColumn:
        return tr("Value");
    }
    return {};
}

void AlertEventsModel::applyEvents(const QList<alerts::AlertEvent> &events)
{
    const quint64 newestShown = m_rows.isEmpty() ? 0 : m_rows.first().sequence;
    qsizetype fresh = 0;
    for (qsizetype i = events.size() - 1; i >= 0 && events.at(i).sequence > newestShown; --i)
        ++fresh;
    fresh = std::min<qsizetype>(fresh, kCapacity);
    if (fresh > 0) {
        beginInsertRows({}, 0, int(fresh) - 1);
        for (qsizetype i = events.size() - fresh; i < events.size(); ++i)
            m_rows.prepend(events.at(i));
        endInsertRows();
    }
    if (m_rows.size() > kCapacity) {
        beginRemoveRows({}, kCapacity, int(m_rows.size()) - 1);
        m_rows.resize(kCapacity);
        endRemoveRows();
    }
}

void AlertEventsModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
