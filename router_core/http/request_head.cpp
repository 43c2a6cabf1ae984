#include "http/request_head.h"

#include "httpwire/header_text.h"
#include "protocol/gateway_headers.h"

#include <QUrl>
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string_view>

namespace switchyard::http {

namespace {

using Method = QHttpServerRequest::Method;

Method methodFrom(QByteArrayView token)
{
    static constexpr std::pair<std::string_view, Method> kMethods[] = {
        {"GET", Method::Get},       {"POST", Method::Post},       {"PUT", Method::Put},
        {"DELETE", Method::Delete}, {"HEAD", Method::Head},       {"OPTIONS", Method::Options},
        {"PATCH", Method::Patch},   {"CONNECT", Method::Connect}, {"TRACE", Method::Trace},
    };
    for (const auto &[name, method] : kMethods) {
        if (token == QByteArrayView(name.data(), qsizetype(name.size())))
            return method;
    }
    return Method::Unknown;
}

// RFC 9110 token characters: what a method or a header name may be made of. A table, as every
// character of every header name is asked.
constexpr std::array<bool, 256> kTokenCharacters = [] {
    std::array<bool, 256> table{};
    for (int c = 'a'; c <= 'z'; ++c)
        table[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c)
        table[c] = true;
    for (int c = '0'; c <= '9'; ++c)
        table[c] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~"))
        table[static_cast<unsigned char>(c)] = true;
    return table;
}();

bool isToken(QByteArrayView text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), [](char c) {
        return kTokenCharacters[static_cast<unsigned char>(c)];
    });
}

// A path that QUrl would show exactly as sent: nothing to decode or normalise. Most are.
bool isPlainPath(QByteArrayView path)
{
    return std::all_of(path.begin(), path.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
               std::string_view("/-._~").find(c) != std::string_view::npos;
    });
}

protocol::ApiError badRequest(const QString &message, const QString &code)
{
    return {400, message, QStringLiteral("invalid_request_error"), {}, code, {}};
}

// Control characters (other than a tab) in a header value or the target: a bare CR that the
// next parser down the line takes for a line end would show it a header this one never saw.
// A field value without the optional whitespace around it: spaces and tabs only (RFC 9110 5.5).
// QByteArrayView::trimmed also takes a vertical tab or a form feed, which would let a control
// character at a value's edge through unseen.
QByteArrayView withoutOptionalWhitespace(QByteArrayView value)
{
    while (!value.isEmpty() && (value.front() == ' ' || value.front() == '\t'))
        value = value.sliced(1);
    while (!value.isEmpty() && (value.back() == ' ' || value.back() == '\t'))
        value.chop(1);
    return value;
}

bool hasControlCharacter(QByteArrayView text, bool allowTab)
{
    const auto isControl = [allowTab](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && !(allowTab && c == '\t')) || u == 0x7f;
    };
    // Eight bytes at a time, every header value of every request: a word is looked at byte by
    // byte only when one of its bytes may be below 0x20 or 0x7f (a tab, say).
    constexpr quint64 kOnes = 0x0101010101010101ull;
    constexpr quint64 kHighBits = 0x8080808080808080ull;
    qsizetype i = 0;
    for (; i + 8 <= text.size(); i += 8) {
        quint64 word;
        std::memcpy(&word, text.data() + i, sizeof word);
        const quint64 below20 = (word - kOnes * 0x20) & ~word & kHighBits;
        const quint64 xorDelete = word ^ (kOnes * 0x7f);
        const quint64 isDelete = (xorDelete - kOnes) & ~xorDelete & kHighBits;
        if ((below20 | isDelete) != 0 &&
            std::any_of(text.data() + i, text.data() + i + 8, isControl))
            return true;
    }
    return std::any_of(text.data() + i, text.data() + text.size(), isControl);
}

