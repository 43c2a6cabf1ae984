#include "sim/simulated_provider.h"

#include "httpwire/response_writer.h"
#include "protocol/openai_error.h"
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
#include <cmath>
#include <cstring>
#include <optional>

namespace switchyard::sim {

using std::chrono::milliseconds;

namespace {

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

// How a simulated answer ends, chosen when the request arrives.
enum class Ending {
    Complete,    // the whole answer, or a stream ending with [DONE]
    ServerError, // HTTP 500
    RateLimited, // HTTP 429 with Retry-After: 1
    Hang,        // nothing, ever: the caller's timeouts must end it
    Reset,       // the connection is closed without an answer
    CutStream,   // a stream cut after a couple of events, or a body cut half-way
};

// Streamed events a cut stream sends before it is cut: the role and two content events, so the
// client has seen a real beginning.
constexpr int kContentEventsBeforeCut = 2;

struct AnswerPlan {
    Ending ending = Ending::Complete;
    QString model;
    bool stream = false;
    QByteArray wholeAnswer; // sent as it is when not empty: an embeddings answer
    int tokens = 0;
    milliseconds firstDelay{0}; // before the head of the answer
    int tokenIntervalMs = 1;
};

// One answer being produced: waits, then writes the whole answer or streams it token by token,
// or fails the way its plan says. A QObject with its own timer (not a free-running coroutine) so
// that shutting the simulator down deletes every answer still in progress.
class SimulatedAnswer final : public QObject {
public:
    SimulatedAnswer(httpwire::ResponseWriter writer, AnswerPlan plan, QObject *parent)
        : QObject(parent), m_writer(std::move(writer)), m_plan(std::move(plan)),
          m_tokensLeft(m_plan.tokens),
          m_id("chatcmpl-sim" + QByteArray::number(QRandomGenerator::global()->generate64(), 36)),
          m_created(QDateTime::currentSecsSinceEpoch())
    {
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, &SimulatedAnswer::step);
        if (QTcpSocket *socket = m_writer.socket())
            connect(socket, &QObject::destroyed, this, &QObject::deleteLater);
        // A hanging answer only waits for the caller to give up; its socket's end deletes it.
        if (m_plan.ending != Ending::Hang)
            m_timer.start(int(m_plan.firstDelay.count()));
        else if (!m_writer.socket())
            deleteLater();
    }

private:
    void step()
    {
        if (!m_writer.clientConnected()) {
            deleteLater();
            return;
        }
        switch (m_plan.ending) {
        case Ending::ServerError:
            finishWithError(protocol::ApiError{500,
                                               QStringLiteral("simulated provider failure"),
                                               QStringLiteral("server_error"),
                                               {},
                                               QStringLiteral("simulated"),
                                               {}});
            return;
        case Ending::RateLimited:
            finishWithError(protocol::ApiError{429,
                                               QStringLiteral("simulated rate limit"),
                                               QStringLiteral("rate_limit_error"),
                                               {},
                                               QStringLiteral("rate_limit_exceeded"),
                                               "1"});
            return;
        case Ending::Reset:
            m_writer.socket()->abort();
            deleteLater();
            return;
        case Ending::Hang:
            return;
        case Ending::CutStream:
            if (!m_plan.stream) {
                cutWholeAnswer();
                return;
            }
            break;
        case Ending::Complete:
            if (!m_plan.wholeAnswer.isEmpty()) {
                m_writer.sendWhole(200, {}, "application/json", m_plan.wholeAnswer);
                deleteLater();
                return;
            }
            if (!m_plan.stream) {
                m_writer.sendWhole(200, {}, "application/json",
                                   QJsonDocument(completion()).toJson(QJsonDocument::Compact));
                deleteLater();
                return;
            }
            break;
        }
        streamStep();
    }

    void finishWithError(const protocol::ApiError &error)
    {
        m_writer.sendError(error, {});
        deleteLater();
    }

