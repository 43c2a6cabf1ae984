#pragma once

#include <QColor>
#include <QFont>
#include <QIcon>
#include <QPoint>
#include <QString>
#include <QStringList>
#include <functional>

QT_BEGIN_NAMESPACE
class QEvent;
class QFrame;
class QLabel;
class QWidget;
QT_END_NAMESPACE

namespace switchyard::ui {

// What a label is for. resources/console.qss colours labels by this role (the `textRole`
// property), so a view asks for a role instead of styling its labels itself.
enum class TextRole {
    Brand,        // the product name in the tool bar
    Control,      // the caption beside a tool bar control
    Caption,      // a field's or a number's name
    Value,        // a number or a name that is the point of the card
    Hint,         // secondary text under a value; may carry a tone
    SectionTitle, // a card's title
    SectionHint,  // quiet text beside or under a card's title
    ColumnHeader, // the header above a column of controls
};

// How good the news in a hint is; resources/console.qss colours each (the `tone` property).
enum class Tone { Neutral, Good, Warning, Bad };

QLabel *makeLabel(TextRole role, QWidget *parent);

// A small round dot for a checkable button: `off` while unchecked, `on` while checked.
QIcon onOffDotIcon(const QColor &off, const QColor &on, qreal devicePixelRatio);

// A white, rounded card (the `card` property of resources/console.qss); the caller lays it out.
QFrame *makeCard(const QString &objectName, QWidget *parent = nullptr);

// Desktop fonts come in points on most platforms and in pixels on some; scales whichever is set.
QFont scaledFont(const QFont &base, qreal factor, QFont::Weight weight);

// The one font of every card's title, on every page.
QFont sectionTitleFont(const QFont &base);

// A font's size as a style sheet or rich-text length: "10.5pt" or "14px".
QString cssFontSize(const QFont &font);

// Sets a widget's tone and re-applies the style sheet, only when the tone changed: a re-polish
// on every 10 Hz refresh would be wasted work.
void setTone(QWidget *widget, Tone tone);

// Takes a widget out of its page at once (its object names can no longer be found) and deletes it
// later: it may be the widget whose signal is being handled.
void retire(QWidget *widget);

// The console's one style sheet, compiled in from resources/console.qss. The main window applies
// it once, to itself; every page and panel is styled through it and through nothing else.
QString consoleStyleSheet();

// The items of a comma-separated list typed into a field ("a, b,,c" -> a, b, c).
QStringList splitList(const QString &text);

// For a painted widget whose tooltip depends on what is under the pointer: answers a ToolTip
// event with `textAt(position)`, hiding the tip where it is empty. Returns whether `event` was
// one (the caller's event() returns true then).
bool showToolTipAt(QWidget *widget, QEvent *event,
                   const std::function<QString(const QPoint &)> &textAt);

} // namespace switchyard::ui
