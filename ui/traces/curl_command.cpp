#include "ui/traces/curl_command.h"

#include <QStringList>

namespace switchyard::ui {

namespace {

// Headers curl sets itself from the URL and the body, or that belong to one connection only.
bool isTransportHeader(QByteArrayView name)
{
    for (const char *transport :
         {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te",
          "upgrade", "expect", "accept-encoding"}) {
        if (name.compare(QByteArrayView(transport), Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

} // namespace

bool CurlCommand::isCredentialHeader(QByteArrayView name)
{
    for (const char *credential : {"authorization", "proxy-authorization", "x-api-key", "api-key",
                                   "cookie", "x-goog-api-key"}) {
        if (name.compare(QByteArrayView(credential), Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

QString CurlCommand::shellQuoted(const QString &text)
{
    QString quoted = text;
    quoted.replace(QLatin1Char('\''), QLatin1String("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QString CurlCommand::forTrace(const telemetry::Trace &trace, const QString &listenAddress)
{
    const QString method =
        trace.method.isEmpty() ? QStringLiteral("GET") : QString::fromLatin1(trace.method);
    const QString path = trace.path.isEmpty() ? trace.endpoint : QString::fromUtf8(trace.path);
    const bool expectsBody = method != QLatin1String("GET") && method != QLatin1String("HEAD");

    QStringList comments;
    if (expectsBody && !trace.bodiesKept) {
        comments.append(tr("# The request body was not kept, so this command has none. Set "
                           "trace.keep_bodies: true in the configuration to keep bodies."));
    } else if (trace.requestBodyCut) {
        comments.append(tr("# The body below was cut at the trace's body limit "
                           "(trace.body_max_bytes); it is not the whole request."));
    }

    QStringList parts;
    QString first = QStringLiteral("curl -sS");
    if (trace.streamed)
        first += QStringLiteral(" -N"); // show events as they arrive
    first += QStringLiteral(" -X %1 %2")
                 .arg(method, shellQuoted(QStringLiteral("http://%1%2").arg(listenAddress, path)));
    parts.append(first);
    for (const auto &[name, value] : trace.requestHeaders) {
        if (isTransportHeader(name))
            continue;
        if (isCredentialHeader(name) || value == "[redacted]") {
            // Double quotes, so the shell fills in the key from the environment.
            if (name.compare("authorization", Qt::CaseInsensitive) == 0)
                parts.append(QStringLiteral("-H \"%1: Bearer $OPENAI_API_KEY\"")
                                 .arg(QString::fromLatin1(name)));
            continue;
        }
        parts.append(QStringLiteral("-H %1").arg(shellQuoted(
            QStringLiteral("%1: %2").arg(QString::fromLatin1(name), QString::fromUtf8(value)))));
    }
    if (trace.bodiesKept && !trace.requestBody.isEmpty())
        parts.append(
            QStringLiteral("--data-raw %1").arg(shellQuoted(QString::fromUtf8(trace.requestBody))));

    QString command = comments.join(QLatin1Char('\n'));
    if (!command.isEmpty())
        command += QLatin1Char('\n');
    command += parts.join(QStringLiteral(" \\\n  "));
    return command;
}

} // namespace switchyard::ui
