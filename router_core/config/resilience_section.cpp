#include "config/config_sections.h"

namespace switchyard::config {

QList<QLatin1StringView> resilienceRootKeys()
{
    return {};
}

void checkResilienceSections(YamlReader &, const KeyedMap &, Config &) {}

} // namespace switchyard::config
