#include "fleet_test_bed.h"

#include <QFile>
#include <QtDebug>

namespace switchyard::testing {

using namespace Qt::StringLiterals;

FleetTestBed::FleetTestBed(const QString &binary) : m_binary(binary)
{
    config.providers = "providers:\n" + openAiProvider("fake", m_fake.baseUrl(), "[test-model]") +
                       "    capacity: 256\n";
}

bool FleetTestBed::start()
{
    if (!m_directory.isValid()) {
        qWarning("cannot create a temporary directory: %s", qPrintable(m_directory.errorString()));
        return false;
    }
    return m_redis.start();
}

GatewayProcess &FleetTestBed::startNode(const QString &name, const NodeOptions &options)
{
    const QString state = stateDirectory(options.stateName.isEmpty() ? name : options.stateName);
    m_nodes.push_back(std::make_unique<GatewayProcess>(
        m_binary, name, writeConfig(name), state,
        GatewayProcess::Options{options.environment, options.extraArguments}));
    return *m_nodes.back();
}

QByteArray FleetTestBed::openAiProvider(QByteArrayView id, const QByteArray &baseUrl,
                                        QByteArrayView models)
{
    return "  - id: " + id.toByteArray() +
           "\n"
           "    kind: openai\n"
           "    base_url: " +
           baseUrl +
           "\n"
           "    models: " +
           models.toByteArray() + "\n";
}

QString FleetTestBed::configPath(const QString &node) const
{
    return m_directory.filePath(node + u".yaml"_s);
}

QString FleetTestBed::stateDirectory(const QString &stateName) const
{
    return m_directory.filePath(u"state-"_s + stateName);
}

QByteArray FleetTestBed::configText(const QString &node) const
{
    return "listen: 127.0.0.1:0\n"
           "fleet:\n"
           "  redis: " +
           m_redis.url().toUtf8() +
           "\n"
           "  node: " +
           node.toUtf8() + "\n" + config.fleetTiming + "  timeout: 300ms\n" + config.providers +
           config.extra;
}

// The path written; empty, after a warning, when it could not be written.
QString FleetTestBed::writeConfig(const QString &node) const
{
    const QString path = configPath(node);
    const QByteArray text = configText(node);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size()) {
        qWarning("cannot write %s: %s", qPrintable(path), qPrintable(file.errorString()));
        return {};
    }
    return path;
}

} // namespace switchyard::testing
