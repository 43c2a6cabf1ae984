#include "gateway_process.h"

#include "test_client.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTest>

using namespace Qt::StringLiterals;

namespace switchyard::testing {

GatewayProcess::GatewayProcess(const QString &binary, const QString &name,
                               const QString &configPath, const QString &stateDirectory,
                               const Options &options)
    : m_name(name)
{
    QProcessEnvironment variables = QProcessEnvironment::systemEnvironment();
    for (auto it = options.environment.begin(); it != options.environment.end(); ++it)
        variables.insert(it.key(), it.value());
    m_process.setProcessEnvironment(variables);
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    QObject::connect(&m_process, &QProcess::readyReadStandardOutput, &m_process,
                     [this] { m_output += m_process.readAllStandardOutput(); });
    QObject::connect(&m_process, &QProcess::readyReadStandardError, &m_process,
                     [this] { m_errors += m_process.readAllStandardError(); });
    m_process.start(binary,
                    QStringList{u"--headless"_s, u"--config"_s, configPath, u"--state-dir"_s,
                                stateDirectory, u"--log-level"_s, u"info"_s} +
                        options.extraArguments);
}

GatewayProcess::~GatewayProcess()
{
    kill();
}

quint16 GatewayProcess::waitForPort()
{
    const QRegularExpression baseUrl(u"OpenAI base URL http://127\\.0\\.0\\.1:(\\d+)/v1"_s);
    QDeadlineTimer deadline(30000);
    while (!baseUrl.match(QString::fromUtf8(m_output)).hasMatch() && !deadline.hasExpired() &&
           running())
        QTest::qWait(20);
    m_port = baseUrl.match(QString::fromUtf8(m_output)).captured(1).toUShort();
    return m_port;
}

bool GatewayProcess::waitForExit(int timeoutMs)
{
    return QTest::qWaitFor([this] { return !running(); }, timeoutMs);
}

void GatewayProcess::stop()
{
    if (!running())
        return;
    m_process.terminate();
    m_process.waitForFinished(15000);
}

void GatewayProcess::kill()
{
    if (!running())
        return;
    m_process.kill();
    m_process.waitForFinished(10000);
}

QJsonObject getJson(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", path);
    if (!client.waitForFinished(10000) || client.status() != 200)
        return {};
    return QJsonDocument::fromJson(client.body()).object();
}

QStringList liveNodes(quint16 port)
{
    QStringList names;
    for (const QJsonValue &node : getJson(port, "/admin/v1/fleet").value(u"nodes"_s).toArray())
        names.append(node.toObject().value(u"node"_s).toString());
    return names;
}

} // namespace switchyard::testing
