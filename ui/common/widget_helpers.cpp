#include "ui/common/widget_helpers.h"

#include <QFile>
#include <QFrame>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPixmap>
#include <QStyle>
#include <QToolTip>
#include <cmath>

namespace switchyard::ui {

namespace {

QString textRoleName(TextRole role)
{
    switch (role) {
    case TextRole::Brand:
        return QStringLiteral("brand");
    case TextRole::Control:
        return QStringLiteral("control");
    case TextRole::Caption:
        return QStringLiteral("caption");
    case TextRole::Value:
        return QStringLiteral("value");
    case TextRole::Hint:
        return QStringLiteral("hint");
    case TextRole::SectionTitle:
        return QStringLiteral("sectionTitle");
    case TextRole::SectionHint:
        return QStringLiteral("sectionHint");
    case TextRole::ColumnHeader:
        return QStringLiteral("columnHeader");
    }
    return {};
}

QString toneName(Tone tone)
{
    switch (tone) {
    case Tone::Neutral:
        return {};
    case Tone::Good:
        return QStringLiteral("good");
    case Tone::Warning:
        return QStringLiteral("warn");
    case Tone::Bad:
        return QStringLiteral("bad");
    }
    return {};
}

} // namespace

QLabel *makeLabel(TextRole role, QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setProperty("textRole", textRoleName(role));
    return label;
}

QIcon onOffDotIcon(const QColor &off, const QColor &on, qreal devicePixelRatio)
{
    const auto dot = [devicePixelRatio](const QColor &color) {
        const int side = 10;
        QPixmap pixmap(QSize(side, side) * devicePixelRatio);
        pixmap.setDevicePixelRatio(devicePixelRatio);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(color);
        painter.drawEllipse(QRectF(1, 1, side - 2, side - 2));
        return pixmap;
    };
    QIcon icon;
    icon.addPixmap(dot(off), QIcon::Normal, QIcon::Off);
    icon.addPixmap(dot(on), QIcon::Normal, QIcon::On);
    return icon;
}

QFrame *makeCard(const QString &objectName, QWidget *parent)
{
    auto *card = new QFrame(parent);
    card->setObjectName(objectName);
    card->setProperty("card", true);
    return card;
}

QFont scaledFont(const QFont &base, qreal factor, QFont::Weight weight)
{
    QFont font = base;
    if (base.pointSizeF() > 0)
        font.setPointSizeF(base.pointSizeF() * factor);
    else
        font.setPixelSize(int(std::lround(base.pixelSize() * factor)));
    font.setWeight(weight);
    return font;
}

QFont sectionTitleFont(const QFont &base)
{
    return scaledFont(base, 1.1, QFont::DemiBold);
}

QString cssFontSize(const QFont &font)
{
    return font.pointSizeF() > 0 ? QString::number(font.pointSizeF()) + QStringLiteral("pt")
                                 : QString::number(font.pixelSize()) + QStringLiteral("px");
}

void setTone(QWidget *widget, Tone tone)
{
    const QString next = toneName(tone);
    if (widget->property("tone").toString() == next)
        return;
    widget->setProperty("tone", next);
    widget->style()->unpolish(widget);
    widget->style()->polish(widget);
}

void retire(QWidget *widget)
{
    widget->hide();
    widget->setParent(nullptr);
    widget->deleteLater();
}

QString consoleStyleSheet()
{
    QFile file(QStringLiteral(":/style/console.qss"));
    // Compiled into the binary: failing to open it is a build mistake, not a user's problem.
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        qWarning("the console style sheet is missing from the resources");
        return {};
    }
    return QString::fromUtf8(file.readAll());
}

QStringList splitList(const QString &text)
{
    QStringList items;
    for (const QString &item : text.split(u',', Qt::SkipEmptyParts)) {
        const QString trimmed = item.trimmed();
        if (!trimmed.isEmpty())
            items.append(trimmed);
    }
    return items;
}

bool showToolTipAt(QWidget *widget, QEvent *event,
                   const std::function<QString(const QPoint &)> &textAt)
{
    if (event->type() != QEvent::ToolTip)
        return false;
    auto *help = static_cast<QHelpEvent *>(event);
    const QString text = textAt(help->pos());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), text, widget);
    return true;
}

} // namespace switchyard::ui
