#include "config/config_sections.h"
#include "redis/redis_address.h"

#include <QRegularExpression>
#include <QSysInfo>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> fleetKeys{"redis"_L1,         "name"_L1,    "node"_L1,
                                         "password"_L1,      "timeout"_L1, "sync_interval"_L1,
                                         "membership_ttl"_L1};
const QList<QLatin1StringView> passwordKeys{"env"_L1};

// Names that go into Redis keys and the fleet listing as they are.
bool isPlainName(const QString &name)
{
    static const QRegularExpression plain(u"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"_s);
    return plain.match(name).hasMatch();
}

QString defaultNodeName()
{
    const QString host = QSysInfo::machineHostName();
    return isPlainName(host) ? host : u"node"_s;
}

void readName(YamlReader &reader, const MapEntry &entry, QString &name, const QString &what)
{
    const std::optional<QString> text = reader.readString(entry);
    if (!text)
        return;
    if (!isPlainName(*text)) {
        reader.reportValue(entry, u"%1 must be 1 to 63 letters, digits, `.`, `_` or `-`, "
                                  u"starting with a letter or digit"_s.arg(what));
        return;
    }
    name = *text;
}

// `{env: NAME}` only: the config file is shown in the console and kept in every version.
void readPassword(YamlReader &reader, const EnvironmentLookup &environment, const MapEntry &entry,
                  FleetConfig &fleet)
{
    if (!entry.value.IsMap()) {
        reader.reportValue(entry, u"`password` must be written `{env: NAME}`: the config file "
                                  u"is shown in the console and kept in its versions"_s);
        return;
    }
    const KeyedMap keys = reader.readKeys(entry.value, passwordKeys);
    const MapEntry *variable = keys.find("env"_L1);
    if (!variable) {
        reader.reportMissing(entry.value, u"`password`"_s, "env"_L1);
        return;
    }
    const std::optional<QString> name = reader.readString(*variable);
    if (!name)
        return;
    const std::optional<QByteArray> value = environment(*name);
    if (!value) {
        reader.reportValue(*variable, u"environment variable %1 is not set"_s.arg(*name));
        return;
    }
    if (value->isEmpty()) {
        reader.reportValue(
            *variable, u"environment variable %1 is empty; the password must not be"_s.arg(*name));
        return;
    }
    fleet.password = *value;
    fleet.passwordVariable = *name;
}

void readDurationInto(YamlReader &reader, const MapEntry &entry, std::chrono::milliseconds low,
                      std::chrono::milliseconds high, std::chrono::milliseconds &into)
{
    const auto value = reader.readDuration(entry, ZeroDuration::Rejected);
    if (!value)
        return;
    if (*value < low || *value > high) {
        reader.reportValue(entry, u"`%1` must be between %2 ms and %3 ms"_s.arg(entry.name)
                                      .arg(low.count())
                                      .arg(high.count()));
        return;
    }
    into = *value;
}

} // namespace

QList<QLatin1StringView> fleetRootKeys()
{
    return {"fleet"_L1};
}

void checkFleetSection(YamlReader &reader, const EnvironmentLookup &environment,
                       const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("fleet"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, fleetKeys);
    if (!section)
        return;
    FleetConfig fleet;
    fleet.node = defaultNodeName();
    const MapEntry *redis = section->find("redis"_L1);
    if (!redis) {
        reader.reportMissing(entry->value, u"`fleet`"_s, "redis"_L1);
        return;
    }
    const qsizetype errorsBefore = reader.errorCount();
    std::optional<redis::Address> address;
    if (const std::optional<QString> text = reader.readString(*redis)) {
        const auto parsed = redis::parseAddress(*text);
        if (const auto *problem = std::get_if<QString>(&parsed))
            reader.reportValue(*redis, *problem);
        else {
            address = std::get<redis::Address>(parsed);
            fleet.redis = *text;
        }
    }
    if (const MapEntry *name = section->find("name"_L1))
        readName(reader, *name, fleet.name, u"`name`"_s);
    if (const MapEntry *node = section->find("node"_L1))
        readName(reader, *node, fleet.node, u"`node`"_s);
    if (const MapEntry *password = section->find("password"_L1))
        readPassword(reader, environment, *password, fleet);
    if (const MapEntry *timeout = section->find("timeout"_L1))
        readDurationInto(reader, *timeout, std::chrono::milliseconds(10),
                         std::chrono::milliseconds(10000), fleet.timeout);
    if (const MapEntry *sync = section->find("sync_interval"_L1))
        readDurationInto(reader, *sync, std::chrono::milliseconds(10),
                         std::chrono::milliseconds(10000), fleet.syncInterval);
    if (const MapEntry *ttl = section->find("membership_ttl"_L1))
        readDurationInto(reader, *ttl, std::chrono::milliseconds(300),
                         std::chrono::milliseconds(600000), fleet.membershipTtl);
    if (address && !address->isLoopback() && fleet.password.isEmpty() &&
        !section->find("password"_L1)) {
        reader.reportValue(*redis, u"a Redis off loopback needs `password: {env: NAME}`: keep "
                                   u"Redis on loopback or a private network, behind a password"_s);
    }
    if (reader.errorCount() == errorsBefore)
        config.fleet = fleet;
}

} // namespace switchyard::config
