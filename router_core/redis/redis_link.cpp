#include "redis/redis_link.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <utility>
#include <vector>

Q_LOGGING_CATEGORY(lcRedis, "switchyard.redis")

namespace switchyard::redis {

using namespace Qt::StringLiterals;

namespace {

qint64 steadyNowMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void *idAsPrivateData(quint64 id)
{
    return reinterpret_cast<void *>(quintptr(id));
}

// Marks the link as inside a hiredis call for the scope's life: hiredis may free its context
// only when it is not on the stack.
class InHiredis {
public:
    explicit InHiredis(bool &flag) : m_flag(flag), m_was(flag) { m_flag = true; }
    ~InHiredis() { m_flag = m_was; }
    InHiredis(const InHiredis &) = delete;
    InHiredis &operator=(const InHiredis &) = delete;

private:
    bool &m_flag;
    bool m_was;
};

} // namespace

Link::Link(Options options, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_retryPause(m_options.firstRetry),
      m_retryTimer(this), m_deadlineTimer(this)
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &Link::connectNow);
    m_deadlineTimer.setSingleShot(true);
    connect(&m_deadlineTimer, &QTimer::timeout, this, &Link::checkDeadline);
}

Link::~Link()
{
    // Whoever waits on a command is being destroyed with the link or after it: its callback is
    // dropped, not called into a half-destroyed owner.
    m_pending.clear();
    if (m_context) {
        redisAsyncContext *context = std::exchange(m_context, nullptr);
        context->data = nullptr;
        redisAsyncFree(context);
    }
}

void Link::start()
{
    if (m_started)
        return;
    m_started = true;
    m_downSinceMs = QDateTime::currentMSecsSinceEpoch();
    m_problem = u"connecting to %1"_s.arg(m_options.address.toString());
    connectNow();
}

void Link::connectNow()
{
    if (m_context)
        return;
    const QByteArray host = m_options.address.host.toUtf8();
    redisAsyncContext *context = redisAsyncConnect(host.constData(), m_options.address.port);
    if (!context) {
        lose(u"cannot create a Redis connection (out of memory)"_s);
        return;
    }
    if (context->err) {
        const QString reason = u"cannot connect to %1: %2"_s.arg(
            m_options.address.toString(), QString::fromUtf8(context->errstr));
        redisAsyncFree(context);
        lose(reason);
        return;
    }
    m_context = context;
    context->data = this;
    context->ev.data = this;
    context->ev.addRead = &Link::addRead;
    context->ev.delRead = &Link::deleteRead;
    context->ev.addWrite = &Link::addWrite;
    context->ev.delWrite = &Link::deleteWrite;
    context->ev.cleanup = &Link::cleanup;
    redisAsyncSetConnectCallback(context, &Link::onConnect);
    redisAsyncSetDisconnectCallback(context, &Link::onDisconnect);
    // Queued before the socket is even connected: hiredis writes them once it is, and a Redis
    // that accepts but never answers runs into their deadline like any other command.
    handshake();
}

void Link::handshake()
{
    const auto failed = [this](const Result &result) {
        // Without an answer the connection's own loss has said why already.
        if (result.answered() && result.reply.isError())
            lose(u"Redis at %1 refused the handshake: %2"_s.arg(m_options.address.toString(),
                                                                result.problem()));
    };
    if (!m_options.password.isEmpty())
        write({"AUTH", m_options.password}, failed);
    if (m_options.address.database != 0)
        write({"SELECT", QByteArray::number(m_options.address.database)}, failed);
    if (!m_options.clientName.isEmpty())
        write({"CLIENT", "SETNAME", m_options.clientName}, failed);
    write({"PING"}, [this](const Result &result) {
        if (!result.ok() || !m_context || m_up)
            return;
        m_up = true;
        m_problem.clear();
        m_retryPause = m_options.firstRetry;
        qCInfo(lcRedis).noquote() << "connected to" << m_options.address.toString();
        emit linkUp();
    });
}

void Link::send(QList<QByteArray> arguments, Callback done)
{
    if (!m_up) {
        failLater(std::move(done),
                  m_problem.isEmpty() ? u"the Redis link is not started"_s : m_problem);
        return;
    }
    write(arguments, std::move(done));
}

void Link::write(const QList<QByteArray> &arguments, Callback done)
{
    if (!m_context) {
        failLater(std::move(done), m_problem);
        return;
    }
    std::vector<const char *> argv;
    std::vector<size_t> lengths;
    argv.reserve(size_t(arguments.size()));
    lengths.reserve(size_t(arguments.size()));
    for (const QByteArray &argument : arguments) {
        argv.push_back(argument.constData());
        lengths.push_back(size_t(argument.size()));
    }
    const quint64 id = m_nextId++;
    int status = REDIS_ERR;
    {
        const InHiredis guard(m_inHiredis);
        status = redisAsyncCommandArgv(m_context, &Link::onReply, idAsPrivateData(id),
                                       int(argv.size()), argv.data(), lengths.data());
    }
    if (status != REDIS_OK) {
        failLater(std::move(done), u"the Redis connection is closing"_s);
        return;
    }
    ++m_commandsSent;
    m_pending.emplace(id, Pending{std::move(done), steadyNowMs() + m_options.timeout.count()});
    armDeadline();
}

