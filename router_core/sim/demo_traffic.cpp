#include "sim/demo_traffic.h"

#include "upstream/gateway_transport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace switchyard::sim {

namespace {
constexpr std::array kPrompts = {
    "Summarise the release notes in three bullet points.",
    "What is the capital of Australia?",
    "Write a haiku about circuit breakers.",
    "Explain consistent hashing to a new engineer.",
    "Translate 'the gateway is healthy' into French.",
    "List two ways to make a stream resumable.",
};
} // namespace

class DemoTraffic::DemoCall final : public upstream::UpstreamObserver {
public:
    explicit DemoCall(DemoTraffic *owner) : m_owner(owner) {}
    std::unique_ptr<upstream::UpstreamCall> call;

    void onResponseHead(const upstream::UpstreamResponseHead &) override {}
    void onResponseBody(QByteArrayView) override {}
    void onFinished(const upstream::UpstreamResult &) override { m_owner->finishCall(this); }

private:
    DemoTraffic *m_owner;
};

QList<DemoModel> demoModelsOf(const QList<config::ProviderConfig> &providers)
{
    QStringList names;
    QList<protocol::Operations> served; // by index in names, over every provider
    for (const config::ProviderConfig &provider : providers) {
        for (const config::ModelRoute &model : provider.models) {
            qsizetype index = names.indexOf(model.publicName);
            if (index < 0) {
                index = names.size();
                names.append(model.publicName);
                served.append(0);
            }
            served[index] |= model.endpoints;
        }
    }
    QList<DemoModel> models;
    for (qsizetype index = 0; index < names.size(); ++index) {
        for (const protocol::Operation operation :
             {protocol::Operation::Chat, protocol::Operation::Embeddings}) {
            if (served[index] & protocol::operationBit(operation)) {
                models.append(DemoModel{names[index], operation});
                break;
            }
        }
    }
    return models;
}

DemoTraffic::DemoTraffic(QUrl gatewayBaseUrl, QList<DemoModel> models, QObject *parent)
    : QObject(parent), m_gatewayBaseUrl(std::move(gatewayBaseUrl)), m_models(std::move(models)),
      m_random(QRandomGenerator::global()->generate())
{
    connect(&m_tick, &QTimer::timeout, this, &DemoTraffic::sendOne);
}

DemoTraffic::~DemoTraffic()
{
    m_calls.clear(); // aborts what is still open while the transport exists
}

void DemoTraffic::setRate(bool enabled, double requestsPerSecond)
{
    if (!enabled || requestsPerSecond <= 0 || m_models.isEmpty()) {
        m_tick.stop();
        return;
    }
    m_tick.start(std::max(1, int(1000.0 / requestsPerSecond)));
}

void DemoTraffic::sendOne()
{
    if (int(m_calls.size()) >= kMaxOutstanding)
        return;
    if (!m_transport)
        m_transport = new upstream::GatewayTransport(this);

    const DemoModel &model = m_models[m_random.bounded(int(m_models.size()))];
    upstream::UpstreamRequest request;
    request.url = m_gatewayBaseUrl.resolved(QUrl(protocol::operationPath(model.operation)));
    request.body = model.operation == protocol::Operation::Embeddings ? embeddingsBody(model.name)
                                                                      : chatBody(model.name);
    request.headers = {{"Content-Type", "application/json"}, {"x-switchyard-user", "demo"}};
    request.totalTimeout = std::chrono::seconds(60);

    auto call = std::make_unique<DemoCall>(this);
    DemoCall *raw = call.get();
    m_calls.emplace(raw, std::move(call));
    raw->call = m_transport->start(request, raw);
}

QByteArray DemoTraffic::chatBody(const QString &model)
{
    const bool stream = m_random.bounded(2) == 0;
    const QJsonObject body{
        {QStringLiteral("model"), model},
        {QStringLiteral("stream"), stream},
        {QStringLiteral("messages"),
         QJsonArray{
             QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                         {QStringLiteral("content"),
                          QLatin1String(kPrompts[m_random.bounded(int(kPrompts.size()))])}}}}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QByteArray DemoTraffic::embeddingsBody(const QString &model)
{
    const QJsonObject body{
        {QStringLiteral("model"), model},
        {QStringLiteral("input"), QLatin1String(kPrompts[m_random.bounded(int(kPrompts.size()))])}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

void DemoTraffic::finishCall(DemoCall *call)
{
    // Called from the transport's completion path, outside libcurl callbacks: safe to free.
    m_calls.erase(call);
}

} // namespace switchyard::sim