// A Content-Length is digits only: no sign, no spaces inside, and it fits.
bool readLength(QByteArrayView text, qint64 &length)
{
    if (text.isEmpty() || text.size() > 18 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    length = text.toLongLong();
    return true;
}

// The request target, origin form ("/v1/models?x=1") or absolute form ("http://host/v1/models").
bool readTarget(QByteArrayView target, IncomingRequest &request)
{
    if (target.isEmpty() || hasControlCharacter(target, false) || target.contains(' '))
        return false;
    if (const qsizetype fragment = target.indexOf('#'); fragment >= 0)
        target = target.first(fragment); // never sent by a client that follows the RFC; dropped
    if (target.startsWith('/')) {
        const qsizetype question = target.indexOf('?');
        const QByteArrayView path = question < 0 ? target : target.first(question);
        const QByteArrayView query = question < 0 ? QByteArrayView() : target.sliced(question + 1);
        if (isPlainPath(path) && query.isEmpty()) {
            request.path = QString::fromLatin1(path);
            return true;
        }
        // As Qt's HTTP server shows them: through QUrl, tolerant of what clients send.
        QUrl url;
        url.setPath(QString::fromUtf8(path), QUrl::TolerantMode);
        if (question >= 0)
            url.setQuery(QString::fromUtf8(query), QUrl::TolerantMode);
        request.path = url.path();
        request.query = url.query();
        return true;
    }
    if (target.startsWith("http://") || target.startsWith("https://")) {
        const QUrl url = QUrl::fromEncoded(target.toByteArray(), QUrl::TolerantMode);
        if (!url.isValid())
            return false;
        request.path = url.path().isEmpty() ? QStringLiteral("/") : url.path();
        request.query = url.query();
        return true;
    }
    if (target == "*") { // OPTIONS * HTTP/1.1
        request.path = QStringLiteral("*");
        return true;
    }
    return false;
}

// The lines of a header block, its line ends found with memchr: QByteArrayView::count searches
// for a one-byte pattern, and a loop over every byte costs as much.
qsizetype lineCount(QByteArrayView block)
{
    qsizetype lines = 1;
    const char *at = block.data();
    const char *const end = at + block.size();
    while (at < end) {
        const void *found = std::memchr(at, '\n', std::size_t(end - at));
        if (!found)
            break;
        ++lines;
        at = static_cast<const char *>(found) + 1;
    }
    return lines;
}

} // namespace

HeaderEnd findHeaderEnd(QByteArrayView bytes)
{
    for (qsizetype newline = bytes.indexOf('\n'); newline >= 0;
         newline = bytes.indexOf('\n', newline + 1)) {
        const QByteArrayView rest = bytes.sliced(newline + 1);
        if (rest.startsWith('\n'))
            return {newline, newline + 2};
        if (rest.startsWith("\r\n"))
            return {newline, newline + 3};
    }
    return {};
}

