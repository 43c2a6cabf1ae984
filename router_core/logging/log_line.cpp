#include "logging/log_line.h"

#include <QDateTime>
#include <QRegularExpression>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>

namespace switchyard::logging {

using namespace Qt::StringLiterals;

namespace {

std::atomic<LogFormat> g_format{LogFormat::Text};
// The fields of the line write() is writing on this thread; the handler reads them.
thread_local const LogFields *t_fields = nullptr;

QLatin1StringView levelWord(QtMsgType type)
{
    switch (type) {
    case QtDebugMsg:
        return "debug"_L1;
    case QtInfoMsg:
        return "info"_L1;
    case QtWarningMsg:
        return "warning"_L1;
    case QtCriticalMsg:
        return "error"_L1;
    case QtFatalMsg:
        return "fatal"_L1;
    }
    return "info"_L1;
}

// JSON string contents: quotes, backslashes and every control character escaped, so no value
// (a client's tenant, a provider's error text) can break the line or forge another.
void appendJsonString(QString &out, QStringView text)
{
    out += u'"';
    for (const QChar c : text) {
        switch (c.unicode()) {
        case u'"':
            out += "\\\""_L1;
            break;
        case u'\\':
            out += "\\\\"_L1;
            break;
        case u'\n':
            out += "\\n"_L1;
            break;
        case u'\r':
            out += "\\r"_L1;
            break;
        case u'\t':
            out += "\\t"_L1;
            break;
        default:
            if (c.unicode() < 0x20 || c.unicode() == 0x2028 || c.unicode() == 0x2029)
                out += u"\\u%1"_s.arg(uint(c.unicode()), 4, 16, QChar(u'0'));
            else
                out += c;
        }
    }
    out += u'"';
}

// A text value: bare when it is one plain word, else quoted with the JSON escapes, so a
// key=value line always splits back into the same pairs.
void appendTextValue(QString &out, QStringView text)
{
    const bool plain = !text.isEmpty() && std::all_of(text.begin(), text.end(), [](QChar c) {
        return c.unicode() > 0x20 && c != u'"' && c != u'=' && c != u'\\' && c.unicode() != 0x7f;
    });
    if (plain)
        out += text;
    else
        appendJsonString(out, text);
}

// Qt's own categories may print a request's headers (qt.httpserver at debug prints every header
// of every request), and QT_LOGGING_RULES can turn any of them on. Whoever writes a line, the
// value of a credential header (Authorization, Proxy-Authorization, x-api-key, api-key,
// x-goog-api-key, Cookie, Set-Cookie) in it is not written.
QString withoutCredentials(const QString &message)
{
    const bool mayHoldOne = message.contains("authorization"_L1, Qt::CaseInsensitive) ||
                            message.contains("api-key"_L1, Qt::CaseInsensitive) ||
                            message.contains("cookie"_L1, Qt::CaseInsensitive);
    if (!mayHoldOne)
        return message;
    static const QRegularExpression credential(
        uR"re(((?:authorization|api-key|cookie)"?\s*[:=]\s*)("[^"]*"|[^,;)\r\n"]+))re"_s,
        QRegularExpression::CaseInsensitiveOption);
    QString shown = message;
    shown.replace(credential, uR"re(\1"[redacted]")re"_s);
    return shown;
}

void messageHandler(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    QByteArray line = formatLine(g_format.load(std::memory_order_relaxed), type, context, message);
    line += '\n';
    // One write per line, so lines from several threads never interleave.
    std::fwrite(line.constData(), 1, size_t(line.size()), stderr);
    std::fflush(stderr);
}

} // namespace

std::optional<LogFormat> logFormatFromName(QStringView name)
{
    if (name == "text"_L1)
        return LogFormat::Text;
    if (name == "json"_L1)
        return LogFormat::Json;
    return std::nullopt;
}

std::optional<LogLevel> logLevelFromName(QStringView name)
{
    for (const LogLevel level :
         {LogLevel::Debug, LogLevel::Info, LogLevel::Warning, LogLevel::Error}) {
        if (name == logLevelName(level))
            return level;
    }
    return std::nullopt;
}

QLatin1StringView logFormatName(LogFormat format)
{
    return format == LogFormat::Json ? "json"_L1 : "text"_L1;
}

