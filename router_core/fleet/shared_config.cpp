#include "fleet/shared_config.h"

#include "config/text_diff.h"
#include "config/yaml_text_edit.h"
#include "fleet/fleet_node.h"
#include "lifecycle/config_lifecycle.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <algorithm>

Q_DECLARE_LOGGING_CATEGORY(lcFleet)

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

// Makes `ARGV[2]` (a version's JSON without its number) the next version when the counter still
// holds `ARGV[1]`, keeping the newest `ARGV[3]` versions; answers {1, number} then, else
// {0, the counter}.
const QByteArray kPublishScript = R"lua(
local current = tonumber(redis.call('GET', KEYS[3]) or '0')
if current ~= tonumber(ARGV[1]) then return {0, current} end
local number = current + 1
local entry = cjson.decode(ARGV[2])
entry['version'] = number
local text = cjson.encode(entry)
redis.call('SET', KEYS[3], number)
redis.call('SET', KEYS[1], text)
redis.call('HSET', KEYS[2], number, text)
if number > tonumber(ARGV[3]) then redis.call('HDEL', KEYS[2], number - tonumber(ARGV[3])) end
return {1, number}
)lua";

ConfigChangeSource sourceFrom(const QString &name)
{
    return configChangeSourceFromName(name).value_or(ConfigChangeSource::Api);
}

} // namespace

const QStringList &SharedConfig::nodeKeys()
{
    static const QStringList keys{u"listen"_s, u"state"_s, u"tls"_s,
                                  u"fleet"_s,  u"log"_s,   u"config_file"_s};
    return keys;
}

QByteArray SharedConfig::sharedPart(const QByteArray &text)
{
    QByteArray shared = text;
    for (const QString &key : nodeKeys()) {
        const config::YamlEditResult removed = config::removeTopLevelKey(shared, key);
        if (const auto *edited = std::get_if<QByteArray>(&removed))
            shared = *edited;
    }
    return shared;
}

SharedConfig::SharedConfig(FleetNode &node, lifecycle::ConfigLifecycle &lifecycle, QObject *parent)
    : QObject(parent), m_node(node), m_lifecycle(lifecycle),
      m_headKey(node.keyPrefix() + "config:head"),
      m_versionsKey(node.keyPrefix() + "config:versions"),
      m_counterKey(node.keyPrefix() + "config:version")
{
    connect(&m_lifecycle, &lifecycle::ConfigLifecycle::changed, this, &SharedConfig::localChange);
    connect(&m_node, &FleetNode::joined, this, &SharedConfig::joined);
    m_node.onSync([this] { sync(); });
    m_lifecycle.setSharedHistory(this);
}

SharedConfig::~SharedConfig()
{
    m_lifecycle.setSharedHistory(nullptr);
}

void SharedConfig::joined()
{
    // Redis may have been emptied, or this node may have missed versions: the head decides.
    m_busy = false;
    loadVersions();
    fetchHead();
}

void SharedConfig::localChange()
{
    if (m_applyingFromFleet)
        return;
    const QByteArray shared = sharedPart(m_lifecycle.runningText());
    if (shared == m_publishedText)
        return; // a refused reload, or a change of the node's own keys only
    if (!m_node.link().isUp() || m_busy) {
        m_changedWhileBusy = true; // published when the link is back, or the exchange is over
        return;
    }
    publish(shared, m_appliedVersion);
}

