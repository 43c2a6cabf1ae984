#pragma once

#include "protocol/openai_error.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_transport.h"

#include <QByteArray>
#include <QList>

namespace switchyard::execution {

using HeaderList = upstream::HeaderList;

// What the client's side tells the execution while it runs.
class ClientListener {
public:
    virtual ~ClientListener() = default;
    virtual void onClientGone() = 0;    // disconnected: nothing more can reach it
    virtual void onClientDrained() = 0; // took bytes from its send buffer
};

// What an answer handed to a ClientChannel is written in. The executor's own protocol is OpenAI's
// chat; an operation passed through to a provider that speaks it (the Responses API to a
// provider that has it, Anthropic's Messages to an anthropic provider, embeddings, legacy
// completions) comes back in that operation's own shapes, which a channel for that operation
// sends on as they are.
enum class Dialect { Chat, Native };

// The seam between execution and the client's protocol. The executor speaks OpenAI's shapes
// (a chat.completion, chat.completion.chunk events, an OpenAI error) and nothing else; each
// client protocol (OpenAI's chat, Anthropic's Messages, the Responses API) implements this once
// in http/ and translates on the way out, keeping whatever state a translated stream needs
// (typed events, sequence numbers); an answer a provider gave in the client's own protocol
// (Dialect::Native) goes out as it came. An operation other than chat (embeddings) uses the same
// calls: a whole answer, an error, or a stream. There is no protocol test in the executor.
class ClientChannel {
public:
    virtual ~ClientChannel() = default;

    // Set once, before anything is sent; the listener outlives the channel's use.
    virtual void setListener(ClientListener *listener) = 0;
    virtual bool connected() const = 0;
    // The status line is gone: from here on a failure can only end the stream.
    virtual bool answerStarted() const = 0;
    // Bytes written but not yet taken by the client, for back-pressure.
    virtual qint64 pendingBytes() const = 0;

    // A whole answer: `openAiJson` is a chat.completion, or the operation's own OpenAI answer
    // object when `dialect` is Native.
    virtual void sendAnswer(int status, const HeaderList &headers, const QByteArray &openAiJson,
                            Dialect dialect) = 0;
    virtual void sendError(const protocol::ApiError &error, const HeaderList &headers) = 0;

    // A streamed answer: OpenAI chunk events in order, the last one [DONE] once it is whole; or,
    // when `dialect` is Native, the operation's own events as its provider sent them.
    // `sendNow` false leaves the bytes queued for the next write that sends (the end follows).
    // beginStream is followed at once by the first sendStreamEvents, failStream or endStream,
    // and its head may wait for them.
    virtual void beginStream(const HeaderList &headers, Dialect dialect) = 0;
    virtual void sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow) = 0;
    // After the first byte the status line is gone: the failure becomes the stream's last
    // event, in the client's protocol, and the stream ends without a completion marker.
    virtual void failStream(const protocol::ApiError &error) = 0;
    virtual void endStream() = 0;

    // Drops the client at once (it stalled and holds a provider slot).
    virtual void abort() = 0;
};

} // namespace switchyard::execution
