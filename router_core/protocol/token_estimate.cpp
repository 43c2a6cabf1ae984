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
    const std::string_view bytes(json.data(), std::size_t(json.size()));
    std::size_t at = 0;
    while (at < bytes.size()) {
        // The nearest text member from here.
        std::size_t found = std::string_view::npos;
        std::size_t nameLength = 0;
        for (std::string_view member : kTextMembers) {
            const std::size_t position = bytes.find(member, at);
            if (position < found) {
                found = position;
                nameLength = member.size();
            }
        }
        if (found == std::string_view::npos)
            return;
        std::size_t i = found + nameLength;
        while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n'))
            ++i;
        if (i >= bytes.size() || bytes[i] != ':') {
            at = found + nameLength; // the name was a value, not a member
            continue;
        }
        ++i;
        while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n'))
            ++i;
        if (i >= bytes.size() || bytes[i] != '"') {
            at = i; // null, or an array of parts whose own `text` members are found next
            continue;
        }
        ++i;
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
        at = i + 1;
    }
}

qint64 AnswerTextTally::estimatedTokens() const
{
    if (isEmpty())
        return 0;
    return (m_ascii + 3) / 4 + m_cjk + (m_other + 1) / 2;
}

} // namespace switchyard::protocol
