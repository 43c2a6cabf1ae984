#include "sim/simulated_provider.h"

#include "http/openai_error.h"
#include "http/response_writer.h"
#include "upstream/sse_parser.h"

#include <QDateTime>
#include <QHttpServerRequest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QTcpServer>
#include <QTimer>
#include <chrono>

namespace switchyard::sim {

namespace {

using namespace std::chrono;

constexpr std::array kWords = {"Switchyard", "routes",   "each",  "request",  "to",    "a",
                               "healthy",    "provider", "and",   "streams",  "the",   "answer",
                               "back",       "as",       "it",    "arrives",  "while", "the",
                               "console",    "shows",    "every", "decision", "live."};

QJsonObject chunkObject(const QByteArray &id, const QString &model, qint64 created,
                        const QJsonObject &delta, const QJsonValue &finishReason)
{
    return {{QStringLiteral("id"), QString::fromLatin1(id)},
            {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
            {QStringLiteral("created"), created},
            {QStringLiteral("model"), model},
            {QStringLiteral("choices"),
             QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                    {QStringLiteral("delta"), delta},
                                    {QStringLiteral("finish_reason"), finishReason}}}}};
}

QByteArray sseEvent(const QJsonObject &object)
{
    upstream::SseEvent event;
    event.data = QJsonDocument(object).toJson(QJsonDocument::Compact);
    return event.toWire();
}

// One answer being produced: waits, then writes the whole answer or streams it token by token.
// A QObject with its own timer (not a free-running coroutine) so that shutting the simulator
// down deletes every answer still in progress.
class SimulatedAnswer final : public QObject {
public:
    SimulatedAnswer(http::ResponseWriter writer, QString model, bool stream, bool fail,
                    const config::SimulatedBehaviour &behaviour, double jitter, QObject *parent)
        : QObject(parent), m_writer(std::move(writer)), m_model(std::move(model)), m_stream(stream),
          m_fail(fail), m_tokensLeft(behaviour.answerTokens),
          m_tokenInterval(std::max(1, int(1000.0 / behaviour.tokensPerSecond))),
          m_id("chatcmpl-sim" + QByteArray::number(QRandomGenerator::global()->generate64(), 36)),
          m_created(QDateTime::currentSecsSinceEpoch())
    {
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, &SimulatedAnswer::step);
        if (QTcpSocket *socket = m_writer.socket())
            connect(socket, &QObject::destroyed, this, &QObject::deleteLater);
        const auto firstDelay =
            m_stream && !m_fail ? behaviour.timeToFirstToken : behaviour.latency;
        m_timer.start(int(firstDelay.count() * jitter));
    }

private:
    void step()
    {
        if (!m_writer.clientConnected()) {
            deleteLater();
            return;
        }
        if (m_fail) {
            http::ApiError error{500,
                                 QStringLiteral("simulated provider failure"),
                                 QStringLiteral("server_error"),
                                 {},
                                 QStringLiteral("simulated"),
                                 {}};
            m_writer.sendError(error, {});
            deleteLater();
            return;
        }
        if (!m_stream) {
            m_writer.sendWhole(200, {}, "application/json",
                               QJsonDocument(completion()).toJson(QJsonDocument::Compact));
            deleteLater();
            return;
        }
        if (!m_writer.headersSent()) {
            m_writer.beginEventStream({});
            m_writer.writeStreamData(sseEvent(chunkObject(
                m_id, m_model, m_created, {{QStringLiteral("role"), QStringLiteral("assistant")}},
                QJsonValue::Null)));
        }
        if (m_tokensLeft > 0) {
            m_writer.writeStreamData(
                sseEvent(chunkObject(m_id, m_model, m_created,
                                     {{QStringLiteral("content"), nextWord()}}, QJsonValue::Null)));
            --m_tokensLeft;
            m_timer.start(m_tokenInterval);
            return;
        }
        m_writer.writeStreamData(
            sseEvent(chunkObject(m_id, m_model, m_created, {}, QStringLiteral("stop"))));
        m_writer.writeStreamData("data: [DONE]\n\n");
        m_writer.endEventStream();
        deleteLater();
    }

    QString nextWord()
    {
        const char *word = kWords[m_wordIndex++ % kWords.size()];
        return (m_wordIndex == 1 ? QString() : QStringLiteral(" ")) + QLatin1String(word);
    }

    QJsonObject completion()
    {
        QString text;
        for (int i = 0; i < m_tokensLeft; ++i)
            text += nextWord();
        const int tokens = m_tokensLeft;
        return {
            {QStringLiteral("id"), QString::fromLatin1(m_id)},
            {QStringLiteral("object"), QStringLiteral("chat.completion")},
            {QStringLiteral("created"), m_created},
            {QStringLiteral("model"), m_model},
            {QStringLiteral("choices"),
             QJsonArray{
                 QJsonObject{{QStringLiteral("index"), 0},
                             {QStringLiteral("message"),
                              QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                          {QStringLiteral("content"), text}}},
                             {QStringLiteral("finish_reason"), QStringLiteral("stop")}}}},
            {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), 12},
                                                  {QStringLiteral("completion_tokens"), tokens},
                                                  {QStringLiteral("total_tokens"), 12 + tokens}}}};
    }

    http::ResponseWriter m_writer;
    QString m_model;
    bool m_stream;
    bool m_fail;
    int m_tokensLeft;
    int m_tokenInterval;
    QByteArray m_id;
    qint64 m_created;
    std::size_t m_wordIndex = 0;
    QTimer m_timer;
};

} // namespace

SimulatedProvider::SimulatedProvider(config::ProviderConfig provider, QObject *parent)
    : QAbstractHttpServer(parent), m_provider(std::move(provider)),
      m_random(QRandomGenerator::global()->generate())
{}

quint16 SimulatedProvider::listenOnLoopback()
{
    auto *listener = new QTcpServer(this);
    if (!listener->listen(QHostAddress::LocalHost, 0)) {
        delete listener;
        return 0;
    }
    bind(listener);
    return listener->serverPort();
}

bool SimulatedProvider::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    http::ResponseWriter writer(makeResponder(request, socket));
    if (request.url().path() != QLatin1String("/v1/chat/completions") ||
        request.method() != QHttpServerRequest::Method::Post) {
        writer.sendError(http::ApiError::notFound(QStringLiteral("?"), request.url().path()), {});
        return true;
    }
    const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
    const config::SimulatedBehaviour &behaviour = m_provider.simulated;
    const bool fail = m_random.generateDouble() < behaviour.errorRate;
    // +/- 25 % jitter so latency percentiles look like a real provider's, not a constant.
    const double jitter = 0.75 + 0.5 * m_random.generateDouble();
    new SimulatedAnswer(std::move(writer), body.value(QStringLiteral("model")).toString(),
                        body.value(QStringLiteral("stream")).toBool(), fail, behaviour, jitter,
                        this);
    return true;
}

void SimulatedProvider::missingHandler(const QHttpServerRequest &, QTcpSocket *)
{
    // handleRequest answers everything.
}

} // namespace switchyard::sim
