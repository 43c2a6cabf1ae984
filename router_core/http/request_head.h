#pragma once

#include "protocol/openai_error.h"

#include <QByteArray>
#include <QHostAddress>
#include <QHttpServerRequest>
#include <QList>
#include <QPair>
#include <QString>
#include <optional>
#include <variant>

namespace switchyard::http {

// One client request as the handlers take it: its head parsed, its body whole (a chunked body
// already decoded).
struct IncomingRequest {
    QHttpServerRequest::Method method = QHttpServerRequest::Method::Unknown;
    QString path;                                 // percent-decoded, as QUrl::path() shows it
    QString query;                                // the URL's query, as QUrl::query() shows it
    QList<QPair<QByteArray, QByteArray>> headers; // names as sent, values without surrounding space
    QByteArray body;
    // The client's address, set by the listener. Optional because a default QHostAddress
    // allocates, and every request's head is built from a default one (twice).
    std::optional<QHostAddress> remoteAddress;
    // What the connection allows its answer: HTTP/1.0 has no chunked coding; and whether it
    // closes once this request is answered (`Connection: close`, or HTTP/1.0 without
    // `Connection: keep-alive`).
    bool http10 = false;
    bool closeAfterAnswer = false;
};

// The head of an HTTP/1.1 request, the bytes before its blank line: what the handlers need and
// how its body is framed.
struct RequestHead {
    IncomingRequest request; // without body and address
    qint64 contentLength = 0;
    bool chunked = false;
    bool expectsContinue = false;
};

// Where a header block ends in bytes read from a connection: the block is bytes
// [0, blockBytes) and the request's body starts at `consumedBytes`. The parser below also
// accepts bare LF line ends, so a reader that looked only for CR LF CR LF could be walked
// around.
struct HeaderEnd {
    qsizetype blockBytes = -1;
    qsizetype consumedBytes = 0;
    bool found() const { return blockBytes >= 0; }
};
HeaderEnd findHeaderEnd(QByteArrayView bytes);

// Parses a header block (request line and header lines, CR LF or bare LF line ends, without the
// blank line). A head that cannot be framed or read safely is refused, so that a proxy in front
// and this parser never disagree on where a request ends: a malformed request line, target or
// header line, a control character in a value, a Content-Length that is not plain digits (or
// two that disagree), Transfer-Encoding other than `chunked` alone (501) or beside a
// Content-Length, a version other than HTTP/1.1 and 1.0 (505).
std::variant<RequestHead, protocol::ApiError> parseRequestHead(QByteArrayView block);

} // namespace switchyard::http
