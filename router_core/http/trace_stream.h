#pragma once

#include "httpwire/response_writer.h"
#include "telemetry/request_recorder.h"
#include "telemetry/trace_json.h"

#include <QObject>
#include <QTimer>
#include <list>

namespace switchyard::http {

using httpwire::ResponseWriter;
using protocol::HeaderList;

// GET /admin/v1/traces/stream: a text/event-stream of requests as they finish
// (`trace.finished`, the record) and, every second, of those still running (`trace.running`),
// each through the subscriber's own filter. A subscriber that reads slower than requests finish
// is not buffered for without bound: past kMaxPendingBytes its events are left out and counted,
// and a `trace.dropped` event says how many once it catches up.
class TraceStream final : public QObject, public telemetry::TraceSink {
    Q_OBJECT
public:
    TraceStream(telemetry::RequestRecorder &recorder, QObject *parent = nullptr);
    ~TraceStream() override;

    void subscribe(ResponseWriter writer, const HeaderList &headers,
                   const telemetry::TraceFilter &filter);
    int subscribers() const { return int(m_subscribers.size()); }

    void traceFinished(const telemetry::Trace &trace) override;

    static constexpr qint64 kMaxPendingBytes = 1024 * 1024;

private:
    struct Subscriber {
        ResponseWriter writer;
        telemetry::TraceFilter filter;
        quint64 dropped = 0;
    };
    // Sends one event; false when the subscriber is gone.
    bool send(Subscriber &subscriber, QByteArrayView event, const QJsonObject &data);
    void sendRunning();
    void removeGone();

    telemetry::RequestRecorder &m_recorder;
    std::list<Subscriber> m_subscribers;
    QTimer m_runningTimer{this}; // a child: moveToThread() takes it to the engine's thread
};

} // namespace switchyard::http
