#include "ui/alerts/alerts_model.h"

#include <QDateTime>
#include <QLocale>
#include <cmath>

namespace switchyard::ui {

using config::AlertRuleKind;
using config::AlertSeverity;
using SharedColumn = AlertText::SharedColumn;

namespace {

// A row's time (when an alert's condition started, when an event came), in grey in both tables.
QVariant timeCell(qint64 msSinceEpoch, int role)
{
    if (role == Qt::DisplayRole)
        return AlertText::time(msSinceEpoch);
    if (role == Qt::ForegroundRole)
        return QColor(0x6b, 0x72, 0x80);
    return {};
}

// The severity, rule and subject cells, shown alike in both tables for either row type:
// alerts::ActiveAlert and alerts::AlertEvent name these fields the same. The value column is
// each table's own (the events' adds the threshold).
template <typename Alert>
QVariant sharedCell(const Alert &alert, SharedColumn column, int role)
{
    if (role == Qt::ForegroundRole && column == SharedColumn::Severity)
        return AlertText::severityColor(alert.severity);
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case SharedColumn::Severity:
        return AlertText::severityName(alert.severity);
    case SharedColumn::Rule:
        return AlertText::ruleTitle(alert.rule);
    case SharedColumn::Subject:
        return AlertText::subject(alert.subjectKind, alert.subject);
    case SharedColumn::Value:
        break;
    }
    return {};
}

} // namespace

QString AlertText::columnTitle(SharedColumn column)
{
    switch (column) {
    case SharedColumn::Severity:
        return tr("Severity");
    case SharedColumn::Rule:
        return tr("Rule");
    case SharedColumn::Subject:
        return tr("Subject");
    case SharedColumn::Value:
        return tr("Value");
    }
    return {};
}

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
    if (role == Qt::ToolTipRole)
        return alert.message;
    switch (index.column()) {
    case SeverityColumn:
        return sharedCell(alert, SharedColumn::Severity, role);
    case RuleColumn:
        return sharedCell(alert, SharedColumn::Rule, role);
    case SubjectColumn:
        return sharedCell(alert, SharedColumn::Subject, role);
    case ValueColumn:
        return role == Qt::DisplayRole ? AlertText::value(alert.value, alert.unit) : QVariant();
    case ThresholdColumn:
        return role == Qt::DisplayRole ? AlertText::value(alert.threshold, alert.unit) : QVariant();
    case SinceColumn:
        return timeCell(alert.sinceMs, role);
    }
    return {};
}

QVariant ActiveAlertsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeverityColumn:
        return AlertText::columnTitle(SharedColumn::Severity);
    case RuleColumn:
        return AlertText::columnTitle(SharedColumn::Rule);
    case SubjectColumn:
        return AlertText::columnTitle(SharedColumn::Subject);
    case ValueColumn:
        return AlertText::columnTitle(SharedColumn::Value);
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

int AlertEventsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AlertEventsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const alerts::AlertEvent &event = m_rows.at(index.row());
    if (role == Qt::ToolTipRole)
        return event.message;
    const bool raised = event.kind == alerts::AlertEvent::Kind::Raised;
    switch (index.column()) {
    case TimeColumn:
        return timeCell(event.atMs, role);
    case EventColumn:
        if (role == Qt::DisplayRole)
            return raised ? tr("Raised") : tr("Cleared");
        if (role == Qt::ForegroundRole)
            return raised ? AlertText::severityColor(event.severity) : QColor(0x15, 0x80, 0x3d);
        return {};
    case SeverityColumn:
        return sharedCell(event, SharedColumn::Severity, role);
    case RuleColumn:
        return sharedCell(event, SharedColumn::Rule, role);
    case SubjectColumn:
        return sharedCell(event, SharedColumn::Subject, role);
    case ValueColumn:
        if (role != Qt::DisplayRole)
            return {};
        //: An event's value against its threshold, e.g. "50.0 % (threshold 90.0 %)"
        return tr("%1 (threshold %2)")
            .arg(AlertText::value(event.value, event.unit),
                 AlertText::value(event.threshold, event.unit));
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
        return AlertText::columnTitle(SharedColumn::Severity);
    case RuleColumn:
        return AlertText::columnTitle(SharedColumn::Rule);
    case SubjectColumn:
        return AlertText::columnTitle(SharedColumn::Subject);
    case ValueColumn:
        return AlertText::columnTitle(SharedColumn::Value);
    }
    return {};
}

} // namespace switchyard::ui
