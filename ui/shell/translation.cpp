#include "ui/shell/translation.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace switchyard::ui {

namespace {

// Compiled translations are embedded under this resource prefix by the build.
constexpr auto translationDirectory = QLatin1StringView(":/i18n");

} // namespace

bool loadSwitchyardTranslation(QTranslator &translator, const QLocale &locale)
{
    return translator.load(locale, QStringLiteral("switchyard"), QStringLiteral("_"),
                           translationDirectory);
}

void installTranslations(QCoreApplication &app)
{
    const QLocale locale = QLocale::system();

    auto *qtTranslator = new QTranslator(&app);
    if (qtTranslator->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                           QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qtTranslator);
    } else {
        delete qtTranslator;
    }

    auto *ownTranslator = new QTranslator(&app);
    if (loadSwitchyardTranslation(*ownTranslator, locale))
        QCoreApplication::installTranslator(ownTranslator);
    else
        delete ownTranslator;
}

} // namespace switchyard::ui