QLatin1StringView logLevelName(LogLevel level)
{
    switch (level) {
    case LogLevel::Debug:
        return "debug"_L1;
    case LogLevel::Info:
        return "info"_L1;
    case LogLevel::Warning:
        return "warning"_L1;
    case LogLevel::Error:
        return "error"_L1;
    }
    return "info"_L1;
}

LogFields &LogFields::add(QLatin1StringView key, const QString &value)
{
    if (value.isEmpty())
        return addBare(key, {});
    m_fields.append({key, value, true});
    return *this;
}

LogFields &LogFields::add(QLatin1StringView key, QByteArrayView utf8Value)
{
    return add(key, QString::fromUtf8(utf8Value));
}

LogFields &LogFields::add(QLatin1StringView key, qint64 value)
{
    return addBare(key, QString::number(value));
}

LogFields &LogFields::add(QLatin1StringView key, bool value)
{
    return addBare(key, value ? u"true"_s : u"false"_s);
}

LogFields &LogFields::addMillis(QLatin1StringView key, qint64 micros)
{
    if (micros < 0)
        return addBare(key, {});
    // Exact decimal digits of the microseconds, not a double's rounding.
    return addBare(key, u"%1.%2"_s.arg(micros / 1000).arg(micros % 1000, 3, 10, QChar(u'0')));
}

LogFields &LogFields::addCount(QLatin1StringView key, qint64 value)
{
    return value < 0 ? addBare(key, {}) : add(key, value);
}

LogFields &LogFields::addBare(QLatin1StringView key, QString value)
{
    m_fields.append({key, std::move(value), false});
    return *this;
}

void write(const QLoggingCategory &category, QtMsgType type, const QString &message,
           const LogFields &fields)
{
    const LogFields *outer = std::exchange(t_fields, &fields);
    QMessageLogger logger(nullptr, 0, nullptr, category.categoryName());
    switch (type) {
    case QtDebugMsg:
        logger.debug(category).noquote() << message;
        break;
    case QtInfoMsg:
        logger.info(category).noquote() << message;
        break;
    case QtWarningMsg:
        logger.warning(category).noquote() << message;
        break;
    case QtCriticalMsg:
    case QtFatalMsg: // never fatal from here: a log line must not end the process
        logger.critical(category).noquote() << message;
        break;
    }
    t_fields = outer;
}

QByteArray formatLine(LogFormat format, QtMsgType type, const QMessageLogContext &context,
                      const QString &text)
{
    const QString time = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    const QLatin1StringView category(context.category ? context.category : "default");
    const QString message = withoutCredentials(text);
    QString line;
    line.reserve(128 + message.size() + (t_fields ? 24 * t_fields->fields().size() : 0));
    if (format == LogFormat::Json) {
        line +=
            "{\"time\":\""_L1 + time + "\",\"level\":\""_L1 + levelWord(type) + "\",\"logger\":"_L1;
        appendJsonString(line, QString(category));
        line += ",\"message\":"_L1;
        appendJsonString(line, message);
        if (t_fields) {
            for (const LogFields::Field &field : t_fields->fields()) {
                // Keys are literals in our code: plain words that need no escaping.
                line += ",\""_L1 + field.key + "\":"_L1;
                if (field.value.isEmpty())
                    line += "null"_L1;
                else if (field.quoted)
                    appendJsonString(line, field.value);
                else
                    line += field.value;
            }
        }
        line += u'}';
    } else {
        line += time + u' ' + levelWord(type) + u' ' + category + ": "_L1 + message;
        if (t_fields) {
            for (const LogFields::Field &field : t_fields->fields()) {
                line += u' ' + field.key + u'=';
                if (field.value.isEmpty())
                    line += u'-';
                else
                    appendTextValue(line, field.value);
            }
        }
    }
    return line.toUtf8();
}

QString filterRules(LogLevel level)
{
    const auto on = [level](LogLevel atLeast) { return level <= atLeast ? "true"_L1 : "false"_L1; };
    // Qt's own categories stay at warning and above: their debug output is for Qt's developers.
    return u"switchyard.*.debug=%1\nswitchyard.*.info=%2\n*.warning=%3\n"_s.arg(
        on(LogLevel::Debug), on(LogLevel::Info), on(LogLevel::Warning));
}

void configure(LogFormat format, LogLevel level)
{
    g_format.store(format, std::memory_order_relaxed);
    qInstallMessageHandler(messageHandler);
    QLoggingCategory::setFilterRules(filterRules(level));
}

} // namespace switchyard::logging
