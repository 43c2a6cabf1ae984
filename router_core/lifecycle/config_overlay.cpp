#include "lifecycle/config_overlay.h"

#include "config/yaml_text_edit.h"

#include <QDir>

namespace switchyard::lifecycle {

using namespace Qt::StringLiterals;

QString overlayPathIn(const QString &directory)
{
    if (directory.isEmpty())
        return {};
    return QDir(directory).filePath(kOverlayFileName);
}

namespace {

bool meansRemoved(const QByteArray &value)
{
    const QByteArray trimmed = value.trimmed();
    return trimmed == "~" || trimmed == "null" || trimmed.isEmpty();
}

} // namespace

std::variant<QByteArray, QString> applyOverlay(const QByteArray &fileText,
                                               const QByteArray &overlayText)
{
    QByteArray merged = fileText;
    for (const QString &key : config::topLevelKeys(overlayText)) {
        const QByteArray value = config::topLevelValueText(overlayText, key);
        config::YamlEditResult edited = meansRemoved(value)
                                            ? config::removeTopLevelKey(merged, key)
                                            : config::replaceYamlNode(merged, {key}, value);
        if (const auto *error = std::get_if<QString>(&edited))
            return u"cannot put the overlay's `%1` into the file: %2"_s.arg(key, *error);
        merged = std::get<QByteArray>(edited);
    }
    return merged;
}

QByteArray overlayFor(const QByteArray &fileText, const QByteArray &runningText,
                      const QString &fileName)
{
    QByteArray entries;
    const QStringList runningKeys = config::topLevelKeys(runningText);
    for (const QString &key : runningKeys) {
        if (!config::sameTopLevelValue(fileText, runningText, key))
            entries += config::topLevelEntry(key, config::topLevelValueText(runningText, key));
    }
    for (const QString &key : config::topLevelKeys(fileText)) {
        if (!runningKeys.contains(key))
            entries += key.toUtf8() + ": ~\n";
    }
    if (entries.isEmpty())
        return {};
    return "# Changes applied to the running config that " + fileName.toUtf8() +
           " could not take.\n"
           "# Switchyard loads this on top of that file at start: each top-level key here\n"
           "# replaces the file's, and `~` removes it. Delete this file to go back to the file.\n" +
           entries;
}

} // namespace switchyard::lifecycle
