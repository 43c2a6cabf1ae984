#pragma once

#include <QtGlobal>

QT_BEGIN_NAMESPACE
class QCoreApplication;
class QLocale;
class QTranslator;
QT_END_NAMESPACE

namespace switchyard::ui {

// Loads Switchyard's own compiled translation for `locale` from the embedded resources.
// Returns false when there is none for that locale (the English source text is then shown).
bool loadSwitchyardTranslation(QTranslator &translator, const QLocale &locale);

// Installs, for QLocale::system(), Qt's own translation (standard dialogs and context menus)
// when the Qt installation has one, and Switchyard's. The translators are owned by `app`.
void installTranslations(QCoreApplication &app);

} // namespace switchyard::ui
