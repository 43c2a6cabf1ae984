#pragma once

#include <QStyledItemDelegate>

namespace switchyard::ui {

// Draws a provider's status as a tinted pill with a coloured dot, so Closed / Half-open / Open read
// at a glance and without relying on colour alone (the status name stays in the pill).
// Reads HealthMatrixModel::StateRole for the colour and DisplayRole for the text; a model with
// its own states names the role that holds each cell's QColor instead.
class StatePillDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    // The role whose QColor colours the pill; unset, the health matrix's states do.
    void setColorRole(int role) { m_colorRole = role; }

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    int m_colorRole = -1;
};

} // namespace switchyard::ui
