#include "protocol/chat_request.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QLocale>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <simdjson.h>

namespace switchyard::protocol {

// Keys as string_view literals: simdjson's `const char *` lookup measures each key with strlen, on
// every request.
using namespace std::string_view_literals;

namespace {

using simdjson::dom::element_type;

QString typeName(element_type type)
{
    switch (type) {
    case element_type::ARRAY:
        return QStringLiteral("an array");
    case element_type::OBJECT:
        return QStringLiteral("an object");
    case element_type::INT64:
    case element_type::UINT64:
        return QStringLiteral("an integer");
    case element_type::DOUBLE:
        return QStringLiteral("a number");
    case element_type::STRING:
        return QStringLiteral("a string");
    case element_type::BOOL:
        return QStringLiteral("a boolean");
    case element_type::NULL_VALUE:
        return QStringLiteral("null");
    }
    return QStringLiteral("an unknown value");
}

ApiError wrongType(const QString &param, const QString &expected, element_type got)
{
    return ApiError::invalidRequest(
        QStringLiteral("Invalid type for '%1': expected %2, but got %3 instead.")
            .arg(param, expected, typeName(got)),
        param);
}

ApiError missing(const QString &param)
{
    return ApiError::invalidRequest(QStringLiteral("Missing required parameter: '%1'.").arg(param),
                                    param);
}

QString fromView(std::string_view view)
{
    return QString::fromUtf8(view.data(), qsizetype(view.size()));
}

// Each message must be an object with a string role; content may be a string, an array of parts
// or null (an assistant message that only calls tools).
std::optional<ApiError> validateMessage(simdjson::dom::element message, int index)
{
    // Named only in an error: a valid message, the usual case, builds no text.
    const auto path = [index](QStringView field = {}) {
        QString named = QStringLiteral("messages[%1]").arg(index);
        named.append(field);
        return named;
    };
    if (message.type() != element_type::OBJECT)
        return wrongType(path(), QStringLiteral("an object"), message.type());
    const simdjson::dom::object object = message.get_object().value_unsafe();
    simdjson::dom::element role;
    if (object["role"sv].get(role) != simdjson::SUCCESS)
        return missing(path(u".role"));
    if (role.type() != element_type::STRING)
        return wrongType(path(u".role"), QStringLiteral("a string"), role.type());
    simdjson::dom::element content;
    if (object["content"sv].get(content) == simdjson::SUCCESS) {
        const element_type type = content.type();
        if (type != element_type::STRING && type != element_type::ARRAY &&
            type != element_type::NULL_VALUE) {
            return wrongType(path(u".content"), QStringLiteral("one of a string or an array"),
                             type);
        }
    }
    return std::nullopt;
}

// Characters of message text, sorted into the classes the token estimate weighs differently.
struct TextTally {
    qint64 asciiCharacters = 0;
    qint64 cjkCharacters = 0;   // Han, kana, Hangul, full-width forms: about one token each
    qint64 otherCharacters = 0; // accented Latin, Cyrillic, Greek, emoji...
    qint64 codeFences = 0;

    qint64 characters() const { return asciiCharacters + cjkCharacters + otherCharacters; }
};

bool isCjk(char32_t codePoint)
{
    return (codePoint >= 0x1100 && codePoint <= 0x11FF) || // Hangul Jamo
           (codePoint >= 0x2E80 && codePoint <= 0x9FFF) || // radicals, kana, CJK ideographs
           (codePoint >= 0xA960 && codePoint <= 0xA97F) || // Hangul Jamo extended
           (codePoint >= 0xAC00 && codePoint <= 0xD7AF) || // Hangul syllables
           (codePoint >= 0xF900 && codePoint <= 0xFAFF) || // compatibility ideographs
           (codePoint >= 0xFF00 && codePoint <= 0xFFEF) || // full-width forms
           (codePoint >= 0x20000 && codePoint <= 0x3FFFF); // ideographs beyond the BMP
}

// One pass over UTF-8 text (already validated by simdjson), no decoding into QString.
void tally(std::string_view text, TextTally &tally)
{
    const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
    const std::size_t size = text.size();
    std::size_t backticks = 0;
    for (std::size_t i = 0; i < size;) {
        // Eight ASCII bytes at a time while none of them is a backtick: most prompts are
        // mostly ASCII, and this loop runs over every message of every request.
        if (size - i >= 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, bytes + i, sizeof(word));
            constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
            constexpr std::uint64_t kLowBits = 0x0101010101010101ULL;
            const std::uint64_t backtickBytes = word ^ (kLowBits * '`');
            const bool allAscii = (word & kHighBits) == 0;
            // A zero byte of backtickBytes is a backtick (the classic "has a zero byte" test).
            const bool hasBacktick = ((backtickBytes - kLowBits) & ~backtickBytes & kHighBits) != 0;
            if (allAscii && !hasBacktick) {
                tally.asciiCharacters += 8;
                backticks = 0;
                i += 8;
                continue;
            }
        }
        const unsigned char lead = bytes[i];
        if (lead < 0x80) {
            ++tally.asciiCharacters;
            if (lead == '`') {
                if (++backticks == 3) {
                    ++tally.codeFences;
                    backticks = 0;
                }
            } else {
                backticks = 0;
            }
            ++i;
            continue;
        }
        backticks = 0;
        const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        char32_t codePoint = lead & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F);
        for (std::size_t k = 1; k < length && i + k < size; ++k)
            codePoint = (codePoint << 6) | (bytes[i + k] & 0x3F);
        if (isCjk(codePoint))
            ++tally.cjkCharacters;
        else
            ++tally.otherCharacters;
        i += length;
    }
}

