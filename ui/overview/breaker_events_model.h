#pragma once

#include "health/endpoint_state.h"
#include "ui/common/event_log_model.h"

namespace switchyard::ui {

// The breaker timeline's transitions: every one the engine reported, newest first, the last 200.
class BreakerEventsModel : public EventLogModel<BreakerEvent, 200> {
    Q_OBJECT
public:
    enum Column { TimeColumn, ProviderColumn, ChangeColumn, ReasonColumn, ColumnCount };
    Q_ENUM(Column)

    explicit BreakerEventsModel(QObject *parent = nullptr);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    static QString breakerStateName(BreakerState state);
    static QColor breakerStateColor(BreakerState state);
};

} // namespace switchyard::ui
