#pragma once

#include <QStyledItemDelegate>

namespace switchyard::ui {

// Draws a status as a tinted pill with a coloured dot, so Closed / Half-open / Open read at a
// glance and without relying on colour alone (the status name stays in the pill). The text is
// the cell's DisplayRole; the colour is the QColor its model keeps under `colorRole` (a cell
// without one is drawn plain), so any page's model can have its states drawn alike.
class StatePillDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    StatePillDelegate(int colorRole, QObject *parent)
        : QStyledItemDelegate(parent), m_colorRole(colorRole)
    {}

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    int m_colorRole;
};

} // namespace switchyard::ui
