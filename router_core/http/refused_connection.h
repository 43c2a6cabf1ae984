#pragma once

#include "httpwire/chunked_encoding.h"
#include "protocol/openai_error.h"
#include "timing/deadline_scheduler.h"

#include <QByteArray>
#include <QObject>
#include <chrono>
#include <memory>

class QTcpSocket;

namespace switchyard::http {

struct ConnectionLedger;

// A connection refused at the door, over `limits.max_connections` or
// `limits.max_connections_per_address`, closed as nginx's lingering close does. An answer
// written at once, before the request was read, meets a client still sending its body; closing
// with those bytes unread or still arriving makes the kernel reset the connection, and a reset
// can destroy the answer before the client reads it (curl's "connection reset", a fetch() that
// never settles). So the refusal first drains: it reads and drops the request being sent,
// following its head and then its Content-Length or chunked body just far enough to know where
// it ends, and answers 503 once it has, in the shape of the request's path. Then it closes only
// its sending side and drops what still arrives until the client closes.
//
// Bounded, so that refusing opens no slowloris: the answer goes after the request, after
// kMostReadBeforeAnswer bytes or after kLongestWaitForRequest, whichever comes first; the
// connection lives kLongestLife from accept at most, and reads at most kMostDroppedAfterAnswer
// after its answer (then the client's writes wait on TCP's window until that life is over). The
// listener bounds how many drain at once (`limits.max_refusals_draining`).
class RefusedConnection final : public QObject {
public:
    // Enough for the head and body of a usual chat request; a client still sending past it gets
    // its answer while it sends. Also what Qt may buffer of the connection at any time.
    static constexpr qint64 kMostReadBeforeAnswer = 64 * 1024;
    // For a client that sends nothing, or sends slowly: a client sends its request as soon as it
    // has connected, and a second is long on any link that can carry a request at all.
    static constexpr std::chrono::milliseconds kLongestWaitForRequest{1000};
    // From accept to close, whatever the client does.
    static constexpr std::chrono::milliseconds kLongestLife{2000};
    // A client that sends a large body (Node's fetch does not stop writing a body it has
    // buffered) gets it out, and its close is seen at once; a client that floods is not read
    // beyond this, so it costs the engine thread no more than a few copies.
    static constexpr qint64 kMostDroppedAfterAnswer = 1024 * 1024;

    // Takes over `socket` (as its child) until it closes.
    RefusedConnection(QTcpSocket *socket, const protocol::ApiError &refusal,
                      std::shared_ptr<ConnectionLedger> ledger,
                      timing::DeadlineScheduler &scheduler);
    ~RefusedConnection() override;

private:
    enum class Stage {
        Head,        // the request's header block is arriving
        Body,        // its Content-Length body: m_bodyRemaining more bytes
        ChunkedBody, // its chunked body, up to the last chunk
        Answered,    // the 503 is written; what arrives is dropped
        NotReading,  // kMostDroppedAfterAnswer dropped: nothing more is read
    };

    void onReadyRead();
    // Follows the request through `bytes`; true once the answer is due: the request is complete,
    // or its head does not parse (so where it ends cannot be known).
    bool followRequest(QByteArrayView bytes);
    // Reads the head's framing and path; true when the request is complete with its head.
    bool headRead(QByteArrayView block);
    void answer();
    void dropAfterAnswer();
    void onDeadline();

    QTcpSocket *m_socket;
    protocol::ApiError m_refusal;
    std::shared_ptr<ConnectionLedger> m_ledger;
    timing::Deadline m_deadline; // the answer's, then the end of the connection's life
    timing::Clock::TimePoint m_acceptedAt;
    Stage m_stage = Stage::Head;
    bool m_anthropicShape = false; // the request was on a /v1/messages path
    qint64 m_readBeforeAnswer = 0;
    qint64 m_droppedAfterAnswer = 0;
    QByteArray m_headerBlock; // a header block split across reads
    qint64 m_bodyRemaining = 0;
    httpwire::ChunkedDecoder m_chunkedBody;
};

} // namespace switchyard::http
