#pragma once

#include "engine_snapshot.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QList>

namespace switchyard::ui {

// One row per provider, fed by engine snapshots. Rows keep the order in which providers first
// appeared; sorting is the view's job (through a proxy on SortRole), so a routine update never
// moves rows and selection and scroll position survive the 10 Hz refresh.
class HealthMatrixModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        ProviderColumn,
        StateColumn,
        InFlightColumn,
        RequestsColumn,
        ErrorsColumn,
        LatencyP50Column,
        LatencyP95Column,
        TimeToFirstTokenP50Column,
        ModelsColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        // Raw value to sort on: numbers as numbers, the state as its severity (Up < Down).
        SortRole = Qt::UserRole + 1,
        // The ProviderState as an int, for delegates that draw the state themselves.
        StateRole,
        ProviderIdRole,
    };
    Q_ENUM(Role)

    explicit HealthMatrixModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Merges the snapshot's providers into the rows: inserts new ids, removes vanished ones and
    // signals dataChanged only for rows whose values differ. Never resets.
    void applySnapshot(const EngineSnapshot &snapshot);
    void applyProviders(const QList<ProviderHealth> &providers);

    const QList<ProviderHealth> &providers() const { return m_rows; }

    // Re-announces headers and state names after the application language changed.
    void retranslate();

    // "84 ms", "1.2 s", or an em dash when there is no sample (negative).
    static QString formatLatency(double milliseconds);
    static QString stateName(ProviderState state);
    // Why a provider is in its state, in the console's language.
    static QString stateReason(const ProviderHealth &provider);
    static QColor stateColor(ProviderState state);

private:
    QList<ProviderHealth> m_rows;
};

} // namespace switchyard::ui
