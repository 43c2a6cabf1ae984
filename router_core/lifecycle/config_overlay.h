#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <variant>

// The overlay: changes applied to the running config that its file could not take (a read-only
// file or folder, the embedded demo). It lives in the state directory and is loaded on top of the
// file at start, so a restart never silently reverts what was applied. Each of its top-level
// keys replaces the file's; a key set to `~` removes the file's.
namespace switchyard::lifecycle {

inline constexpr QLatin1StringView kOverlayFileName{"overlay.yaml"};

// `directory`/overlay.yaml; empty when `directory` is empty.
QString overlayPathIn(const QString &directory);

// The file's text with the overlay's keys put in place of its own (the file's comments and
// formatting elsewhere kept), or why that cannot be done.
std::variant<QByteArray, QString> applyOverlay(const QByteArray &fileText,
                                               const QByteArray &overlayText);

// The overlay that turns `fileText` into `runningText`: the top-level keys whose values differ,
// as they are written in the running text; empty when the two hold the same data.
QByteArray overlayFor(const QByteArray &fileText, const QByteArray &runningText,
                      const QString &fileName);

} // namespace switchyard::lifecycle
