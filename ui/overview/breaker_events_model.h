#pragma once

#include "health/endpoint_state.h"

#include <QAbstractTableModel>
#include <QList>

namespace switchyard::ui {

// The breaker timeline: every transition the engine reported, newest first. Snapshots carry the
// engine's bounded ring of recent events; only the ones not seen before are inserted, at the top,
// and the oldest fall off past kCapacity, so the view never resets or jumps.
class BreakerEventsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int kCapacity = 200;

    enum Column { TimeColumn, ProviderColumn, ChangeColumn, ReasonColumn, ColumnCount };
    Q_ENUM(Column)

    explicit BreakerEventsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // `events` is oldest first, as the engine keeps them.
    void applyEvents(const QList<BreakerEvent> &events);
    void retranslate();

    static QString breakerStateName(BreakerState state);
    static QColor breakerStateColor(BreakerState state);

private:
    QList<BreakerEvent> m_rows; // newest first
};

} // namespace switchyard::ui