void Link::answer(quint64 id, const redisReply *reply)
{
    const auto found = m_pending.find(id);
    if (found == m_pending.end())
        return; // dropped by the destructor
    Callback done = std::move(found->second.done);
    m_pending.erase(found);
    armDeadline();
    Result result;
    if (reply) {
        result.reply = Reply::fromHiredis(*reply);
    } else {
        ++m_commandsFailed;
        result.failure = m_problem.isEmpty() ? u"the connection to Redis was lost"_s : m_problem;
    }
    if (done)
        done(result);
}

void Link::lose(const QString &reason)
{
    const bool wasUp = m_up;
    m_up = false;
    m_problem = reason;
    if (wasUp) {
        m_downSinceMs = QDateTime::currentMSecsSinceEpoch();
        qCWarning(lcRedis).noquote() << "Redis link down:" << reason;
        emit linkDown(reason);
    }
    dropContext();
    scheduleRetry();
}

void Link::dropContext()
{
    if (!m_context)
        return;
    if (m_inHiredis) {
        // hiredis is on the stack: free the context when it has returned. Its callbacks run
        // then, failing what still waits.
        QTimer::singleShot(0, this, [this] { dropContext(); });
        return;
    }
    redisAsyncContext *context = std::exchange(m_context, nullptr);
    const InHiredis guard(m_inHiredis);
    redisAsyncFree(context); // calls every waiting command back without a reply
}

void Link::scheduleRetry()
{
    if (m_retryTimer.isActive() || !m_started)
        return;
    m_retryTimer.start(m_retryPause);
    m_retryPause = std::min(m_retryPause * 2, m_options.longestRetry);
}

void Link::armDeadline()
{
    if (m_pending.empty()) {
        m_deadlineTimer.stop();
        return;
    }
    const qint64 wait = std::max<qint64>(0, m_pending.begin()->second.deadlineMs - steadyNowMs());
    m_deadlineTimer.start(std::chrono::milliseconds(wait));
}

void Link::checkDeadline()
{
    if (m_pending.empty())
        return;
    if (m_pending.begin()->second.deadlineMs > steadyNowMs()) {
        armDeadline();
        return;
    }
    lose(u"Redis at %1 did not answer within %2 ms"_s.arg(m_options.address.toString())
             .arg(m_options.timeout.count()));
}

void Link::failLater(Callback done, const QString &failure)
{
    ++m_commandsFailed;
    QTimer::singleShot(0, this, [done = std::move(done), failure] {
        if (done)
            done(Result{{}, failure});
    });
}

void Link::onConnect(const redisAsyncContext *context, int status)
{
    auto *link = static_cast<Link *>(context->data);
    if (!link || status == REDIS_OK)
        return;
    // hiredis frees the context after this returns, answering what waits without a reply.
    const QString reason = u"cannot connect to %1: %2"_s.arg(link->m_options.address.toString(),
                                                             QString::fromUtf8(context->errstr));
    link->m_context = nullptr;
    link->lose(reason);
}

void Link::onDisconnect(const redisAsyncContext *context, int status)
{
    auto *link = static_cast<Link *>(context->data);
    if (!link)
        return;
    // hiredis frees the context after this returns.
    if (link->m_context == context)
        link->m_context = nullptr;
    if (link->m_up || status != REDIS_OK) {
        const QString reason =
            status == REDIS_OK
                ? u"Redis at %1 closed the connection"_s.arg(link->m_options.address.toString())
                : u"lost Redis at %1: %2"_s.arg(link->m_options.address.toString(),
                                                QString::fromUtf8(context->errstr));
        link->lose(reason);
    }
}

void Link::onReply(redisAsyncContext *context, void *reply, void *privateData)
{
    auto *link = static_cast<Link *>(context->data);
    if (!link)
        return;
    link->answer(quint64(reinterpret_cast<quintptr>(privateData)),
                 static_cast<const redisReply *>(reply));
}

void Link::setNotifier(std::unique_ptr<QSocketNotifier> &slot, bool wanted, bool read)
{
    if (wanted && !slot && m_context) {
        const auto type = read ? QSocketNotifier::Read : QSocketNotifier::Write;
        slot = std::make_unique<QSocketNotifier>(m_context->c.fd, type);
        connect(slot.get(), &QSocketNotifier::activated, this, [this, read] {
            if (!m_context)
                return;
            const InHiredis guard(m_inHiredis);
            if (read)
                redisAsyncHandleRead(m_context);
            else
                redisAsyncHandleWrite(m_context);
        });
    } else if (!wanted && slot) {
        // It may be the notifier whose signal runs right now: delete it once that returned.
        slot->setEnabled(false);
        slot.release()->deleteLater();
    }
}

void Link::addRead(void *data)
{
    auto *link = static_cast<Link *>(data);
    link->setNotifier(link->m_readNotifier, true, true);
}

void Link::deleteRead(void *data)
{
    auto *link = static_cast<Link *>(data);
    link->setNotifier(link->m_readNotifier, false, true);
}

void Link::addWrite(void *data)
{
    auto *link = static_cast<Link *>(data);
    link->setNotifier(link->m_writeNotifier, true, false);
}

void Link::deleteWrite(void *data)
{
    auto *link = static_cast<Link *>(data);
    link->setNotifier(link->m_writeNotifier, false, false);
}

void Link::cleanup(void *data)
{
    auto *link = static_cast<Link *>(data);
    link->setNotifier(link->m_readNotifier, false, true);
    link->setNotifier(link->m_writeNotifier, false, false);
}

} // namespace switchyard::redis
