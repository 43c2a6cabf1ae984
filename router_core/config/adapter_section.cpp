#include "config/config_sections.h"

namespace switchyard::config {

QList<QLatin1StringView> adapterProviderKeys()
{
    return {};
}

void checkProviderAdapter(YamlReader &, const YAML::Node &, const KeyedMap &,
                          std::optional<ProviderKind>, ProviderConfig &)
{}

} // namespace switchyard::config
