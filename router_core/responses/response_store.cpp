#include "responses/response_store.h"

#include "storage/state_database.h"

#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>
#include <QSqlError>
#include <QSqlQuery>
#include <mutex>

Q_LOGGING_CATEGORY(lcResponses, "switchyard.responses")

namespace switchyard::responses {

using namespace Qt::StringLiterals;

namespace {

// Qt binds a null string or byte array as SQL NULL, which the NOT NULL columns refuse: an empty
// tenant or key id is an empty text.
QString text(const QString &value)
{
    return value.isNull() ? QString(u""_s) : value;
}
QString text(const QByteArray &value)
{
    return QString::fromLatin1(value.isNull() ? QByteArray("") : value);
}
QByteArray blob(const QByteArray &value)
{
    return value.isNull() ? QByteArray("") : value;
}

const QStringList kSchema{
    u"CREATE TABLE IF NOT EXISTS stored_responses ("
    u" id TEXT PRIMARY KEY,"
    u" owner TEXT NOT NULL,"
    u" tenant TEXT NOT NULL,"
    u" key_id TEXT NOT NULL,"
    u" model TEXT NOT NULL,"
    u" background INTEGER NOT NULL,"
    u" priority INTEGER NOT NULL,"
    u" status TEXT NOT NULL,"
    u" created_at_ms INTEGER NOT NULL,"
    u" started_at_ms INTEGER NOT NULL,"
    u" finished_at_ms INTEGER NOT NULL,"
    u" expires_at_ms INTEGER NOT NULL,"
    u" runs INTEGER NOT NULL,"
    u" request BLOB NOT NULL,"
    u" headers BLOB NOT NULL,"
    u" previous_response_id TEXT NOT NULL,"
    u" history BLOB NOT NULL,"
    u" input_items BLOB NOT NULL,"
    u" response BLOB NOT NULL)"_s,
    u"CREATE TABLE IF NOT EXISTS response_events ("
    u" response_id TEXT NOT NULL,"
    u" sequence_number INTEGER NOT NULL,"
    u" type TEXT NOT NULL,"
    u" data BLOB NOT NULL,"
    u" PRIMARY KEY (response_id, sequence_number))"_s,
};

const char *const kStatusNames[] = {"queued",     "in_progress", "completed",
                                    "incomplete", "failed",      "cancelled"};
const char *const kPriorityNames[] = {"high", "normal", "low"};

} // namespace

QString statusName(Status status)
{
    return QString::fromLatin1(kStatusNames[int(status)]);
}

std::optional<Status> statusFromName(QStringView name)
{
    for (int index = 0; index < 6; ++index) {
        if (name == QLatin1StringView(kStatusNames[index]))
            return Status(index);
    }
    return std::nullopt;
}

QString priorityName(Priority priority)
{
    return QString::fromLatin1(kPriorityNames[int(priority)]);
}

std::optional<Priority> priorityFromName(QStringView name)
{
    for (int index = 0; index < 3; ++index) {
        if (name.compare(QLatin1StringView(kPriorityNames[index]), Qt::CaseInsensitive) == 0)
            return Priority(index);
    }
    return std::nullopt;
}

qint64 StoredResponse::approximateBytes() const
{
    qint64 bytes = 256 + id.size() + owner.size() * 2 + tenant.size() * 2 + keyId.size() * 2 +
                   model.size() * 2 + request.size() + headers.size() + history.size() +
                   inputItems.size() + response.size() + previousResponseId.size();
    for (const LoggedEvent &event : events)
        bytes += 48 + event.type.size() + event.data.size();
    return bytes;
}

// The store's own thread: the only user of its database connection. Changes arrive from the
// engine thread under m_mutex; each batch is one transaction, committed as soon as it arrives.
class ResponseWriterThread final : public QObject {
public:
    using Change = std::function<void(ResponseWriterThread &)>;

    explicit ResponseWriterThread(QString path)
        : m_path(std::move(path)),
          m_connectionName(u"switchyard-responses-%1"_s.arg(quintptr(this), 0, 16))
    {}

