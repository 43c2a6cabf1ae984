#include "resilience/health_prober.h"

#include "health/health_registry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <algorithm>

Q_LOGGING_CATEGORY(lcProber, "switchyard.probes")

namespace switchyard::resilience {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

// How often the schedule is looked at, as a share of the interval: small enough that a probe
// goes out close to its time, large enough that an idle gateway barely wakes up.
constexpr int kTicksPerInterval = 10;
constexpr milliseconds kLongestTick{1000};
constexpr milliseconds kShortestTick{5};

QUrl chatCompletionsUrl(const QUrl &baseUrl)
{
    QUrl url = baseUrl;
    QString path = url.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    url.setPath(path + u"/chat/completions"_s);
    return url;
}

} // namespace

// One probe in flight: remembers the answer's status and reports once.
class HealthProber::Probe final : public upstream::UpstreamObserver {
public:
    Probe(HealthProber &prober, int provider) : m_prober(prober), m_provider(provider) {}

    void begin(const upstream::UpstreamRequest &request)
    {
        m_call = m_prober.m_transport.start(request, this);
    }

    void onResponseHead(const upstream::UpstreamResponseHead &head) override
    {
        m_status = head.status;
    }
    void onResponseBody(QByteArrayView) override {} // only the status matters

    void onFinished(const upstream::UpstreamResult &result) override
    {
        if (result.error == upstream::TransportError::TotalTimeout) {
            m_prober.finishProbe(m_provider, false,
                                 u"timed out after %1 ms"_s.arg(m_prober.rules().timeout.count()));
        } else if (result.error != upstream::TransportError::None) {
            m_prober.finishProbe(m_provider, false,
                                 result.description.isEmpty() ? upstream::describe(result.error)
                                                              : result.description);
        } else if (m_status < 200 || m_status >= 300) {
            m_prober.finishProbe(m_provider, false, u"HTTP %1"_s.arg(m_status));
        } else {
            m_prober.finishProbe(m_provider, true, u"HTTP %1"_s.arg(m_status));
        }
    }

private:
    HealthProber &m_prober;
    int m_provider;
    int m_status = 0;
    std::unique_ptr<upstream::UpstreamCall> m_call;
};

HealthProber::HealthProber(const config::ConfigStore &store, health::HealthRegistry &health,
                           upstream::UpstreamTransport &transport, QObject *parent)
    : QObject(parent), m_store(store), m_health(health), m_transport(transport)
{
    const milliseconds tick =
        std::clamp(rules().interval / kTicksPerInterval, kShortestTick, kLongestTick);
    m_timer.setInterval(tick);
    connect(&m_timer, &QTimer::timeout, this, &HealthProber::tick);
    m_reaper.setSingleShot(true);
    m_reaper.setInterval(0);
    connect(&m_reaper, &QTimer::timeout, this, [this] { m_finished.clear(); });
}

HealthProber::~HealthProber()
{
    // Probes abort their calls as they go; the transport outlives the prober.
    m_slots.clear();
    m_finished.clear();
}

void HealthProber::start()
{
    const auto now = steady_clock::now();
    const int count = std::max(1, m_health.providerCount());
    m_slots.resize(std::size_t(m_health.providerCount()));
    for (int i = 0; i < int(m_slots.size()); ++i)
        m_slots[std::size_t(i)].nextAt = now + rules().interval + rules().interval * i / count;
    m_timer.start();
    qCInfo(lcProber).noquote() << "probing" << m_health.providerCount() << "provider(s) every"
                               << rules().interval.count() << "ms";
}

void HealthProber::stop()
{
    m_timer.stop();
    m_slots.clear();
}

int HealthProber::probesInFlight() const
{
    return int(std::count_if(m_slots.cbegin(), m_slots.cend(),
                             [](const Slot &slot) { return slot.running != nullptr; }));
}

void HealthProber::tick()
{
    const auto now = steady_clock::now();
    // Endpoints added at runtime are first probed one interval after they are seen.
    while (int(m_slots.size()) < m_health.providerCount())
        m_slots.push_back(Slot{now + rules().interval, nullptr});
    for (int i = 0; i < int(m_slots.size()); ++i) {
        Slot &slot = m_slots[std::size_t(i)];
        if (slot.running || now < slot.nextAt || m_health.isRetired(i))
            continue;
        slot.nextAt = now + rules().interval;
        startProbe(i);
    }
}

void HealthProber::startProbe(int provider)
{
    const std::optional<upstream::UpstreamRequest> request =
        probeRequest(rules(), m_health.providerConfig(provider));
    if (!request)
        return;
    Slot &slot = m_slots[std::size_t(provider)];
    slot.running = std::make_unique<Probe>(*this, provider);
    slot.running->begin(*request);
}

void HealthProber::finishProbe(int provider, bool ok, const QString &detail)
{
    Slot &slot = m_slots[std::size_t(provider)];
    m_finished.push_back(std::move(slot.running));
    m_reaper.start();
    qCDebug(lcProber).noquote() << "probe of" << m_health.providerConfig(provider).id
                                << (ok ? "succeeded:" : "failed:") << detail;
    m_health.probeResult(provider, ok, detail);
}

std::optional<upstream::UpstreamRequest>
HealthProber::probeRequest(const config::ProbeConfig &config,
                           const config::ProviderConfig &provider)
{
    if (!provider.baseUrl.isValid() || provider.baseUrl.host().isEmpty())
        return std::nullopt;
    upstream::UpstreamRequest request;
    request.connectTimeout = config.timeout;
    request.totalTimeout = config.timeout;
    request.headers = {{"Accept", "application/json"}, {"x-switchyard-probe", "1"}};
    if (!provider.apiKey.isEmpty())
        request.headers.append({QByteArray("Authorization"), "Bearer " + provider.apiKey});

    const QString path = config.pathFor(provider.id);
    if (!path.isEmpty()) {
        // The path is on the provider's host, not under its API prefix: vLLM answers /health,
        // not /v1/health.
        request.method = "GET";
        request.url = provider.baseUrl.resolved(QUrl(path));
        return request;
    }
    const bool speaksOpenAi = provider.kind == config::ProviderKind::OpenAi ||
                              provider.kind == config::ProviderKind::Simulated;
    if (!speaksOpenAi || provider.models.isEmpty())
        return std::nullopt;
    request.method = "POST";
    request.url = chatCompletionsUrl(provider.baseUrl);
    request.headers.append({QByteArray("Content-Type"), QByteArray("application/json")});
    const QJsonObject body{
        {u"model"_s, provider.models.first().upstreamName},
        {u"messages"_s, QJsonArray{QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, u"ping"_s}}}},
        {u"max_tokens"_s, 1},
        {u"stream"_s, false}};
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    return request;
}

} // namespace switchyard::resilience
