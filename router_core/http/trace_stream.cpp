#include "http/trace_stream.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::http {

namespace {
constexpr std::chrono::seconds kRunningInterval{1};
constexpr int kMostRunningListed = 50;
} // namespace

TraceStream::TraceStream(telemetry::RequestRecorder &recorder, QObject *parent)
    : QObject(parent), m_recorder(recorder)
{
    m_recorder.addSink(this);
    m_runningTimer.setInterval(kRunningInterval);
    connect(&m_runningTimer, &QTimer::timeout, this, &TraceStream::sendRunning);
}

TraceStream::~TraceStream()
{
    m_recorder.removeSink(this);
    for (Subscriber &subscriber : m_subscribers)
        subscriber.writer.endEventStream();
}

void TraceStream::subscribe(ResponseWriter writer, const HeaderList &headers,
                            const telemetry::TraceFilter &filter)
{
    writer.beginEventStream(headers);
    m_subscribers.push_back(Subscriber{std::move(writer), filter, 0});
    sendRunning(); // what runs now, at once: a new subscriber needs not wait a second
    if (!m_runningTimer.isActive())
        m_runningTimer.start();
}

bool TraceStream::send(Subscriber &subscriber, QByteArrayView event, const QJsonObject &data)
{
    if (!subscriber.writer.clientConnected())
        return false;
    if (subscriber.writer.pendingBytes() > kMaxPendingBytes) {
        ++subscriber.dropped;
        return true;
    }
    if (subscriber.dropped > 0) {
        const QByteArray dropped =
            "event: trace.dropped\ndata: {\"count\":" + QByteArray::number(subscriber.dropped) +
            "}\n\n";
        subscriber.dropped = 0;
        subscriber.writer.writeStreamData(dropped);
    }
    subscriber.writer.writeStreamData("event: " + event.toByteArray() + "\ndata: " +
                                      QJsonDocument(data).toJson(QJsonDocument::Compact) + "\n\n");
    return subscriber.writer.clientConnected();
}

void TraceStream::traceFinished(const telemetry::Trace &trace)
{
    if (m_subscribers.empty())
        return;
    QJsonObject data; // made once, for the first subscriber that wants it
    bool gone = false;
    for (Subscriber &subscriber : m_subscribers) {
        if (!subscriber.filter.matches(trace))
            continue;
        if (data.isEmpty())
            data = telemetry::recordJson(trace);
        gone = !send(subscriber, "trace.finished", data) || gone;
    }
    if (gone)
        removeGone();
}

void TraceStream::sendRunning()
{
    const QList<const telemetry::TraceBuilder *> running =
        m_recorder.newestLive(kMostRunningListed);
    for (Subscriber &subscriber : m_subscribers) {
        QJsonArray data;
        for (const telemetry::TraceBuilder *builder : running) {
            // Its latency so far, so "slower than" finds the slow ones while they still run.
            telemetry::RequestRecord record = builder->trace();
            record.totalMicros = builder->elapsedMicros();
            if (!subscriber.filter.matches(record))
                continue;
            QJsonObject item = telemetry::recordJson(record);
            item.insert(QStringLiteral("state"), QStringLiteral("in_progress"));
            data.append(item);
        }
        send(subscriber, "trace.running",
             QJsonObject{{QStringLiteral("running"), m_recorder.liveCount()},
                         {QStringLiteral("data"), data}});
    }
    removeGone();
}

void TraceStream::removeGone()
{
    m_subscribers.remove_if(
        [](const Subscriber &subscriber) { return !subscriber.writer.clientConnected(); });
    if (m_subscribers.empty())
        m_runningTimer.stop();
}

} // namespace switchyard::http