void SharedConfig::publish(const QByteArray &sharedText, quint64 expected)
{
    const ConfigVersionInfo latest = m_lifecycle.latestOwnVersion();
    const QJsonObject entry{{u"text"_s, QString::fromUtf8(sharedText)},
                            {u"node"_s, m_node.config().node},
                            {u"source"_s, configChangeSourceName(latest.source)},
                            {u"author"_s, latest.author},
                            {u"note"_s, latest.note},
                            {u"created_ms"_s, double(QDateTime::currentMSecsSinceEpoch())}};
    m_busy = true;
    m_changedWhileBusy = false;
    m_node.link().send(
        {"EVAL", kPublishScript, "3", m_headKey, m_versionsKey, m_counterKey,
         QByteArray::number(expected), QJsonDocument(entry).toJson(QJsonDocument::Compact),
         QByteArray::number(kKeptVersions)},
        [this, sharedText, entry](const redis::Result &result) {
            m_busy = false;
            if (!result.ok() || result.reply.elements.size() != 2) {
                m_changedWhileBusy = true; // again once the link is back
                return;
            }
            const bool won = result.reply.elements[0].integer == 1;
            const quint64 number = quint64(result.reply.elements[1].integer);
            if (won) {
                if (!m_versions.isEmpty() && number <= m_versions.lastKey())
                    m_versions.clear(); // Redis was emptied: the fleet counts from 1 again
                QJsonObject published = entry;
                published.insert(u"version"_s, double(number));
                remember(published);
                m_appliedVersion = number;
                m_publishedText = sharedText;
                qCInfo(lcFleet) << "published this node's config as fleet version" << number;
            } else {
                qCWarning(lcFleet) << "another node published fleet version" << number
                                   << "first: this node's change gives way to it";
                fetchHead();
            }
        });
}

void SharedConfig::sync()
{
    if (m_busy)
        return;
    if (m_changedWhileBusy) {
        localChange();
        return;
    }
    m_node.link().send({"GET", m_counterKey}, [this](const redis::Result &result) {
        if (!result.ok() || m_busy)
            return;
        const quint64 number = result.reply.isNil() ? 0 : result.reply.text.toULongLong();
        // 0: Redis holds no config yet (new, or emptied): fetching finds no head and publishes.
        if (number == 0 || (number != m_appliedVersion && number != m_refusedVersion))
            fetchHead();
    });
}

void SharedConfig::fetchHead()
{
    m_busy = true;
    m_node.link().send({"GET", m_headKey}, [this](const redis::Result &result) {
        m_busy = false;
        if (!result.ok())
            return;
        if (result.reply.isNil()) {
            // A new fleet, or a Redis restarted empty: this node's config becomes version 1
            // (another node may win the race; this one then applies that one).
            publish(sharedPart(m_lifecycle.runningText()), 0);
            return;
        }
        applyHead(result.reply.text);
    });
}

void SharedConfig::applyHead(const QByteArray &head)
{
    const QJsonObject entry = QJsonDocument::fromJson(head).object();
    const quint64 number = quint64(entry.value(u"version"_s).toDouble());
    const QByteArray sharedText = entry.value(u"text"_s).toString().toUtf8();
    const QString from = entry.value(u"node"_s).toString();
    if (number == 0)
        return;
    if (!m_versions.isEmpty() && number < m_versions.lastKey())
        m_versions.clear(); // Redis was emptied and the fleet counts from 1 again
    if (!m_versions.isEmpty() && number > m_versions.lastKey() + 1)
        loadVersions(); // missed some while away: the list is read again whole
    remember(entry);
    const QByteArray running = m_lifecycle.runningText();
    if (sharedText == sharedPart(running) ||
        config::sameYamlData(sharedText, sharedPart(running))) {
        m_appliedVersion = number;
        m_publishedText = sharedPart(running);
        m_problem.clear();
        return;
    }
    const QByteArray merged = withNodeKeys(sharedText);
    ConfigChangeOrigin origin;
    origin.source = sourceFrom(entry.value(u"source"_s).toString());
    origin.author = entry.value(u"author"_s).toString();
    origin.note = u"fleet version %1 from node %2"_s.arg(number).arg(from);
    const QString note = entry.value(u"note"_s).toString();
    if (!note.isEmpty())
        origin.note += u": "_s + note;
    m_applyingFromFleet = true;
    const ConfigChangeResult result = m_lifecycle.apply(merged, origin);
    m_applyingFromFleet = false;
    if (result.outcome == ConfigChangeResult::Outcome::Applied ||
        result.outcome == ConfigChangeResult::Outcome::Unchanged) {
        m_appliedVersion = number;
        m_publishedText = sharedPart(m_lifecycle.runningText());
        m_problem.clear();
        qCInfo(lcFleet) << "applied fleet version" << number << "from node" << from;
        return;
    }
    m_refusedVersion = number;
    QStringList reasons;
    for (const config::ConfigError &error : result.errors)
        reasons.append(error.toString());
    m_problem = u"fleet version %1 from node %2 does not load here, so this node keeps its own "
                u"config: %3"_s.arg(number)
                    .arg(from, reasons.isEmpty() ? result.message : reasons.join(u"; "_s));
    qCCritical(lcFleet).noquote() << m_problem;
}

