#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace switchyard::httpwire {

// The reason phrase HTTP/1.1 puts after a status code (RFC 9110 section 15), for the codes
// Switchyard answers with and the common others; clients read the code, never the phrase.
QByteArrayView reasonPhrase(int status);

// "HTTP/1.1 <status> <reason>\r\n" appended to `out`.
void appendStatusLine(QByteArray &out, int status);

} // namespace switchyard::httpwire