std::variant<RequestHead, protocol::ApiError> parseRequestHead(QByteArrayView block)
{
    RequestHead head;
    IncomingRequest &request = head.request;

    qsizetype lineEnd = block.indexOf('\n');
    QByteArrayView requestLine = lineEnd < 0 ? block : block.first(lineEnd);
    if (requestLine.endsWith('\r'))
        requestLine.chop(1);
    const qsizetype firstSpace = requestLine.indexOf(' ');
    const qsizetype lastSpace = requestLine.lastIndexOf(' ');
    if (firstSpace <= 0 || lastSpace <= firstSpace + 1 || !isToken(requestLine.first(firstSpace)) ||
        !readTarget(requestLine.sliced(firstSpace + 1, lastSpace - firstSpace - 1), request)) {
        return badRequest(QStringLiteral("The request line is not `METHOD /path HTTP/1.1`."),
                          QStringLiteral("invalid_request_line"));
    }
    const QByteArrayView version = requestLine.sliced(lastSpace + 1);
    const bool versionShaped = version.size() == 8 && version.startsWith("HTTP/") &&
                               std::isdigit(static_cast<unsigned char>(version[5])) &&
                               version[6] == '.' &&
                               std::isdigit(static_cast<unsigned char>(version[7]));
    if (!versionShaped) {
        return badRequest(QStringLiteral("The request line is not `METHOD /path HTTP/1.1`."),
                          QStringLiteral("invalid_request_line"));
    }
    const bool http10 = version == "HTTP/1.0";
    if (!http10 && version != "HTTP/1.1") {
        return protocol::ApiError{
            505,
            QStringLiteral("Switchyard speaks HTTP/1.1 (and 1.0); the "
                           "request asked for `%1`.")
                .arg(QString::fromLatin1(version.first(std::min<qsizetype>(version.size(), 16)))),
            QStringLiteral("invalid_request_error"),
            {},
            QStringLiteral("http_version_not_supported"),
            {}};
    }
    request.method = methodFrom(requestLine.first(firstSpace));
    head.request.http10 = http10;

    bool sawContentLength = false;
    QByteArrayList transferCodings; // every Transfer-Encoding header's codings, in order
    bool askedToClose = false;      // a Connection header's option
    bool askedToKeepAlive = false;
    qsizetype lineStart = lineEnd < 0 ? block.size() : lineEnd + 1;
    // One header per line, counted before they are read: the list grows once, not four times.
    request.headers.reserve(lineCount(block.sliced(lineStart)));
    while (lineStart < block.size()) {
        lineEnd = block.indexOf('\n', lineStart);
        QByteArrayView line =
            block.sliced(lineStart, (lineEnd < 0 ? block.size() : lineEnd) - lineStart);
        lineStart = lineEnd < 0 ? block.size() : lineEnd + 1;
        if (line.endsWith('\r'))
            line.chop(1);
        const qsizetype colon = line.indexOf(':');
        // No space before the colon (RFC 9112 5.1), and no folded continuation lines: either
        // could make this parser and the next one down the line read different headers.
        if (colon <= 0 || !isToken(line.first(colon))) {
            return badRequest(QStringLiteral("A request header line is malformed: each must be "
                                             "`Name: value`."),
                              QStringLiteral("invalid_header"));
        }
        const QByteArrayView name = line.first(colon);
        const QByteArrayView value = withoutOptionalWhitespace(line.sliced(colon + 1));
        if (hasControlCharacter(value, true)) {
            return badRequest(QStringLiteral("A request header value holds a control character."),
                              QStringLiteral("invalid_header"));
        }
        // Each name is compared only when its length matches: most headers are none of these.
        const auto named = [name](QByteArrayView wanted) {
            return protocol::sameHeaderName(name, wanted);
        };
        if (named("content-length")) {
            qint64 length = 0;
            if (!readLength(value, length) || (sawContentLength && length != head.contentLength)) {
                return badRequest(QStringLiteral("Invalid Content-Length header: it must be a "
                                                 "non-negative number of bytes."),
                                  QStringLiteral("invalid_content_length"));
            }
            sawContentLength = true;
            head.contentLength = length;
        } else if (named("transfer-encoding")) {
            for (const QByteArray &coding : value.toByteArray().split(','))
                transferCodings.append(coding.trimmed().toLower());
        } else if (named("connection")) {
            // Read in place: a kept-alive client sends this header with every request.
            for (qsizetype from = 0; from <= value.size();) {
                qsizetype comma = value.indexOf(',', from);
                if (comma < 0)
                    comma = value.size();
                const QByteArrayView option = value.sliced(from, comma - from).trimmed();
                askedToClose |= option.compare("close", Qt::CaseInsensitive) == 0;
                askedToKeepAlive |= option.compare("keep-alive", Qt::CaseInsensitive) == 0;
                from = comma + 1;
            }
        } else if (named("expect")) {
            head.expectsContinue = value.compare("100-continue", Qt::CaseInsensitive) == 0;
        }
        request.headers.append({httpwire::headerText(name), httpwire::headerText(value)});
    }
    if (!transferCodings.isEmpty()) {
        // Only chunked framing is read, and only alone: with another coding, a Content-Length
        // beside it, or in HTTP/1.0, a proxy in front could frame the body differently.
        if (http10 || sawContentLength) {
            return badRequest(QStringLiteral("A request with Transfer-Encoding must not carry a "
                                             "Content-Length, nor be HTTP/1.0."),
                              QStringLiteral("invalid_transfer_encoding"));
        }
        if (transferCodings != QByteArrayList{"chunked"}) {
            return protocol::ApiError{
                501,
                QStringLiteral("Transfer-Encoding `%1` is not supported: only `chunked`.")
                    .arg(QString::fromLatin1(transferCodings.join(", "))),
                QStringLiteral("invalid_request_error"),
                {},
                QStringLiteral("unsupported_transfer_encoding"),
                {}};
        }
        head.chunked = true;
    }
    // HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 closes unless told to keep.
    head.request.closeAfterAnswer = http10 ? !askedToKeepAlive : askedToClose;
    return head;
}

} // namespace switchyard::http