QByteArray SharedConfig::withNodeKeys(const QByteArray &sharedText) const
{
    const QByteArray running = m_lifecycle.runningText();
    QByteArray merged = sharedText;
    for (const QString &key : nodeKeys()) {
        const QByteArray value = config::topLevelValueText(running, key);
        if (value.isEmpty())
            continue;
        const config::YamlEditResult edited = config::replaceYamlNode(merged, {key}, value);
        if (const auto *text = std::get_if<QByteArray>(&edited))
            merged = *text;
    }
    return merged;
}

void SharedConfig::remember(const QJsonObject &entry)
{
    const quint64 number = quint64(entry.value(u"version"_s).toDouble());
    if (number == 0)
        return;
    m_versions.insert(number, entry);
    while (m_versions.size() > kKeptVersions)
        m_versions.erase(m_versions.begin());
}

void SharedConfig::loadVersions()
{
    m_node.link().send({"HGETALL", m_versionsKey}, [this](const redis::Result &result) {
        if (!result.ok())
            return;
        const QList<redis::Reply> &fields = result.reply.elements;
        if (fields.isEmpty())
            return; // emptied: what this node remembers is all there is until it publishes
        m_versions.clear();
        for (qsizetype i = 1; i < fields.size(); i += 2)
            remember(QJsonDocument::fromJson(fields[i].text).object());
    });
}

QList<ConfigVersionInfo> SharedConfig::versions() const
{
    QList<ConfigVersionInfo> list;
    list.reserve(m_versions.size());
    for (auto it = m_versions.cbegin(); it != m_versions.cend(); ++it) {
        const QJsonObject &entry = it.value();
        ConfigVersionInfo info;
        info.number = it.key();
        info.createdMsSinceEpoch = qint64(entry.value(u"created_ms"_s).toDouble());
        info.source = sourceFrom(entry.value(u"source"_s).toString());
        info.author = entry.value(u"author"_s).toString();
        info.note = u"from node %1"_s.arg(entry.value(u"node"_s).toString());
        const QString note = entry.value(u"note"_s).toString();
        if (!note.isEmpty())
            info.note += u": "_s + note;
        list.append(info);
    }
    std::reverse(list.begin(), list.end()); // newest first
    return list;
}

std::optional<ConfigVersion> SharedConfig::version(quint64 number) const
{
    const auto found = m_versions.constFind(number);
    if (found == m_versions.cend())
        return std::nullopt;
    const QList<ConfigVersionInfo> infos = versions();
    ConfigVersion version;
    for (const ConfigVersionInfo &info : infos) {
        if (info.number == number)
            static_cast<ConfigVersionInfo &>(version) = info;
    }
    version.text = QString::fromUtf8(withNodeKeys(found->value(u"text"_s).toString().toUtf8()));
    // Against the version before it when this node still holds it (the first has none).
    const auto before = m_versions.constFind(number - 1);
    if (before != m_versions.cend()) {
        const QString beforeText =
            QString::fromUtf8(withNodeKeys(before->value(u"text"_s).toString().toUtf8()));
        version.diff =
            config::unifiedDiff(beforeText, version.text, u"fleet version %1"_s.arg(number - 1),
                                u"fleet version %1"_s.arg(number));
    }
    return version;
}

} // namespace switchyard::fleet
