#include "config/config_sections.h"

#include <QDir>
#include <QFileInfo>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {
const QList<QLatin1StringView> stateKeys{"directory"_L1};
const QList<QLatin1StringView> configFileKeys{"watch"_L1, "debounce"_L1, "write_back"_L1};

// `config_file`: how the running config follows its file (watching, writing back).
void checkConfigFileSection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("config_file"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, configFileKeys);
    if (!section)
        return;
    if (const MapEntry *watch = section->find("watch"_L1)) {
        if (const auto value = reader.readBool(*watch))
            config.configFile.watch = *value;
    }
    if (const MapEntry *debounce = section->find("debounce"_L1)) {
        if (const auto value = reader.readDuration(*debounce, ZeroDuration::Allowed)) {
            if (*value > std::chrono::seconds(60))
                reader.reportValue(*debounce, u"`debounce` must be at most 60s"_s);
            else
                config.configFile.debounce = *value;
        }
    }
    if (const MapEntry *writeBack = section->find("write_back"_L1)) {
        if (const auto value = reader.readBool(*writeBack))
            config.configFile.writeBack = *value;
    }
}

} // namespace

QList<QLatin1StringView> stateRootKeys()
{
    return {"state"_L1, "config_file"_L1};
}

void checkStateSection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    checkConfigFileSection(reader, root, config);
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
