#include "protocol/token_estimate.h"

#include <array>
#include <string_view>

namespace switchyard::protocol {

namespace {

// CJK ideographs, kana and hangul: about one token each in the common tokenizers.
bool isCjk(char32_t codePoint)
{
    return (codePoint >= 0x3040 && codePoint <= 0x30FF) || // kana
           (codePoint >= 0x3400 && codePoint <= 0x9FFF) || // ideographs
           (codePoint >= 0xAC00 && codePoint <= 0xD7AF) || // hangul
           (codePoint >= 0xF900 && codePoint <= 0xFAFF);
}

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The members whose string values are the answer's text.
// `delta` is a passed-through Responses API stream's text event (a chat chunk's `delta` is an
// object, skipped as such).
constexpr std::array<std::string_view, 5> kTextMembers{"\"content\"", "\"refusal\"",
                                                       "\"arguments\"", "\"text\"", "\"delta\""};

bool isTextMember(std::string_view quotedName)
{
    for (std::string_view member : kTextMembers) {
        if (quotedName == member)
            return true;
    }
    return false;
}

std::size_t skipWhitespace(std::string_view bytes, std::size_t i)
{
    while (i < bytes.size() &&
           (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n' || bytes[i] == '\r'))
        ++i;
    return i;
}

// The index of the quote that closes the string whose first character is at `from`, or npos.
// A quote preceded by an odd run of backslashes is escaped.
std::size_t closingQuote(std::string_view bytes, std::size_t from)
{
    for (std::size_t quote = bytes.find('"', from); quote != std::string_view::npos;
         quote = bytes.find('"', quote + 1)) {
        std::size_t backslashes = 0;
        while (quote - backslashes > from && bytes[quote - backslashes - 1] == '\\')
            ++backslashes;
        if (backslashes % 2 == 0)
            return quote;
    }
    return std::string_view::npos;
}

} // namespace

void AnswerTextTally::countCodePoint(char32_t codePoint)
{
    if (codePoint < 0x80)
        ++m_ascii;
    else if (isCjk(codePoint))
        ++m_cjk;
    else
        ++m_other;
}

void AnswerTextTally::add(QByteArrayView json)
{
    // One pass over the JSON's strings: each is read whole, escapes included, so a quote inside a
    // value never starts a member. A string followed by `:` is a member's name; a text member's
    // string value is counted. Searching the bytes for each member name instead scanned the rest
    // of the event once per name and per member found: most of a relayed event's CPU.
    const std::string_view bytes(json.data(), std::size_t(json.size()));
    const std::size_t size = bytes.size();
    std::size_t at = 0;
    while (at < size) {
        const std::size_t open = bytes.find('"', at);
        if (open == std::string_view::npos)
            return;
        const std::size_t close = closingQuote(bytes, open + 1);
        if (close == std::string_view::npos)
            return; // a string cut off: nothing after it is text
        std::size_t i = skipWhitespace(bytes, close + 1);
        if (i >= size || bytes[i] != ':' || !isTextMember(bytes.substr(open, close + 1 - open))) {
            at = close + 1; // a value, or another member's name
            continue;
        }
        i = skipWhitespace(bytes, i + 1);
        if (i >= size || bytes[i] != '"') {
            at = i; // null, or an array of parts whose own `text` members are read next
            continue;
        }
        at = countString(bytes, i + 1) + 1;
    }
}

std::size_t AnswerTextTally::countString(std::string_view bytes, std::size_t i)
{
    // The string's characters up to its closing quote, escapes decoded as one character.
    while (i < bytes.size() && bytes[i] != '"') {
        const auto lead = static_cast<unsigned char>(bytes[i]);
        if (lead == '\\' && i + 1 < bytes.size()) {
            if (bytes[i + 1] == 'u' && i + 5 < bytes.size()) {
                char32_t codePoint = 0;
                bool valid = true;
                for (std::size_t k = 2; k < 6; ++k) {
                    const int digit = hexValue(bytes[i + k]);
                    valid = valid && digit >= 0;
                    codePoint = (codePoint << 4) | char32_t(digit < 0 ? 0 : digit);
                }
                countCodePoint(valid ? codePoint : U'?');
                i += 6;
            } else {
                ++m_ascii;
                i += 2;
            }
            continue;
        }
        if (lead < 0x80) {
            ++m_ascii;
            ++i;
            continue;
        }
        const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        char32_t codePoint = lead & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F);
        for (std::size_t k = 1; k < length && i + k < bytes.size(); ++k)
            codePoint = (codePoint << 6) | (static_cast<unsigned char>(bytes[i + k]) & 0x3F);
        countCodePoint(codePoint);
        i += length;
    }
    return i;
}

qint64 AnswerTextTally::estimatedTokens() const
{
    if (isEmpty())
        return 0;
    return (m_ascii + 3) / 4 + m_cjk + (m_other + 1) / 2;
}

} // namespace switchyard::protocol
