#include "http/closing_answer.h"

#include "http/messages_answers.h"
#include "httpwire/status_line.h"
#include "telemetry/trace.h"

#include <QTcpSocket>
#include <sys/socket.h>

namespace switchyard::http {

void sendClosingAnswer(QTcpSocket *socket, const protocol::ApiError &error, bool anthropicShape)
{
    const QByteArray body = anthropicShape ? MessagesAnswers::errorBody(error) : error.toJson();
    QByteArray answer;
    httpwire::appendStatusLine(answer, error.status);
    answer += "Content-Type: application/json\r\n";
    answer += "x-switchyard-request-id: " + telemetry::newRequestId() + "\r\n";
    answer += "x-switchyard-trace-id: " + telemetry::newTraceId() + "\r\n";
    if (!error.retryAfter.isEmpty())
        answer += "Retry-After: " + error.retryAfter + "\r\n";
    answer += "x-switchyard-provider: none\r\nConnection: close\r\nContent-Length: " +
              QByteArray::number(body.size()) + "\r\n\r\n" + body;
    socket->write(answer);
    QObject::connect(socket, &QIODevice::bytesWritten, socket,
                     [socket, sendingSideClosed = false]() mutable {
                         if (socket->bytesToWrite() > 0 || sendingSideClosed)
                             return;
                         sendingSideClosed = true;
                         if (::shutdown(int(socket->socketDescriptor()), SHUT_WR) != 0)
                             socket->abort(); // the client is already gone
                     });
}

} // namespace switchyard::http