// Tool definitions reach the model as text too: count their names, descriptions and schemas.
void tallyJsonText(simdjson::dom::element element, TextTally &text)
{
    switch (element.type()) {
    case element_type::STRING:
        tally(element.get_string().value_unsafe(), text);
        break;
    case element_type::ARRAY: {
        // Held by value: a range over the temporary result would dangle.
        const simdjson::dom::array items = element.get_array().value_unsafe();
        for (simdjson::dom::element item : items)
            tallyJsonText(item, text);
    } break;
    case element_type::OBJECT: {
        const simdjson::dom::object fields = element.get_object().value_unsafe();
        for (auto field : fields) {
            tally(field.key, text);
            tallyJsonText(field.value, text);
        }
    } break;
    default:
        text.asciiCharacters += 2; // a number, boolean or null: a short token
        break;
    }
}

// Tokens a model would see, estimated without a tokenizer: about 4 ASCII characters per token
// (English prose and code), 1 token per CJK character, 2 other non-ASCII characters per token, and
// 4 tokens of framing per message. Good to within tens of percent, which is what a tier choice
// needs; images and audio parts are not counted.
qint64 estimateTokens(const TextTally &text, int messageCount)
{
    constexpr qint64 framingTokensPerMessage = 4;
    return (text.asciiCharacters + 3) / 4 + text.cjkCharacters + (text.otherCharacters + 1) / 2 +
           framingTokensPerMessage * messageCount;
}

void tallyMessage(simdjson::dom::element message, TextTally &text)
{
    simdjson::dom::element content;
    const simdjson::dom::object fields = message.get_object().value_unsafe();
    if (fields["content"sv].get(content) != simdjson::SUCCESS)
        return;
    if (content.type() == element_type::STRING) {
        tally(content.get_string().value_unsafe(), text);
        return;
    }
    if (content.type() != element_type::ARRAY)
        return;
    const simdjson::dom::array parts = content.get_array().value_unsafe();
    for (simdjson::dom::element part : parts) {
        std::string_view partText;
        if (part.type() != element_type::OBJECT)
            continue;
        const simdjson::dom::object partFields = part.get_object().value_unsafe();
        if (partFields["text"sv].get(partText) == simdjson::SUCCESS)
            tally(partText, text);
    }
}

std::optional<ApiError> readRoutingObject(simdjson::dom::element object, ChatRequest &request)
{
    const QString param = QStringLiteral("switchyard");
    if (object.type() != element_type::OBJECT)
        return wrongType(param, QStringLiteral("an object"), object.type());
    request.hasRoutingObject = true;
    const simdjson::dom::object fields = object.get_object().value_unsafe();
    for (auto field : fields) {
        const QString key = fromView(field.key);
        QString value;
        switch (field.value.type()) {
        case element_type::STRING:
            value = fromView(field.value.get_string().value_unsafe());
            break;
        case element_type::INT64:
            value = QString::number(field.value.get_int64().value_unsafe());
            break;
        case element_type::UINT64:
            value = QString::number(field.value.get_uint64().value_unsafe());
            break;
        case element_type::DOUBLE:
            value = QString::number(field.value.get_double().value_unsafe(), 'g',
                                    QLocale::FloatingPointShortest);
            break;
        case element_type::BOOL:
            value = field.value.get_bool().value_unsafe() ? QStringLiteral("true")
                                                          : QStringLiteral("false");
            break;
        case element_type::NULL_VALUE:
            continue; // null says "not set"
        default:
            return wrongType(param + u'.' + key, QStringLiteral("a string, number or boolean"),
                             field.value.type());
        }
        request.routingMetadata.append({key, value});
    }
    return std::nullopt;
}

