#pragma once

#include <QByteArrayView>
#include <QLatin1StringView>
#include <QLoggingCategory>
#include <QString>
#include <QVarLengthArray>
#include <optional>

// Every log line the process writes, whoever writes it (our categories, Qt's own, a library's
// qWarning): one message handler formats them all, as text or as one JSON object per line
// (docs/logging.md). A line may carry structured fields besides its message: a JSON line has
// them as members, a text line as key=value pairs after the message.
namespace switchyard::logging {

enum class LogFormat { Text, Json };
// The lowest level written: `Info` writes info, warnings and errors.
enum class LogLevel { Debug, Info, Warning, Error };

// "text", "json"; nullopt for anything else.
std::optional<LogFormat> logFormatFromName(QStringView name);
// "debug", "info", "warning", "error"; nullopt for anything else.
std::optional<LogLevel> logLevelFromName(QStringView name);
QLatin1StringView logFormatName(LogFormat format);
QLatin1StringView logLevelName(LogLevel level);

// The structured fields of one line, in the order they were added. Keys are literals; an empty
// string value is written as null (JSON) or `-` (text): "not known" rather than "empty".
class LogFields {
public:
    LogFields &add(QLatin1StringView key, const QString &value);
    LogFields &add(QLatin1StringView key, QByteArrayView utf8Value);
    LogFields &add(QLatin1StringView key, qint64 value);
    LogFields &add(QLatin1StringView key, int value) { return add(key, qint64(value)); }
    LogFields &add(QLatin1StringView key, bool value);
    // A duration in microseconds written as milliseconds with three decimals; negative: null.
    LogFields &addMillis(QLatin1StringView key, qint64 micros);
    // A count where negative means "not known": null.
    LogFields &addCount(QLatin1StringView key, qint64 value);

    struct Field {
        QLatin1StringView key;
        QString value;
        bool quoted = true; // a string; false: a number, a boolean or null, written as is
    };
    const QVarLengthArray<Field, 20> &fields() const { return m_fields; }

private:
    LogFields &addBare(QLatin1StringView key, QString value);
    QVarLengthArray<Field, 20> m_fields;
};

// Writes one line in `category` at `type` with `fields` attached. The caller checks that the
// category writes at that level before building the fields, so a disabled line costs nothing.
void write(const QLoggingCategory &category, QtMsgType type, const QString &message,
           const LogFields &fields);

// One formatted line without its newline: what the handler writes, for tests and tools that
// capture lines themselves. The fields of a line being written by write() on this thread are
// added to it. The value of a credential header quoted in the message (as Qt's own debug output
// of a request quotes every header) is written as "[redacted]".
QByteArray formatLine(LogFormat format, QtMsgType type, const QMessageLogContext &context,
                      const QString &message);

// Installs the handler writing every line to stderr in `format`, and the category rules for
// `level` (our categories at that level, Qt's own at warning and above).
void configure(LogFormat format, LogLevel level);
// The rules configure() sets, for `level`.
QString filterRules(LogLevel level);

} // namespace switchyard::logging
