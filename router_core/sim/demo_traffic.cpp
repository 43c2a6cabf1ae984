#include "sim/demo_traffic.h"

#include "upstream/curl_transport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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

DemoTraffic::DemoTraffic(QUrl gatewayBaseUrl, QStringList models, QObject *parent)
    : QObject(parent),
      m_chatUrl(gatewayBaseUrl.resolved(QUrl(QStringLiteral("v1/chat/completions")))),
      m_models(std::move(models)), m_random(QRandomGenerator::global()->generate())
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
        m_transport = new upstream::CurlTransport(this);

    const bool stream = m_random.bounded(2) == 0;
    const QString model = m_models[m_random.bounded(int(m_models.size()))];
    const QJsonObject body{
        {QStringLiteral("model"), model},
        {QStringLiteral("stream"), stream},
        {QStringLiteral("messages"),
         QJsonArray{
             QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                         {QStringLiteral("content"),
                          QLatin1String(kPrompts[m_random.bounded(int(kPrompts.size()))])}}}}};

    upstream::UpstreamRequest request;
    request.url = m_chatUrl;
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    request.headers = {{"Content-Type", "application/json"}, {"x-switchyard-user", "demo"}};
    request.totalTimeout = std::chrono::seconds(60);

    auto call = std::make_unique<DemoCall>(this);
    DemoCall *raw = call.get();
    m_calls.emplace(raw, std::move(call));
    raw->call = m_transport->start(request, raw);
}

void DemoTraffic::finishCall(DemoCall *call)
{
    // Called from the transport's completion path, outside libcurl callbacks: safe to free.
    m_calls.erase(call);
}

} // namespace switchyard::sim