// A cursor over JSON text that simdjson has already validated, so it only needs to find where
// tokens end, never to check them.
class JsonSkipper {
public:
    explicit JsonSkipper(QByteArrayView text) : m_text(text) {}

    qsizetype position() const { return m_position; }
    char peek() const { return m_position < m_text.size() ? m_text[m_position] : '\0'; }
    void advance() { ++m_position; }
    void skipSpace()
    {
        while (m_position < m_text.size() && std::isspace(static_cast<unsigned char>(peek())))
            ++m_position;
    }
    // At an opening quote; leaves the position after the closing one and returns the raw
    // contents (escapes not decoded).
    QByteArrayView skipString()
    {
        const qsizetype start = ++m_position;
        while (m_position < m_text.size() && m_text[m_position] != '"')
            m_position += m_text[m_position] == '\\' ? 2 : 1;
        const QByteArrayView contents = m_text.sliced(start, m_position - start);
        ++m_position;
        return contents;
    }
    void skipValue()
    {
        const char first = peek();
        if (first == '"') {
            skipString();
            return;
        }
        if (first != '{' && first != '[') {
            // A number, true, false or null ends at the next delimiter.
            while (m_position < m_text.size() && !isDelimiter(m_text[m_position]))
                ++m_position;
            return;
        }
        int depth = 0;
        while (m_position < m_text.size()) {
            const char c = m_text[m_position];
            if (c == '"') {
                skipString();
                continue;
            }
            ++m_position;
            if (c == '{' || c == '[')
                ++depth;
            else if ((c == '}' || c == ']') && --depth == 0)
                return;
        }
    }

private:
    static bool isDelimiter(char c)
    {
        return c == ',' || c == '}' || c == ']' || std::isspace(static_cast<unsigned char>(c));
    }

    QByteArrayView m_text;
    qsizetype m_position = 0;
};

bool isRoutingKey(QByteArrayView rawKey)
{
    if (rawKey == "switchyard")
        return true;
    if (!rawKey.contains('\\'))
        return false;
    // An escaped spelling of the same key is the same key to every JSON reader.
    const QByteArray quoted = '[' + ('"' + rawKey.toByteArray() + '"') + ']';
    return QJsonDocument::fromJson(quoted).array().at(0).toString() == u"switchyard";
}

} // namespace

QByteArray ChatRequest::withoutRoutingObject(const QByteArray &body) const
{
    if (!hasRoutingObject)
        return body;
    QByteArray result;
    result.reserve(body.size());
    JsonSkipper json(body);
    json.skipSpace();
    json.advance(); // '{'
    qsizetype copiedUpTo = 0;
    qsizetype previousValueEnd = -1; // where the previous member ended: its comma follows
    while (true) {
        json.skipSpace();
        if (json.peek() != '"')
            break; // '}' of the top-level object
        const qsizetype keyStart = json.position();
        const QByteArrayView key = json.skipString();
        json.skipSpace();
        json.advance(); // ':'
        json.skipSpace();
        json.skipValue();
        const qsizetype valueEnd = json.position();
        json.skipSpace();
        const bool last = json.peek() != ',';
        if (isRoutingKey(key)) {
            if (previousValueEnd < 0) {
                // The first member: drop "key: value," and keep the spacing before the next one.
                result.append(QByteArrayView(body).sliced(copiedUpTo, keyStart - copiedUpTo));
                if (last) {
                    copiedUpTo = json.position();
                    break;
                }
                json.advance();
                json.skipSpace();
                copiedUpTo = json.position();
                continue;
            }
            // Drop ", key: value": the previous member's comma goes with it.
            result.append(QByteArrayView(body).sliced(copiedUpTo, previousValueEnd - copiedUpTo));
            copiedUpTo = valueEnd;
        }
        previousValueEnd = valueEnd;
        if (last)
            break;
        json.advance(); // ','
    }
    result.append(QByteArrayView(body).sliced(copiedUpTo));
    return result;
}

QByteArray ChatRequest::withModel(const QByteArray &body, const QString &upstreamModel) const
{
    // Only renamed models pay for this: an on-demand pass finds the model's JSON token so that
    // exactly those bytes are replaced and everything else is forwarded as the client sent it.
    thread_local simdjson::ondemand::parser locator;
    const simdjson::padded_string padded(body.constData(), size_t(body.size()));
    simdjson::ondemand::document document;
    simdjson::ondemand::object fields;
    if (locator.iterate(padded).get(document) != simdjson::SUCCESS ||
        document.get_object().get(fields) != simdjson::SUCCESS)
        return body;
    for (auto field : fields) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS || key != "model")
            continue;
        std::string_view token = field.value().raw_json_token();
        while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
            token.remove_suffix(1);
        const QByteArray quoted = QJsonDocument(QJsonArray{upstreamModel})
                                      .toJson(QJsonDocument::Compact)
                                      .mid(1)
                                      .chopped(1); // a JSON string literal, correctly escaped
        QByteArray rewritten = body;
        rewritten.replace(token.data() - padded.data(), qsizetype(token.size()), quoted);
        return rewritten;
    }
    return body;
}

