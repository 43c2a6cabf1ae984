#pragma once

#include "upstream/sse_parser.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace switchyard::execution {

// A text stream that may go on at another provider when its own is cut after its first content
// (`continue_streams`, docs/resilience.md "Streams that survive a cut"). It reads the chat chunks
// relayed to the client, keeping the text they carried and watching for what may never be
// continued: tool calls, reasoning (a thinking signature cannot be forged by another model),
// logprobs, a second choice. After a cut it rewrites the continuing provider's chunks so the client
// reads one stream: the first one's id, no second opening, and the switch marked on the first
// continued chunk in a `switchyard` member the official SDKs ignore.
//
// Only a stream relayed as chat chunks is read (Dialect::Chat): the client's channel translates
// those to Messages or Responses events, the marker included. A stream passed through in a
// provider's own protocol is not continued.
class StreamContinuation {
public:
    // From the client's chat request: whether its stream may ever be continued (no `n` above 1,
    // no `logprobs`). Parsed once, only for a request whose route or tier turns it on.
    static bool requestAllows(const QByteArray &chatBody);

    // The chunks about to reach the client, before a cut: collects their text and marks the
    // stream as not continuable on anything but text.
    void observe(const QList<upstream::SseEvent> &events);
    // Whether the text so far may be handed to another provider.
    bool continuable() const { return m_continuable && !m_text.isEmpty(); }
    // Why not, for the trace; empty when it is.
    QString refusal() const;
    const QString &text() const { return m_text; }

    // The stream was cut: the next chunks to reach the client are another provider's. `from` and
    // `to` are the providers, `reason` the cut's error code, `attempt` the continuing attempt.
    // `trimmedTail`: white space left off the end of the partial answer (Anthropic refuses an
    // assistant message ending in it), so the continuation's own leading white space is dropped.
    void beginContinuation(const QString &from, const QString &to, const QString &reason,
                           int attempt, bool trimmedTail);
    // Rewrites a continuing provider's chunks in place: opening chunks dropped until its first
    // content, the first stream's id given to each, the marker added to the first with text.
    // Also observes them, as a further cut may continue again.
    void rewriteContinued(QList<upstream::SseEvent> &events);
    int continuations() const { return m_continuations; }

private:
    void observeChunk(const QJsonObject &chunk);

    QString m_text;
    QByteArray m_chunkId; // the first stream's `id`
    bool m_continuable = true;
    QString m_refusal;
    int m_continuations = 0;
    // Set between beginContinuation() and the continuing provider's first text.
    bool m_awaitingContinuedText = false;
    bool m_dropLeadingSpace = false;
    QJsonObject m_marker;
};

} // namespace switchyard::execution
