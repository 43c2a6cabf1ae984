#pragma once

#include "telemetry/trace.h"

#include <QCoreApplication>
#include <QString>

namespace switchyard::ui {

// "Copy as curl": a shell command that sends a traced request again, to the gateway's listen
// address and the path the client called, with the headers the client sent. Credentials never
// reach it: the trace stores them as "[redacted]" and this leaves them out again, writing
// Authorization as a `$OPENAI_API_KEY` placeholder the shell fills in. The body is included when
// the trace kept it; otherwise the command says so in a comment.
class CurlCommand {
    Q_DECLARE_TR_FUNCTIONS(CurlCommand)
public:
    static QString forTrace(const telemetry::Trace &trace, const QString &listenAddress);
    // A header name that carries a credential; its value is never copied.
    static bool isCredentialHeader(QByteArrayView name);
    // `text` quoted for a POSIX shell: in single quotes, with any ' closed, escaped and reopened.
    static QString shellQuoted(const QString &text);
};

} // namespace switchyard::ui