std::variant<ChatRequest, ApiError> parseChatRequest(const QByteArray &body)
{
    // One parser per thread: it keeps its buffers between requests, so parsing allocates nothing.
    thread_local simdjson::dom::parser parser;
    const simdjson::padded_string padded(body.constData(), size_t(body.size()));
    simdjson::dom::element root;
    if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
        return ApiError::invalidRequest(
            QStringLiteral("We could not parse the JSON body of your request (%1). The body must "
                           "be a JSON object.")
                .arg(QString::fromUtf8(simdjson::error_message(error))));
    }
    if (root.type() != element_type::OBJECT) {
        return ApiError::invalidRequest(
            QStringLiteral("The request body must be a JSON object, but got %1.")
                .arg(typeName(root.type())));
    }
    const simdjson::dom::object object = root.get_object().value_unsafe();
    ChatRequest request;

    // The members read here, found in one pass: a lookup by name scans the members again each
    // time, six times a request. A name given twice counts the first time, as a lookup finds it.
    struct {
        std::optional<simdjson::dom::element> model, messages, tools, functions, routing, stream;
    } found;
    for (const simdjson::dom::key_value_pair member : object) {
        const std::string_view name = member.key;
        std::optional<simdjson::dom::element> *slot = name == "model"sv        ? &found.model
                                                      : name == "messages"sv   ? &found.messages
                                                      : name == "stream"sv     ? &found.stream
                                                      : name == "tools"sv      ? &found.tools
                                                      : name == "functions"sv  ? &found.functions
                                                      : name == "switchyard"sv ? &found.routing
                                                                               : nullptr;
        if (slot && !*slot)
            *slot = member.value;
    }

    if (!found.model)
        return missing(QStringLiteral("model"));
    const simdjson::dom::element model = *found.model;
    if (model.type() != element_type::STRING)
        return wrongType(QStringLiteral("model"), QStringLiteral("a string"), model.type());
    request.model = fromView(model.get_string().value_unsafe());
    if (request.model.isEmpty()) {
        return ApiError::invalidRequest(
            QStringLiteral("Invalid value for 'model': it must not be empty."),
            QStringLiteral("model"));
    }

    if (!found.messages)
        return missing(QStringLiteral("messages"));
    const simdjson::dom::element messages = *found.messages;
    if (messages.type() != element_type::ARRAY)
        return wrongType(QStringLiteral("messages"), QStringLiteral("an array"), messages.type());
    simdjson::dom::array messageList;
    if (messages.get_array().get(messageList) != simdjson::SUCCESS)
        return wrongType(QStringLiteral("messages"), QStringLiteral("an array"), messages.type());
    int index = 0;
    for (simdjson::dom::element message : messageList) {
        if (auto error = validateMessage(message, index))
            return *error;
        ++index;
    }
    if (index == 0) {
        return ApiError::invalidRequest(
            QStringLiteral("Invalid 'messages': empty array. Expected an array with minimum "
                           "length 1, but got an empty array instead."),
            QStringLiteral("messages"));
    }
    request.messageCount = index;

    TextTally text;
    for (simdjson::dom::element message : messageList)
        tallyMessage(message, text);
    request.codeBlockCount = int((text.codeFences + 1) / 2);
    request.characterCount = text.characters();
    for (const std::optional<simdjson::dom::element> &toolList : {found.tools, found.functions}) {
        simdjson::dom::array tools;
        if (toolList && toolList->get(tools) == simdjson::SUCCESS) {
            request.toolCount += int(tools.size());
            for (simdjson::dom::element tool : tools)
                tallyJsonText(tool, text);
        }
    }
    request.estimatedInputTokens = estimateTokens(text, request.messageCount);

    if (found.routing) {
        if (auto error = readRoutingObject(*found.routing, request))
            return *error;
    }

    if (found.stream) {
        const simdjson::dom::element stream = *found.stream;
        if (stream.type() == element_type::BOOL)
            request.stream = stream.get_bool().value_unsafe();
        else if (stream.type() != element_type::NULL_VALUE)
            return wrongType(QStringLiteral("stream"), QStringLiteral("a boolean"), stream.type());
    }

    return request;
}

} // namespace switchyard::protocol
