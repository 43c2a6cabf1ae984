#include "config/config_sections.h"

namespace switchyard::config {

QList<QLatin1StringView> healthRootKeys()
{
    return {};
}

void checkHealthSections(YamlReader &, const KeyedMap &, Config &) {}

} // namespace switchyard::config
