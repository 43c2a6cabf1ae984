#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <algorithm>
#include <concepts>

namespace switchyard::ui {

// An event the engine numbers as it happens: 1 for its first, +1 for each after, so the number
// names one event however many snapshots repeat it.
template <typename Event>
concept SequencedEvent = requires(const Event &event)
{
    {
        event.sequence
        } -> std::convertible_to<quint64>;
};

// A table of the engine's events, newest first (breaker transitions, raised and cleared alerts).
// Every snapshot carries the engine's bounded ring of recent events; only those numbered above
// the newest shown are inserted, at the top, and the oldest fall off past Capacity, so the view
// never resets or jumps. A subclass gives the columns and cells.
template <SequencedEvent Event, int Capacity>
class EventLogModel : public QAbstractTableModel {
public:
    static constexpr int kCapacity = Capacity;

    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : int(m_rows.size());
    }
    const QList<Event> &rows() const { return m_rows; }

    // `events` is oldest first, as the engine keeps them.
    void applyEvents(const QList<Event> &events)
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

    // After a change of language: every title and cell may read differently.
    void retranslate()
    {
        const int lastColumn = columnCount() - 1;
        Q_EMIT headerDataChanged(Qt::Horizontal, 0, lastColumn);
        if (!m_rows.isEmpty())
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, lastColumn));
    }

protected:
    QList<Event> m_rows; // newest first
};

} // namespace switchyard::ui
