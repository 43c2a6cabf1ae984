#pragma once

#include "routing/impact_preview.h"

#include <QAbstractTableModel>
#include <QList>

namespace switchyard::ui {

// "rule · tier · provider", or the refusal, as both impact tables show a destination.
QString destinationText(const routing::RouteDestination &destination);

// The impact preview's from -> to table: one row per cell, moves first. A preview replaces the
// whole table (nothing of the last one carries over), so setPreview resets the model.
class ImpactCellsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { From, To, Requests, Share, ColumnCount };

    using QAbstractTableModel::QAbstractTableModel;

    void setPreview(const routing::ImpactPreview &preview);
    const routing::ImpactCell *cellAt(int row) const;
    // After a language change: the headers and the words in the cells are asked for again.
    void retranslate();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QList<routing::ImpactCell> m_cells;
    int m_sampled = 0;
};

// The sample requests of one cell with both decisions side by side.
class ImpactExamplesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Request, User, Live, Edited, ColumnCount };

    using QAbstractTableModel::QAbstractTableModel;

    void setExamples(const QList<routing::ImpactExample> &examples);
    void retranslate();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QList<routing::ImpactExample> m_examples;
};

} // namespace switchyard::ui
