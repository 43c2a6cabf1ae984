#pragma once

#include "protocol/openai_error.h"

#include <QString>

class QTcpSocket;

namespace switchyard::http {

// Ends a connection with `error` as its last answer, written by the listener itself because no
// handler saw the request: a connection refused over a cap, a request too slow (408), too large
// (413, 431) or malformed (400). The body is in the OpenAI shape, or in Anthropic's when the
// request was on a /v1/messages path; fresh identity headers still let a client quote the
// answer in a report; `Connection: close` says what follows.
//
// Once the answer has left, only the sending side closes (SHUT_WR): the client reads the answer
// and the end of the stream, while whatever it still sends must be read and dropped by the
// caller until it closes too. Closing both sides at once with request bytes unread, or still
// arriving, makes the kernel reset the connection, and a reset can destroy the answer before
// the client has read it.
void sendClosingAnswer(QTcpSocket *socket, const protocol::ApiError &error, bool anthropicShape);

// Whether a request on `path` is answered in Anthropic's error shape: its clients read
// Anthropic's errors on every path of its API.
inline bool answersInAnthropicShape(const QString &path)
{
    return path.startsWith(QLatin1String("/v1/messages"));
}

} // namespace switchyard::http