    void streamStep()
    {
        if (!m_writer.headersSent()) {
            m_writer.beginEventStream({});
            m_writer.writeStreamData(sseEvent(chunkObject(
                m_id, m_plan.model, m_created,
                {{QStringLiteral("role"), QStringLiteral("assistant")}}, QJsonValue::Null)));
        }
        if (m_plan.ending == Ending::CutStream && m_eventsSent == kContentEventsBeforeCut) {
            // Closed after what was written is sent, without the stream's last chunk: the
            // caller sees a stream that stops in the middle.
            m_writer.socket()->disconnectFromHost();
            deleteLater();
            return;
        }
        if (m_tokensLeft > 0 || m_plan.ending == Ending::CutStream) {
            m_writer.writeStreamData(
                sseEvent(chunkObject(m_id, m_plan.model, m_created,
                                     {{QStringLiteral("content"), nextWord()}}, QJsonValue::Null)));
            m_tokensLeft = std::max(0, m_tokensLeft - 1);
            ++m_eventsSent;
            m_timer.start(m_plan.tokenIntervalMs);
            return;
        }
        m_writer.writeStreamData(
            sseEvent(chunkObject(m_id, m_plan.model, m_created, {}, QStringLiteral("stop"))));
        m_writer.writeStreamData("data: [DONE]\n\n");
        m_writer.endEventStream();
        deleteLater();
    }

    // A whole answer whose body stops half-way: the head promises every byte, half arrive,
    // then the connection closes. Written on the socket directly because no well-behaved
    // writer can produce it.
    void cutWholeAnswer()
    {
        const QByteArray body = QJsonDocument(completion()).toJson(QJsonDocument::Compact);
        QTcpSocket *socket = m_writer.socket();
        socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                      QByteArray::number(body.size()) + "\r\n\r\n" + body.left(body.size() / 2));
        socket->disconnectFromHost();
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
            {QStringLiteral("model"), m_plan.model},
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

