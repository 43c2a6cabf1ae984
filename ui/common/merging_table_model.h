#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QString>
#include <utility>

namespace switchyard::ui {

// A table model fed whole lists of value rows (engine snapshots) that merges each list into its
// rows by id instead of resetting: vanished ids are removed, new ids appended, and dataChanged is
// signalled only for the cells that differ. Rows keep the order in which ids first appeared, so
// a 10 Hz refresh never moves a row and selection and scroll position survive it.
template <typename Row>
class MergingTableModel : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : int(m_rows.size());
    }
    const QList<Row> &rows() const { return m_rows; }

protected:
    virtual QString idOf(const Row &row) const = 0;
    // The first and last column whose shown value differs between the two; {-1, -1} when none.
    virtual std::pair<int, int> changedColumns(const Row &before, const Row &after) const = 0;

    void mergeRows(const QList<Row> &incomingRows)
    {
        // Position of each id in the incoming list; a duplicated id keeps its first entry.
        QHash<QString, qsizetype> incoming;
        incoming.reserve(incomingRows.size());
        for (qsizetype i = 0; i < incomingRows.size(); ++i) {
            if (!incoming.contains(idOf(incomingRows.at(i))))
                incoming.insert(idOf(incomingRows.at(i)), i);
        }

        // Removals, back to front, one signal per contiguous run of vanished rows.
        for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
            if (incoming.contains(idOf(m_rows.at(row))))
                continue;
            const int last = row;
            while (row > 0 && !incoming.contains(idOf(m_rows.at(row - 1))))
                --row;
            this->beginRemoveRows({}, row, last);
            m_rows.remove(row, last - row + 1);
            this->endRemoveRows();
        }

        QHash<QString, int> present;
        present.reserve(m_rows.size());
        for (int row = 0; row < m_rows.size(); ++row) {
            Row &current = m_rows[row];
            present.insert(idOf(current), row);
            const Row &next = incomingRows.at(incoming.value(idOf(current)));
            const auto [first, last] = changedColumns(current, next);
            if (first < 0)
                continue;
            current = next;
            Q_EMIT this->dataChanged(this->index(row, first), this->index(row, last));
        }

        QList<Row> added;
        for (qsizetype i = 0; i < incomingRows.size(); ++i) {
            const Row &row = incomingRows.at(i);
            if (incoming.value(idOf(row)) != i || present.contains(idOf(row)))
                continue;
            added.append(row);
        }
        if (added.isEmpty())
            return;
        const int first = int(m_rows.size());
        this->beginInsertRows({}, first, first + int(added.size()) - 1);
        m_rows.append(added);
        this->endInsertRows();
    }

    QList<Row> m_rows;
};

} // namespace switchyard::ui
