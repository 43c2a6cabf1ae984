#include "config/config_sections.h"

namespace switchyard::config {

QList<QLatin1StringView> routingRootKeys()
{
    return {};
}

void checkRoutingSections(YamlReader &, const KeyedMap &, Config &) {}

} // namespace switchyard::config
