#pragma once

#include "execution/client_channel.h"
#include "http/messages_answers.h"
#include "httpwire/response_writer.h"
#include "ingress/responses_ingress.h"

#include <QObject>
#include <functional>

namespace switchyard::http {

using httpwire::ResponseWriter;
using protocol::HeaderList;

// The client protocols the executor answers through, one per ingress, all on this base: the
// ClientChannel of an HTTP client's connection, which tells the listener when the socket goes or
// drains and writes what it is given as it is. OpenAI's chat protocol is the executor's own, so
// OpenAI's endpoints (chat, legacy completions, embeddings) use this channel itself; the
// Messages and Responses channels derive from it and translate on the way out.
class HttpClientChannel : public QObject, public execution::ClientChannel {
    Q_OBJECT
public:
    explicit HttpClientChannel(ResponseWriter writer);
    ~HttpClientChannel() override;

    void setListener(execution::ClientListener *listener) override;
    bool connected() const override { return m_writer.socket() != nullptr; }
    bool answerStarted() const override { return m_writer.headersSent(); }
    qint64 pendingBytes() const override { return m_writer.pendingBytes(); }

    void sendAnswer(int status, const HeaderList &headers, const QByteArray &openAiJson,
                    execution::Dialect dialect) override;
    void sendError(const protocol::ApiError &error, const HeaderList &headers) override;
    void beginStream(const HeaderList &headers, execution::Dialect dialect) override;
    void sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow) override;
    void failStream(const protocol::ApiError &error) override;
    void endStream() override;
    void abort() override;

protected:
    // Stream bytes to the client; `sendNow` false holds them for the end that follows.
    void writeStreamBytes(QByteArrayView bytes, bool sendNow);

    ResponseWriter m_writer;

private:
    bool m_heldSendPosted = false; // a send of held bytes is queued for the next pass
    execution::ClientListener *m_listener = nullptr;
    bool m_watchedThroughConnection = false; // the listener's connection forwards the signals
};

// POST /v1/messages and /v1/messages/count_tokens: every answer, error and stream event leaves in
// Anthropic's shapes. An answer an anthropic provider gave (Dialect::Native) leaves as it came;
// one translated from chat names the request fields it did not apply in
// x-switchyard-ignored-fields. Keeps the state of a streamed answer being translated.
class MessagesChannel final : public HttpClientChannel {
    Q_OBJECT
public:
    MessagesChannel(ResponseWriter writer, QStringList ignoredFields);

    void sendAnswer(int status, const HeaderList &headers, const QByteArray &openAiJson,
                    execution::Dialect dialect) override;
    void sendError(const protocol::ApiError &error, const HeaderList &headers) override;
    void beginStream(const HeaderList &headers, execution::Dialect dialect) override;
    void sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow) override;
    void failStream(const protocol::ApiError &error) override;

private:
    QStringList m_ignoredFields;
    MessagesAnswers m_messages;
    execution::Dialect m_streamDialect = execution::Dialect::Chat;
};

// POST /v1/responses: an answer translated from chat (Dialect::Chat) leaves as a Responses
// `response` object or typed event stream; one a provider gave in the Responses API itself
// (Dialect::Native) leaves as it came. Errors keep OpenAI's envelope, which the Responses API
// shares. A translated answer names the request fields it did not apply in
// x-switchyard-ignored-fields.
class ResponsesChannel final : public HttpClientChannel {
    Q_OBJECT
public:
    ResponsesChannel(ResponseWriter writer, ingress::ResponsesChatRequest request,
                     QByteArray responseId);

    void sendAnswer(int status, const HeaderList &headers, const QByteArray &openAiJson,
                    execution::Dialect dialect) override;
    void beginStream(const HeaderList &headers, execution::Dialect dialect) override;
    void sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow) override;
    void failStream(const protocol::ApiError &error) override;

    // Called once with the response object of a translated answer that ended (completed or
    // incomplete), whole or streamed: for a response the gateway stores.
    void setAnswerHook(std::function<void(const QByteArray &responseJson)> hook)
    {
        m_answerHook = std::move(hook);
    }

private:
    std::function<void(const QByteArray &)> m_answerHook;
    QStringList m_ignoredFields;
    QByteArray m_responseId;
    ingress::ResponsesStreamWriter m_stream;
    execution::Dialect m_streamDialect = execution::Dialect::Chat;
    qint64 m_lastNativeSequenceNumber = -1; // of a stream passed through, for its error event
};

} // namespace switchyard::http
