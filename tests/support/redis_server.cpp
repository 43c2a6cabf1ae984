#include "redis_server.h"

#include <QDeadlineTimer>
#include <QStandardPaths>
#include <QTcpServer>
#include <QThread>
#include <QtDebug>
#include <algorithm>
#include <csignal>
#include <hiredis/hiredis.h>
#include <vector>

namespace switchyard::testing {

using namespace Qt::StringLiterals;

namespace {

quint16 freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort(); // closed on return: Redis binds it next (a rare race is retried)
}

QByteArray replyText(const redisReply *reply)
{
    if (!reply)
        return {};
    switch (reply->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        return QByteArray(reply->str, qsizetype(reply->len));
    case REDIS_REPLY_INTEGER:
        return QByteArray::number(reply->integer);
    case REDIS_REPLY_ARRAY: {
        QList<QByteArray> parts;
        for (size_t i = 0; i < reply->elements; ++i)
            parts.append(replyText(reply->element[i]));
        return parts.join('\n');
    }
    default:
        return {};
    }
}

} // namespace

RedisServer::~RedisServer()
{
    kill();
}

bool RedisServer::start(const QByteArray &password)
{
    m_password = password;
    m_directory = std::make_unique<QTemporaryDir>();
    for (int attempt = 0; attempt < 5; ++attempt) {
        m_port = freeLoopbackPort();
        if (m_port != 0 && launch())
            return true;
    }
    qWarning() << "could not start redis-server on a free loopback port";
    return false;
}

bool RedisServer::restart()
{
    kill();
    return launch();
}

bool RedisServer::launch()
{
    const QString program = QStandardPaths::findExecutable(u"redis-server"_s);
    if (program.isEmpty()) {
        qWarning() << "redis-server is not installed (scripts/setup.sh installs it)";
        return false;
    }
    QStringList arguments{u"--port"_s,
                          QString::number(m_port),
                          u"--bind"_s,
                          u"127.0.0.1"_s,
                          u"--dir"_s,
                          m_directory->path(),
                          u"--save"_s,
                          u""_s,
                          u"--appendonly"_s,
                          m_persistent ? u"yes"_s : u"no"_s,
                          u"--appendfsync"_s,
                          u"always"_s,
                          u"--daemonize"_s,
                          u"no"_s,
                          u"--protected-mode"_s,
                          u"no"_s,
                          u"--loglevel"_s,
                          u"warning"_s};
    if (!m_password.isEmpty())
        arguments << u"--requirepass"_s << QString::fromUtf8(m_password);
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->start(program, arguments);
    if (!m_process->waitForStarted(5000))
        return false;
    const QDeadlineTimer deadline(10000);
    while (!deadline.hasExpired()) {
        if (m_process->state() != QProcess::Running) {
            m_process->waitForFinished(1000);
            qWarning().noquote() << "redis-server on port" << m_port
                                 << "exited:" << m_process->readAll();
            return false;
        }
        if (command({"PING"}) == "PONG")
            return true;
        QThread::msleep(20);
    }
    qWarning() << "redis-server on port" << m_port << "did not answer PING";
    return false;
}

void RedisServer::kill()
{
    if (!m_process)
        return;
    resume(); // a stopped process takes SIGKILL too, but its pipes are easier on a running one
    m_process->kill();
    m_process->waitForFinished(5000);
    m_process.reset();
}

void RedisServer::suspend()
{
    if (m_process)
        ::kill(pid_t(m_process->processId()), SIGSTOP);
}

void RedisServer::resume()
{
    if (m_process)
        ::kill(pid_t(m_process->processId()), SIGCONT);
}

bool RedisServer::isRunning() const
{
    return m_process && m_process->state() == QProcess::Running;
}

QString RedisServer::url() const
{
    return u"redis://127.0.0.1:%1/0"_s.arg(m_port);
}

QByteArray RedisServer::command(const QList<QByteArray> &arguments) const
{
    const timeval timeout{2, 0};
    redisContext *context = redisConnectWithTimeout("127.0.0.1", m_port, timeout);
    if (!context || context->err) {
        if (context)
            redisFree(context);
        return {};
    }
    redisSetTimeout(context, timeout);
    if (!m_password.isEmpty()) {
        auto *auth = static_cast<redisReply *>(
            redisCommand(context, "AUTH %b", m_password.constData(), size_t(m_password.size())));
        if (auth)
            freeReplyObject(auth);
    }
    std::vector<const char *> argv;
    std::vector<size_t> lengths;
    for (const QByteArray &argument : arguments) {
        argv.push_back(argument.constData());
        lengths.push_back(size_t(argument.size()));
    }
    auto *reply = static_cast<redisReply *>(
        redisCommandArgv(context, int(argv.size()), argv.data(), lengths.data()));
    const QByteArray text = replyText(reply);
    if (reply)
        freeReplyObject(reply);
    redisFree(context);
    return text;
}

QList<QByteArray> RedisServer::keys(const QByteArray &pattern) const
{
    const QByteArray text = command({"KEYS", pattern});
    QList<QByteArray> found = text.isEmpty() ? QList<QByteArray>() : text.split('\n');
    std::sort(found.begin(), found.end());
    return found;
}

} // namespace switchyard::testing
