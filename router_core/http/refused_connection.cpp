#include "http/refused_connection.h"

#include "http/closing_answer.h"
#include "http/gateway_listener.h"
#include "http/request_head.h"

#include <QTcpSocket>
#include <algorithm>
#include <utility>

namespace switchyard::http {

RefusedConnection::RefusedConnection(QTcpSocket *socket, const protocol::ApiError &refusal,
                                     std::shared_ptr<ConnectionLedger> ledger,
                                     timing::DeadlineScheduler &scheduler)
    : QObject(socket), m_socket(socket), m_refusal(refusal), m_ledger(std::move(ledger)),
      m_deadline(scheduler, [this] { onDeadline(); }), m_acceptedAt(scheduler.now())
{
    m_ledger->refusalStarted();
    // Qt otherwise reads all the kernel holds into its own buffer: a flood would be copied in
    // whole, however little of it is looked at.
    socket->setReadBufferSize(kMostReadBeforeAnswer);
    connect(socket, &QIODevice::readyRead, this, &RefusedConnection::onReadyRead);
    m_deadline.armIn(kLongestWaitForRequest);
}

RefusedConnection::~RefusedConnection()
{
    m_ledger->refusalEnded();
}

void RefusedConnection::onReadyRead()
{
    if (m_stage == Stage::Answered) {
        dropAfterAnswer();
        return;
    }
    if (m_stage == Stage::NotReading)
        return;
    const qint64 allowed =
        std::min(m_socket->bytesAvailable(), kMostReadBeforeAnswer - m_readBeforeAnswer);
    if (allowed <= 0)
        return;
    const QByteArray arrived = m_socket->read(allowed);
    m_readBeforeAnswer += arrived.size();
    if (followRequest(arrived) || m_readBeforeAnswer >= kMostReadBeforeAnswer) {
        answer();
        dropAfterAnswer(); // what followed the request in this read, or beyond the bound
    }
}

bool RefusedConnection::followRequest(QByteArrayView bytes)
{
    qsizetype position = 0;
    if (m_stage == Stage::Head) {
        // Line ends before a request are not one yet (RFC 9112 2.2).
        if (m_headerBlock.isEmpty()) {
            while (position < bytes.size() && (bytes[position] == '\r' || bytes[position] == '\n'))
                ++position;
        }
        const qsizetype before = m_headerBlock.size();
        m_headerBlock.append(bytes.sliced(position));
        const HeaderEnd end = findHeaderEnd(m_headerBlock);
        if (!end.found())
            return false;
        position += end.consumedBytes - before;
        const QByteArray block = std::exchange(m_headerBlock, QByteArray());
        if (headRead(QByteArrayView(block).first(end.blockBytes)))
            return true;
    }
    const QByteArrayView body = bytes.sliced(position);
    if (m_stage == Stage::Body) {
        m_bodyRemaining -= std::min<qint64>(m_bodyRemaining, body.size());
        return m_bodyRemaining == 0;
    }
    // A malformed chunk ends the request as surely as the last one: nothing after it can be
    // told apart from the next request.
    QByteArray dropped;
    return m_chunkedBody.feed(body, dropped) != httpwire::ChunkedDecoder::Status::NeedMore;
}

bool RefusedConnection::headRead(QByteArrayView block)
{
    const auto parsed = parseRequestHead(block);
    const auto *head = std::get_if<RequestHead>(&parsed);
    if (!head)
        return true; // unreadable: the refusal is the answer all the same
    m_anthropicShape = answersInAnthropicShape(head->request.path);
    // A client that asked for "100 Continue" sends its body only once told to: the refusal is
    // the final answer it waits for instead (RFC 9110 10.1.1), and it sends no body.
    if (head->expectsContinue)
        return true;
    if (head->chunked) {
        m_stage = Stage::ChunkedBody;
        return false;
    }
    if (head->contentLength > 0) {
        m_bodyRemaining = head->contentLength;
        m_stage = Stage::Body;
        return false;
    }
    return true;
}

void RefusedConnection::answer()
{
    m_stage = Stage::Answered;
    m_headerBlock = QByteArray();
    sendClosingAnswer(m_socket, m_refusal, m_anthropicShape);
    m_deadline.arm(m_acceptedAt + kLongestLife);
}

void RefusedConnection::dropAfterAnswer()
{
    const qint64 dropped = m_socket->skip(
        std::min(m_socket->bytesAvailable(), kMostDroppedAfterAnswer - m_droppedAfterAnswer));
    m_droppedAfterAnswer += std::max<qint64>(dropped, 0);
    if (m_droppedAfterAnswer < kMostDroppedAfterAnswer)
        return;
    // Qt fills its buffer (kMostReadBeforeAnswer) and then stops reading the socket: the
    // kernel's window closes and the client's writes wait, costing nothing, until the
    // connection's life is over.
    m_stage = Stage::NotReading;
    disconnect(m_socket, &QIODevice::readyRead, this, nullptr);
}

void RefusedConnection::onDeadline()
{
    if (m_stage != Stage::Answered && m_stage != Stage::NotReading) {
        answer(); // the request is incomplete, or never came
        return;
    }
    // The client neither closed after the answer nor stopped sending: the close may reset it,
    // but it has had the answer for at least a second.
    ++m_ledger->counts.refusalsCutOff;
    m_socket->abort();
}

} // namespace switchyard::http
