#include "config/config_sections.h"

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {
const QList<QLatin1StringView> logKeys{"format"_L1, "level"_L1};
} // namespace

QList<QLatin1StringView> logRootKeys()
{
    return {"log"_L1};
}

void checkLogSection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("log"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, logKeys);
    if (!section)
        return;
    if (const MapEntry *format = section->find("format"_L1)) {
        if (const auto text = reader.readString(*format)) {
            config.log.format = logging::logFormatFromName(*text);
            if (!config.log.format)
                reader.reportValue(*format, u"`format` must be `text` or `json`, got %1"_s.arg(
                                                describe(format->value)));
        }
    }
    if (const MapEntry *level = section->find("level"_L1)) {
        if (const auto text = reader.readString(*level)) {
            config.log.level = logging::logLevelFromName(*text);
            if (!config.log.level)
                reader.reportValue(
                    *level, u"`level` must be `debug`, `info`, `warning` or `error`, got %1"_s.arg(
                                describe(level->value)));
        }
    }
}

} // namespace switchyard::config
