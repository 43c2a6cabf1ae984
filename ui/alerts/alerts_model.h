#pragma once

#include "alerts/alert_types.h"
#include "ui/common/event_log_model.h"
#include "ui/common/merging_table_model.h"

#include <QColor>
#include <QCoreApplication>
#include <QList>

namespace switchyard::ui {

// How the console names and shows the parts of an alert, in the console's language: the engine's
// own message (English, as logged) is shown only as a tooltip.
class AlertText {
    Q_DECLARE_TR_FUNCTIONS(AlertText)
public:
    // The columns the raised alerts' table and the events' table both have, titled alike.
    enum class SharedColumn { Severity, Rule, Subject, Value };

    static QString columnTitle(SharedColumn column);
    static QString ruleTitle(config::AlertRuleKind rule);
    static QString severityName(config::AlertSeverity severity);
    static QColor severityColor(config::AlertSeverity severity);
    static QString subject(alerts::SubjectKind kind, const QString &name);
    static QString value(double value, alerts::ValueUnit unit);
    static QString time(qint64 msSinceEpoch);
};

// The alerts raised now, oldest raise first, merged by rule and subject so the 10 Hz refresh
// never resets the table.
class ActiveAlertsModel final : public MergingTableModel<alerts::ActiveAlert> {
    Q_OBJECT
public:
    enum Column {
        SeverityColumn,
        RuleColumn,
        SubjectColumn,
        ValueColumn,
        ThresholdColumn,
        SinceColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    using MergingTableModel::MergingTableModel;

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void applyAlerts(const QList<alerts::ActiveAlert> &active) { mergeRows(active); }
    void retranslate();

protected:
    QString idOf(const alerts::ActiveAlert &alert) const override;
    std::pair<int, int> changedColumns(const alerts::ActiveAlert &before,
                                       const alerts::ActiveAlert &after) const override;
};

// Raised and cleared events, newest first, the last 500.
class AlertEventsModel final : public EventLogModel<alerts::AlertEvent, 500> {
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        EventColumn,
        SeverityColumn,
        RuleColumn,
        SubjectColumn,
        ValueColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    using EventLogModel::EventLogModel;

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
};

} // namespace switchyard::ui