    httpwire::ResponseWriter m_writer;
    AnswerPlan m_plan;
    int m_tokensLeft;
    int m_eventsSent = 0;
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

QByteArray SimulatedProvider::embeddingsAnswer(const QJsonObject &body) const
{
    const QString model = body.value(QStringLiteral("model")).toString();
    const config::ModelRoute *route = m_provider.modelByUpstreamName(model);
    int dimensions = body.value(QStringLiteral("dimensions")).toInt(0);
    if (dimensions <= 0)
        dimensions = route && route->dimensions > 0 ? route->dimensions : kDefaultDimensions;
    const bool base64 =
        body.value(QStringLiteral("encoding_format")).toString() == QLatin1String("base64");
    QJsonArray inputs;
    const QJsonValue input = body.value(QStringLiteral("input"));
    if (input.isArray() && !input.toArray().isEmpty() && !input.toArray().first().isDouble())
        inputs = input.toArray();
    else
        inputs.append(input);

    QJsonArray data;
    qint64 promptTokens = 0;
    for (qsizetype index = 0; index < inputs.size(); ++index) {
        const QByteArray text = QJsonDocument(QJsonArray{inputs[index]}).toJson();
        promptTokens += inputs[index].isString() ? (inputs[index].toString().size() + 3) / 4
                                                 : inputs[index].toArray().size();
        const QList<float> vector = deterministicVector(model, text, dimensions);
        QJsonValue embedding;
        if (base64) {
            // Little-endian float32s, as OpenAI encodes them.
            QByteArray bytes(qsizetype(vector.size() * sizeof(float)), Qt::Uninitialized);
            std::memcpy(bytes.data(), vector.constData(), size_t(bytes.size()));
            embedding = QString::fromLatin1(bytes.toBase64());
        } else {
            QJsonArray values;
            for (float value : vector)
                values.append(double(value));
            embedding = values;
        }
        data.append(QJsonObject{{QStringLiteral("object"), QStringLiteral("embedding")},
                                {QStringLiteral("index"), int(index)},
                                {QStringLiteral("embedding"), embedding}});
    }
    const QJsonObject answer{
        {QStringLiteral("object"), QStringLiteral("list")},
        {QStringLiteral("data"), data},
        {QStringLiteral("model"), model},
        {QStringLiteral("usage"), QJsonObject{{QStringLiteral("prompt_tokens"), promptTokens},
                                              {QStringLiteral("total_tokens"), promptTokens}}}};
    return QJsonDocument(answer).toJson(QJsonDocument::Compact);
}

QList<float> SimulatedProvider::deterministicVector(const QString &model, QByteArrayView text,
                                                    int dimensions)
{
    // splitmix64 seeded by an FNV-1a hash of the model and the text: the same input always gets
    // the same vector, different inputs different ones, on every machine (qHash may not: it
    // takes a CPU-dependent path).
    quint64 state = 0xcbf29ce484222325ULL;
    const auto mix = [&state](QByteArrayView bytes) {
        for (char byte : bytes) {
            state ^= quint64(static_cast<unsigned char>(byte));
            state *= 0x100000001b3ULL;
        }
    };
    mix(model.toUtf8());
    mix("\n");
    mix(text);
    const auto next = [&state] {
        quint64 z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    QList<float> vector(dimensions);
    double norm = 0.0;
    for (float &value : vector) {
        value = float(double(next() >> 11) / double(1ULL << 53) * 2.0 - 1.0);
        norm += double(value) * double(value);
    }
    // Unit length, as real embedding models return: cosine similarity is then a dot product.
    const double scale = norm > 0.0 ? 1.0 / std::sqrt(norm) : 1.0;
    for (float &value : vector)
        value = float(double(value) * scale);
    return vector;
}

bool SimulatedProvider::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    httpwire::ResponseWriter writer(socket);
    const bool embeddings = request.url().path() == QLatin1String("/v1/embeddings");
    if ((request.url().path() != QLatin1String("/v1/chat/completions") && !embeddings) ||
        request.method() != QHttpServerRequest::Method::Post) {
        writer.sendError(protocol::ApiError::notFound(QStringLiteral("?"), request.url().path()),
                         {});
        return true;
    }
    const QJsonObject body = QJsonDocument::fromJson(request.body()).object();
    const config::SimulatedBehaviour &behaviour = m_provider.simulated;
    const double errorRate = m_knobs.errorRate >= 0 ? m_knobs.errorRate : behaviour.errorRate;
    // +/- 25 % jitter so latency percentiles look like a real provider's, not a constant.
    const double jitter = 0.75 + 0.5 * m_random.generateDouble();

    AnswerPlan plan;
    plan.model = body.value(QStringLiteral("model")).toString();
    plan.stream = !embeddings && body.value(QStringLiteral("stream")).toBool();
    if (embeddings)
        plan.wholeAnswer = embeddingsAnswer(body);
    switch (m_knobs.mode) {
    case SimulatorKnobs::Mode::Ok:
        plan.ending =
            m_random.generateDouble() < errorRate ? Ending::ServerError : Ending::Complete;
        break;
    case SimulatorKnobs::Mode::ServerError:
        plan.ending = Ending::ServerError;
        break;
    case SimulatorKnobs::Mode::RateLimited:
        plan.ending = Ending::RateLimited;
        break;
    case SimulatorKnobs::Mode::Hang:
        plan.ending = Ending::Hang;
        break;
    case SimulatorKnobs::Mode::Reset:
        plan.ending = Ending::Reset;
        break;
    case SimulatorKnobs::Mode::CutStream:
        plan.ending = Ending::CutStream;
        break;
    }
    // A latency knob replaces both delays: the whole answer's and the first token's.
    const milliseconds latency =
        m_knobs.latencyMs >= 0 ? milliseconds(m_knobs.latencyMs) : behaviour.latency;
    const milliseconds firstToken =
        m_knobs.latencyMs >= 0 ? milliseconds(m_knobs.latencyMs) : behaviour.timeToFirstToken;
    const bool streamsTokens =
        plan.stream && (plan.ending == Ending::Complete || plan.ending == Ending::CutStream);
    plan.firstDelay =
        milliseconds(qRound64((streamsTokens ? firstToken : latency).count() * jitter));
    plan.tokenIntervalMs = std::max(1, int(1000.0 / behaviour.tokensPerSecond));
    plan.tokens = behaviour.answerTokens;
    // Honoured like a real provider would, so a one-token health probe gets one token.
    for (const QString &limitField :
         {QStringLiteral("max_completion_tokens"), QStringLiteral("max_tokens")}) {
        const int limit = body.value(limitField).toInt(0);
        if (limit > 0)
            plan.tokens = std::min(plan.tokens, limit);
    }
    new SimulatedAnswer(std::move(writer), std::move(plan), this);
    return true;
}

void SimulatedProvider::missingHandler(const QHttpServerRequest &, QTcpSocket *)
{
    // handleRequest answers everything.
}

} // namespace switchyard::sim
