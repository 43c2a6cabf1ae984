#include "fleet/shared_config.h"

#include "config/yaml_text_edit.h"
#include "fleet/fleet_node.h"
#include "lifecycle/config_lifecycle.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcFleet)

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

// Makes `ARGV[2]` (a version's JSON without its number) the next version when the counter still
// holds `ARGV[1]`; answers {1, number} then, else {0, the counter}.
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
}

void SharedConfig::joined()
{
    // Redis may have been emptied, or this node may have missed versions: the head decides.
    m_busy = false;
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
    const QList<ConfigVersionInfo> versions = m_lifecycle.versions();
    const ConfigVersionInfo latest = versions.isEmpty() ? ConfigVersionInfo{} : versions.first();
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
         QByteArray::number(expected), QJsonDocument(entry).toJson(QJsonDocument::Compact)},
        [this, sharedText](const redis::Result &result) {
            m_busy = false;
            if (!result.ok() || result.reply.elements.size() != 2) {
                m_changedWhileBusy = true; // again once the link is back
                return;
            }
            const bool won = result.reply.elements[0].integer == 1;
            const quint64 number = quint64(result.reply.elements[1].integer);
            if (won) {
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
    const QByteArray running = m_lifecycle.runningText();
    if (sharedText == sharedPart(running) ||
        config::sameYamlData(sharedText, sharedPart(running))) {
        m_appliedVersion = number;
        m_publishedText = sharedPart(running);
        m_problem.clear();
        return;
    }
    // The fleet's text with this node's own keys put back, as an overlay puts its keys.
    QByteArray merged = sharedText;
    for (const QString &key : nodeKeys()) {
        const QByteArray value = config::topLevelValueText(running, key);
        if (value.isEmpty())
            continue;
        const config::YamlEditResult edited = config::replaceYamlNode(merged, {key}, value);
        if (const auto *text = std::get_if<QByteArray>(&edited))
            merged = *text;
    }
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

} // namespace switchyard::fleet
