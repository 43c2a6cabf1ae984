#pragma once

#include <QByteArrayView>
#include <QtGlobal>
#include <string_view>

namespace switchyard::protocol {

// Counts the text of a model's answer as the client receives it (OpenAI's chat.completion, its
// chunk events, a legacy completion), so its tokens can be estimated when the provider reports no
// usage: a stream the client did not ask `stream_options.include_usage` for, a provider that
// never counts. Only the values of `content`, `refusal`, `arguments` (tool calls) and `text` are
// read (and a passed-through Responses stream's `delta`), in one pass over the bytes without
// parsing the JSON: it runs on every relayed event.
class AnswerTextTally {
public:
    void add(QByteArrayView json);

    qint64 asciiCharacters() const { return m_ascii; }
    qint64 cjkCharacters() const { return m_cjk; }
    qint64 otherCharacters() const { return m_other; }
    bool isEmpty() const { return m_ascii + m_cjk + m_other == 0; }

    // The same rule as a request's estimate (protocol::ChatRequest::estimatedInputTokens): about
    // 4 ASCII characters per token, 1 per CJK character, 2 other characters per token.
    qint64 estimatedTokens() const;

private:
    // Counts the string whose first character is at `i`; returns its closing quote's index.
    std::size_t countString(std::string_view bytes, std::size_t i);
    void countCodePoint(char32_t codePoint);

    qint64 m_ascii = 0;
    qint64 m_cjk = 0;
    qint64 m_other = 0;
};

} // namespace switchyard::protocol