    // Writer thread.
    QString open(QList<StoredResponse> &loaded)
    {
        if (m_path.isEmpty())
            return {};
        storage::OpenedDatabase opened = storage::openStateDatabase(m_path, m_connectionName);
        if (!opened.ok())
            return opened.error;
        m_database = opened.database;
        if (QString error = storage::ensureSchema(m_database, kSchema); !error.isEmpty()) {
            close();
            return error;
        }
        QSqlQuery rows(m_database);
        if (!rows.exec(u"SELECT id, owner, tenant, key_id, model, background, priority, status, "
                       u"created_at_ms, started_at_ms, finished_at_ms, expires_at_ms, runs, "
                       u"request, headers, previous_response_id, history, input_items, response "
                       u"FROM stored_responses ORDER BY created_at_ms"_s)) {
            const QString error = rows.lastError().text();
            close();
            return error;
        }
        QHash<QByteArray, qsizetype> index;
        while (rows.next()) {
            StoredResponse response;
            response.id = rows.value(0).toByteArray();
            response.owner = rows.value(1).toString();
            response.tenant = rows.value(2).toString();
            response.keyId = rows.value(3).toString();
            response.model = rows.value(4).toString();
            response.background = rows.value(5).toBool();
            response.priority = Priority(qBound(0, rows.value(6).toInt(), 2));
            const std::optional<Status> status = statusFromName(rows.value(7).toString());
            if (!status)
                continue; // a status no release wrote: left for expiry
            response.status = *status;
            response.createdAtMs = rows.value(8).toLongLong();
            response.startedAtMs = rows.value(9).toLongLong();
            response.finishedAtMs = rows.value(10).toLongLong();
            response.expiresAtMs = rows.value(11).toLongLong();
            response.runs = rows.value(12).toInt();
            response.request = rows.value(13).toByteArray();
            response.headers = rows.value(14).toByteArray();
            response.previousResponseId = rows.value(15).toByteArray();
            response.history = rows.value(16).toByteArray();
            response.inputItems = rows.value(17).toByteArray();
            response.response = rows.value(18).toByteArray();
            index.insert(response.id, loaded.size());
            loaded.append(std::move(response));
        }
        rows.finish();
        QSqlQuery events(m_database);
        if (!events.exec(u"SELECT response_id, sequence_number, type, data FROM response_events "
                         u"ORDER BY response_id, sequence_number"_s)) {
            const QString error = events.lastError().text();
            close();
            return error;
        }
        while (events.next()) {
            const auto at = index.constFind(events.value(0).toByteArray());
            if (at == index.constEnd())
                continue;
            loaded[*at].events.append({events.value(1).toLongLong(), events.value(2).toByteArray(),
                                       events.value(3).toByteArray()});
        }
        return {};
    }

    // Engine thread: queues a change; `ticket` comes back through `committed` once it is
    // written.
    void add(quint64 ticket, Change change, std::function<void(quint64)> committed)
    {
        std::lock_guard lock(m_mutex);
        m_changes.append(std::move(change));
        m_lastTicket = ticket;
        m_committed = std::move(committed);
        if (m_writeRequested)
            return;
        m_writeRequested = true;
        QMetaObject::invokeMethod(this, [this] { write(); });
    }

    // Writer thread.
    void write()
    {
        QList<Change> changes;
        quint64 ticket = 0;
        std::function<void(quint64)> committed;
        {
            std::lock_guard lock(m_mutex);
            changes = std::exchange(m_changes, {});
            ticket = m_lastTicket;
            committed = m_committed;
            m_writeRequested = false;
        }
        if (m_database.isOpen()) {
            m_error.clear();
            m_database.transaction();
            for (const Change &change : changes)
                change(*this);
            if (m_error.isEmpty() && !m_database.commit())
                m_error = m_database.lastError().text();
            if (!m_error.isEmpty()) {
                m_database.rollback();
                if (m_error != m_lastError)
                    qCWarning(lcResponses).noquote()
                        << u"stored responses: %1 change(s) could not be written to the state "
                           u"database; retrying every second, and what waits for them (a "
                           u"background accept, a stream's next events) waits too: %2"_s
                               .arg(changes.size())
                               .arg(m_error);
                m_lastError = m_error;
                // Kept, in order, before anything newer: every change is idempotent (a row
                // replaced or deleted), so writing the batch again is safe. Nothing is reported
                // committed, so no client hears of what is not on disk.
                std::lock_guard lock(m_mutex);
                m_changes = changes + m_changes;
                if (!m_retryScheduled) {
                    m_retryScheduled = true;
                    QTimer::singleShot(1000, this, [this] {
                        m_retryScheduled = false;
                        write();
                    });
                }
                return;
            }
            if (!m_lastError.isEmpty())
                qCInfo(lcResponses) << "stored responses: the state database is written again";
            m_lastError.clear();
        }
        if (committed)
            committed(ticket);
    }

