#include "ui/common/state_pill_delegate.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>

namespace switchyard::ui {

namespace {

constexpr int cellMargin = 8;
constexpr int pillPaddingX = 9;
constexpr int pillPaddingY = 3;
constexpr int dotDiameter = 7;
constexpr int dotSpacing = 6;

// The state colour mixed into white, for a pill background that stays light on any row.
QColor tint(const QColor &color, double amount)
{
    const auto mix = [amount](int channel) { return int(255 - (255 - channel) * amount); };
    return QColor(mix(color.red()), mix(color.green()), mix(color.blue()));
}

QSize pillSize(const QFontMetrics &metrics, const QString &text)
{
    return QSize(pillPaddingX * 2 + dotDiameter + dotSpacing + metrics.horizontalAdvance(text),
                 metrics.height() + pillPaddingY * 2);
}

} // namespace

void StatePillDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                              const QModelIndex &index) const
{
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    const QString text = background.text;
    background.text.clear();
    background.icon = QIcon();
    background.features &= ~QStyleOptionViewItem::HasDecoration;
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &background, painter, widget);

    const QColor color = index.data(m_colorRole).value<QColor>();
    if (!color.isValid())
        return;

    QFont font = option.font;
    font.setWeight(QFont::DemiBold);
    const QFontMetrics metrics(font);
    const QSize size = pillSize(metrics, text);
    const QRect cell = option.rect.adjusted(cellMargin, 0, -cellMargin, 0);
    const QRect pill(cell.left(), cell.top() + (cell.height() - size.height()) / 2,
                     std::min(size.width(), cell.width()), size.height());

    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(Qt::NoPen);
    painter->setBrush(tint(color, 0.12));
    const double radius = pill.height() / 2.0;
    painter->drawRoundedRect(QRectF(pill), radius, radius);

    const QRectF dot(pill.left() + pillPaddingX, pill.center().y() - dotDiameter / 2.0 + 0.5,
                     dotDiameter, dotDiameter);
    painter->setBrush(color);
    painter->drawEllipse(dot);

    const QRect textRect =
        pill.adjusted(pillPaddingX + dotDiameter + dotSpacing, 0, -pillPaddingX, 0);
    painter->setFont(font);
    painter->setPen(color);
    // Elide only when the cell is too narrow for the whole pill: eliding against the pill's own
    // width can cut a word whose fractional advance exceeds the rounded integer width.
    const bool clipped = size.width() > cell.width();
    painter->drawText(textRect.adjusted(0, 0, 2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                      clipped ? metrics.elidedText(text, Qt::ElideRight, textRect.width()) : text);
    painter->restore();
}

QSize StatePillDelegate::sizeHint(const QStyleOptionViewItem &option,
                                  const QModelIndex &index) const
{
    QFont font = option.font;
    font.setWeight(QFont::DemiBold);
    const QSize pill = pillSize(QFontMetrics(font), index.data(Qt::DisplayRole).toString());
    const QSize base = QStyledItemDelegate::sizeHint(option, index);
    return QSize(std::max(base.width(), pill.width() + cellMargin * 2),
                 std::max(base.height(), pill.height() + 8));
}

} // namespace switchyard::ui
