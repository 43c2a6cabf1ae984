#include "config/config_sections.h"

#include <QDir>
#include <QFileInfo>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {
const QList<QLatin1StringView> stateKeys{"directory"_L1};
} // namespace

QList<QLatin1StringView> stateRootKeys()
{
    return {"state"_L1};
}

void checkStateSection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("state"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, stateKeys);
    if (!section)
        return;
    const MapEntry *directory = section->find("directory"_L1);
    if (!directory)
        return;
    const auto text = reader.readString(*directory);
    if (!text)
        return;
    if (text->isEmpty()) {
        reader.reportValue(*directory, u"`directory` must name a folder; leave it out for the "
                                       u"default state directory"_s);
        return;
    }
    QString path = *text;
    if (QFileInfo(path).isRelative() && !reader.sourceName().startsWith(u':'))
        path = QFileInfo(reader.sourceName()).absoluteDir().filePath(path);
    config.state.directory = QDir::cleanPath(path);
}

} // namespace switchyard::config
