#include "control/config_versions.h"

namespace switchyard {

using namespace Qt::StringLiterals;

QString configChangeSourceName(ConfigChangeSource source)
{
    switch (source) {
    case ConfigChangeSource::File:
        return u"file"_s;
    case ConfigChangeSource::Console:
        return u"console"_s;
    case ConfigChangeSource::Api:
        return u"api"_s;
    case ConfigChangeSource::Rollback:
        return u"rollback"_s;
    }
    return u"file"_s;
}

std::optional<ConfigChangeSource> configChangeSourceFromName(const QString &name)
{
    for (ConfigChangeSource source : {ConfigChangeSource::File, ConfigChangeSource::Console,
                                      ConfigChangeSource::Api, ConfigChangeSource::Rollback}) {
        if (configChangeSourceName(source) == name)
            return source;
    }
    return std::nullopt;
}

} // namespace switchyard