    // Writer thread, inside write(): the statements a change runs.
    void upsert(const StoredResponse &response)
    {
        QSqlQuery query(m_database);
        query.prepare(u"INSERT OR REPLACE INTO stored_responses (id, owner, tenant, key_id, model, "
                      u"background, priority, status, created_at_ms, started_at_ms, "
                      u"finished_at_ms, expires_at_ms, runs, request, headers, "
                      u"previous_response_id, history, input_items, response) VALUES "
                      u"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"_s);
        query.addBindValue(text(response.id));
        query.addBindValue(text(response.owner));
        query.addBindValue(text(response.tenant));
        query.addBindValue(text(response.keyId));
        query.addBindValue(text(response.model));
        query.addBindValue(int(response.background));
        query.addBindValue(int(response.priority));
        query.addBindValue(statusName(response.status));
        query.addBindValue(response.createdAtMs);
        query.addBindValue(response.startedAtMs);
        query.addBindValue(response.finishedAtMs);
        query.addBindValue(response.expiresAtMs);
        query.addBindValue(response.runs);
        query.addBindValue(blob(response.request));
        query.addBindValue(blob(response.headers));
        query.addBindValue(text(response.previousResponseId));
        query.addBindValue(blob(response.history));
        query.addBindValue(blob(response.inputItems));
        query.addBindValue(blob(response.response));
        exec(query);
    }
    void appendEvents(const QByteArray &id, const QList<LoggedEvent> &events)
    {
        QSqlQuery query(m_database);
        query.prepare(u"INSERT OR REPLACE INTO response_events (response_id, sequence_number, "
                      u"type, data) VALUES (?, ?, ?, ?)"_s);
        for (const LoggedEvent &event : events) {
            query.addBindValue(QString::fromLatin1(id));
            query.addBindValue(event.sequenceNumber);
            query.addBindValue(text(event.type));
            query.addBindValue(blob(event.data));
            exec(query);
        }
    }
    void remove(const QByteArray &id)
    {
        for (const QString &statement : {u"DELETE FROM stored_responses WHERE id = ?"_s,
                                         u"DELETE FROM response_events WHERE response_id = ?"_s}) {
            QSqlQuery query(m_database);
            query.prepare(statement);
            query.addBindValue(QString::fromLatin1(id));
            exec(query);
        }
    }

    void close()
    {
        m_database = QSqlDatabase();
        storage::closeStateDatabase(m_connectionName);
    }

private:
    void exec(QSqlQuery &query)
    {
        if (!query.exec() && m_error.isEmpty())
            m_error = query.lastError().text();
    }

    QString m_path;
    QString m_connectionName;
    QSqlDatabase m_database;
    std::mutex m_mutex;
    QList<Change> m_changes;
    quint64 m_lastTicket = 0;
    std::function<void(quint64)> m_committed;
    bool m_writeRequested = false;
    bool m_retryScheduled = false; // writer thread only
    QString m_error;
    QString m_lastError;
};

ResponseStore::ResponseStore(Options options, const timing::Clock &clock, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_clock(clock)
{
    m_thread.setObjectName(u"stored-responses"_s);
    m_writer = new ResponseWriterThread(m_options.databasePath);
    m_writer->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_writer, &QObject::deleteLater);
    m_thread.start();
    // Retention is counted in days; once a minute is often enough to enforce it.
    m_expiryTimer = new QTimer(this);
    m_expiryTimer->setInterval(std::chrono::minutes(1));
    connect(m_expiryTimer, &QTimer::timeout, this, [this] { expire(); });
    m_expiryTimer->start();
}

ResponseStore::~ResponseStore()
{
    waitForWrites();
    ResponseWriterThread *writer = m_writer;
    QMetaObject::invokeMethod(
        writer, [writer] { writer->close(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

QString ResponseStore::open()
{
    QList<StoredResponse> loaded;
    QString error;
    ResponseWriterThread *writer = m_writer;
    QMetaObject::invokeMethod(
        writer, [&] { error = writer->open(loaded); }, Qt::BlockingQueuedConnection);
    if (!error.isEmpty()) {
        qCWarning(lcResponses).noquote()
            << u"stored responses: the state database cannot be opened, responses and background "
               u"tasks are kept in memory only: %1"_s.arg(error);
        return error;
    }
    for (StoredResponse &response : loaded) {
        const QByteArray id = response.id;
        const qint64 size = response.approximateBytes();
        m_byCreation.insert({response.createdAtMs, id});
        m_sizes.insert(id, size);
        m_bytes += size;
        m_responses.insert(id, std::move(response));
    }
    expire();
    return {};
}

void ResponseStore::setBounds(std::chrono::milliseconds retention, qint64 maxBytes)
{
    m_options.retention = retention;
    m_options.maxBytes = maxBytes;
    expire();
}

QByteArray ResponseStore::newId()
{
    quint64 words[2];
    QRandomGenerator::system()->fillRange(words);
    QByteArray id = "resp_";
    for (const quint64 word : words)
        id += QByteArray::number(word, 16).rightJustified(16, '0');
    return id;
}

StoredResponse *ResponseStore::peek(const QByteArray &id)
{
    const auto found = m_responses.find(id);
    return found == m_responses.end() ? nullptr : &found.value();
}

StoredResponse *ResponseStore::find(const QByteArray &id)
{
    const auto found = m_responses.find(id);
    if (found == m_responses.end())
        return nullptr;
    if (found->expiresAtMs <= m_clock.msSinceEpoch() && isFinished(found->status)) {
        ++m_expiredByAge;
        erase(id);
        return nullptr;
    }
    return &found.value();
}

StoredResponse &ResponseStore::put(StoredResponse response)
{
    const QByteArray id = response.id;
    if (m_responses.contains(id))
        erase(id);
    m_byCreation.insert({response.createdAtMs, id});
    StoredResponse &kept = m_responses.insert(id, std::move(response)).value();
    const qint64 size = kept.approximateBytes();
    m_sizes.insert(id, size);
    m_bytes += size;
    writeChange([row = kept](ResponseWriterThread &writer) {
        writer.remove(row.id);
        writer.upsert(row);
        writer.appendEvents(row.id, row.events);
    });
    expire(id);
    return m_responses[id];
}

void ResponseStore::update(StoredResponse &response)
{
    const qint64 size = response.approximateBytes();
    m_bytes += size - m_sizes.value(response.id);
    m_sizes.insert(response.id, size);
    StoredResponse row = response;
    row.events.clear(); // not rewritten: appendEvents wrote each once
    writeChange([row = std::move(row)](ResponseWriterThread &writer) { writer.upsert(row); });
}

void ResponseStore::appendEvents(StoredResponse &response, QList<LoggedEvent> events)
{
    if (events.isEmpty())
        return;
    response.events.append(events);
    const qint64 size = response.approximateBytes();
    m_bytes += size - m_sizes.value(response.id);
    m_sizes.insert(response.id, size);
    writeChange([id = response.id, events = std::move(events)](ResponseWriterThread &writer) {
        writer.appendEvents(id, events);
    });
}

void ResponseStore::remove(const QByteArray &id)
{
    if (m_responses.contains(id))
        erase(id);
}

void ResponseStore::erase(const QByteArray &id)
{
    const auto found = m_responses.find(id);
    if (found == m_responses.end())
        return;
    m_byCreation.erase({found->createdAtMs, id});
    m_bytes -= m_sizes.take(id);
    m_responses.erase(found);
    writeChange([id](ResponseWriterThread &writer) { writer.remove(id); });
    if (onRemoved)
        onRemoved(id);
}

void ResponseStore::expire(const QByteArray &spare)
{
    const qint64 now = m_clock.msSinceEpoch();
    QList<QByteArray> byAge;
    QList<QByteArray> byBytes;
    qint64 bytes = m_bytes;
    // Oldest first. A task still queued or running is never dropped: its client was promised an
    // answer, and the queue's own bound (per tenant) limits how many there are.
    for (const auto &[createdAtMs, id] : m_byCreation) {
        const StoredResponse &response = m_responses[id];
        if (!isFinished(response.status) || id == spare)
            continue;
        if (response.expiresAtMs <= now) {
            byAge.append(id);
            bytes -= m_sizes.value(id);
        } else if (bytes > m_options.maxBytes) {
            byBytes.append(id);
            bytes -= m_sizes.value(id);
        }
    }
    for (const QByteArray &id : byAge)
        erase(id);
    for (const QByteArray &id : byBytes)
        erase(id);
    m_expiredByAge += quint64(byAge.size());
    m_expiredByBytes += quint64(byBytes.size());
}

quint64 ResponseStore::writeChange(std::function<void(ResponseWriterThread &)> change)
{
    const quint64 ticket = ++m_lastTicket;
    m_writer->add(ticket, std::move(change), [self = QPointer<ResponseStore>(this)](quint64 done) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, done] {
                if (self)
                    self->committed(done);
            },
            Qt::QueuedConnection);
    });
    return ticket;
}

void ResponseStore::committed(quint64 ticket)
{
    m_committedTicket = std::max(m_committedTicket, ticket);
    while (!m_waiting.empty() && m_waiting.begin()->first <= m_committedTicket) {
        std::function<void()> done = std::move(m_waiting.begin()->second);
        m_waiting.erase(m_waiting.begin());
        done();
    }
}

void ResponseStore::afterWrite(std::function<void()> done)
{
    if (m_lastTicket <= m_committedTicket) {
        // Nothing pending: still later, never inside the caller's own call.
        QMetaObject::invokeMethod(this, std::move(done), Qt::QueuedConnection);
        return;
    }
    m_waiting.emplace(m_lastTicket, std::move(done));
}

void ResponseStore::waitForWrites()
{
    ResponseWriterThread *writer = m_writer;
    QMetaObject::invokeMethod(
        writer, [writer] { writer->write(); }, Qt::BlockingQueuedConnection);
}

} // namespace switchyard::responses
