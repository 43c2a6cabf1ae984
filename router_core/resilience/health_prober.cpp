#include "resilience/health_prober.h"

#include "health/health_registry.h"
#include "upstream/adapters/provider_endpoint.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <algorithm>

Q_LOGGING_CATEGORY(lcProber, "switchyard.probes")

namespace switchyard::resilience {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

// One probe call, co_awaited: starts when awaited, resumes its coroutine once with the outcome.
// cancel() aborts the call and resumes it with none.
class HealthProber::ProbeCall final : public upstream::UpstreamObserver {
public:
    struct Outcome {
        bool ok = false;
        QString detail; // "HTTP 200", "timed out after 500 ms"; empty when cancelled
        // False when the probe could not be made at all (this process out of descriptors):
        // it says nothing about the provider.
        bool conclusive = true;
    };

    ProbeCall(upstream::UpstreamTransport &transport, upstream::UpstreamRequest request,
              milliseconds timeout)
        : m_transport(transport), m_request(std::move(request)), m_timeout(timeout)
    {}

    // A pointer-sized awaiter: the call is the transport's observer and must not move.
    struct Awaiter {
        ProbeCall *call;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> waiting)
        {
            call->m_waiting = waiting;
            call->m_call = call->m_transport.start(call->m_request, call);
        }
        Outcome await_resume() const { return call->m_outcome; }
    };
    Awaiter operator co_await() { return Awaiter{this}; }

    void cancel()
    {
        m_call.reset();
        resume({});
    }

    void onResponseHead(const upstream::UpstreamResponseHead &head) override
    {
        m_status = head.status;
    }
    void onResponseBody(QByteArrayView) override {} // only the status matters

    void onFinished(const upstream::UpstreamResult &result) override
    {
        m_call.reset();
        if (result.error == upstream::TransportError::TotalTimeout)
            resume({false, u"timed out after %1 ms"_s.arg(m_timeout.count())});
        else if (result.error == upstream::TransportError::LocalResources)
            resume({false, result.description, false});
        else if (result.error != upstream::TransportError::None)
            resume({false, result.description.isEmpty() ? upstream::describe(result.error)
                                                        : result.description});
        else
            resume({m_status >= 200 && m_status < 300, u"HTTP %1"_s.arg(m_status)});
        // The coroutine may have destroyed this call by now: nothing after resume().
    }

private:
    void resume(Outcome outcome)
    {
        m_outcome = std::move(outcome);
        if (std::coroutine_handle<> waiting = std::exchange(m_waiting, {}))
            waiting.resume();
    }

    upstream::UpstreamTransport &m_transport;
    upstream::UpstreamRequest m_request;
    milliseconds m_timeout;
    std::unique_ptr<upstream::UpstreamCall> m_call;
    std::coroutine_handle<> m_waiting;
    Outcome m_outcome;
    int m_status = 0;
};

void HealthProber::Loop::end()
{
    if (sleeping)
        sleeping->wake();
    else if (calling)
        calling->cancel();
}

HealthProber::HealthProber(const config::ConfigStore &store, health::HealthRegistry &health,
                           upstream::UpstreamTransport &transport,
                           timing::DeadlineScheduler &scheduler, QObject *parent)
    : QObject(parent), m_store(store), m_health(health), m_transport(transport),
      m_scheduler(scheduler)
{}

HealthProber::~HealthProber()
{
    stop();
}

void HealthProber::start()
{
    if (m_running)
        return;
    m_running = true;
    const int count = std::max(1, m_health.providerCount());
    for (int i = 0; i < m_health.providerCount(); ++i)
        startLoop(i, rules().interval + rules().interval * i / count);
    m_watcher.task.emplace(watchForNewEndpoints(m_watcher));
    qCInfo(lcProber).noquote() << "probing" << m_health.providerCount() << "provider(s) every"
                               << rules().interval.count() << "ms";
}

void HealthProber::stop()
{
    // Each loop, resumed, sees the prober stopped and returns; its frame goes with its task.
    m_running = false;
    m_watcher.end();
    for (const std::unique_ptr<Loop> &loop : m_loops)
        loop->end();
    m_loops.clear();
    m_watcher.task.reset();
}

int HealthProber::probesInFlight() const
{
    return int(std::count_if(m_loops.cbegin(), m_loops.cend(),
                             [](const auto &loop) { return loop->calling != nullptr; }));
}

void HealthProber::startLoop(int provider, milliseconds firstWait)
{
    m_loops.push_back(std::make_unique<Loop>());
    Loop &loop = *m_loops.back();
    loop.task.emplace(probeEndpoint(provider, loop, firstWait));
}

QCoro::Task<bool> HealthProber::wait(Loop &loop, milliseconds delay)
{
    timing::Sleep sleep(m_scheduler, delay);
    loop.sleeping = &sleep;
    const bool elapsed = co_await sleep;
    loop.sleeping = nullptr;
    co_return elapsed &&m_running;
}

QCoro::Task<> HealthProber::probeEndpoint(int provider, Loop &loop, milliseconds firstWait)
{
    // Each wait is a named task: GCC 12 may destroy a temporary co_awaited with a non-trivial
    // destructor twice.
    QCoro::Task<bool> first = wait(loop, firstWait);
    if (!co_await first)
        co_return;
    while (true) {
        const std::optional<upstream::UpstreamRequest> request =
            m_health.isRetired(provider) ? std::nullopt
                                         : probeRequest(rules(), m_health.providerConfig(provider));
        if (request) {
            ProbeCall call(m_transport, *request, rules().timeout);
            loop.calling = &call;
            const ProbeCall::Outcome outcome = co_await call;
            loop.calling = nullptr;
            if (!m_running)
                co_return;
            if (outcome.conclusive)
                report(provider, outcome.ok, outcome.detail);
            else
                qCWarning(lcProber).noquote() << "probe of" << m_health.providerConfig(provider).id
                                              << "not made, nothing recorded:" << outcome.detail;
        }
        QCoro::Task<bool> next = wait(loop, rules().interval);
        if (!co_await next)
            co_return;
    }
}

QCoro::Task<> HealthProber::watchForNewEndpoints(Loop &loop)
{
    // Endpoints added at runtime (agents) are first probed one interval after they are seen.
    while (true) {
        QCoro::Task<bool> next = wait(loop, rules().interval);
        if (!co_await next)
            co_return;
        for (int i = int(m_loops.size()); i < m_health.providerCount(); ++i)
            startLoop(i, rules().interval);
    }
}

void HealthProber::report(int provider, bool ok, const QString &detail)
{
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
    // A probe is called like any request to the provider: the same key, headers, query, proxy
    // and CA file, so a probe cannot pass where traffic would fail, or the other way round.
    request.headers = {{"Accept", "application/json"}, {"x-switchyard-probe", "1"}};
    request.headers.append(upstream::adapters::providerHeaders(provider));
    upstream::adapters::applyConnectionOptions(provider, request);

    const QString path = config.pathFor(provider.id);
    if (!path.isEmpty()) {
        // The path is on the provider's host, not under its API prefix: vLLM answers /health,
        // not /v1/health.
        request.method = "GET";
        config::ProviderConfig atHost = provider;
        atHost.baseUrl = provider.baseUrl.resolved(QUrl(path));
        request.url = upstream::adapters::providerUrl(atHost, {}, QString());
        return request;
    }
    const bool speaksOpenAi = provider.kind == config::ProviderKind::OpenAi ||
                              provider.kind == config::ProviderKind::Simulated;
    if (!speaksOpenAi || provider.models.isEmpty())
        return std::nullopt;
    // The cheapest call the provider's first model serves: one chat token, else one embedding,
    // one completion token, or the smallest Responses answer. A chat call to an embeddings
    // model would fail every probe and keep a healthy provider out.
    const config::ModelRoute *model = &provider.models.first();
    for (protocol::Operation operation :
         {protocol::Operation::Chat, protocol::Operation::Embeddings,
          protocol::Operation::Completions, protocol::Operation::Responses}) {
        const auto found = std::find_if(
            provider.models.cbegin(), provider.models.cend(),
            [operation](const config::ModelRoute &route) { return route.serves(operation); });
        if (found != provider.models.cend()) {
            model = &*found;
            break;
        }
    }
    const protocol::Operation operation =
        model->serves(protocol::Operation::Chat)          ? protocol::Operation::Chat
        : model->serves(protocol::Operation::Embeddings)  ? protocol::Operation::Embeddings
        : model->serves(protocol::Operation::Completions) ? protocol::Operation::Completions
                                                          : protocol::Operation::Responses;
    request.method = "POST";
    request.url = upstream::adapters::providerUrl(provider, protocol::upstreamPath(operation),
                                                  model->upstreamName);
    request.headers.append({QByteArray("Content-Type"), QByteArray("application/json")});
    QJsonObject body{{u"model"_s, model->upstreamName}};
    switch (operation) {
    case protocol::Operation::Chat:
    case protocol::Operation::Messages: // never chosen here: Anthropic's chat is chat
    case protocol::Operation::CountTokens:
        body.insert(u"messages"_s,
                    QJsonArray{QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, u"ping"_s}}});
        body.insert(u"max_tokens"_s, 1);
        body.insert(u"stream"_s, false);
        break;
    case protocol::Operation::Embeddings:
        body.insert(u"input"_s, u"ping"_s);
        break;
    case protocol::Operation::Completions:
        body.insert(u"prompt"_s, u"ping"_s);
        body.insert(u"max_tokens"_s, 1);
        break;
    case protocol::Operation::Responses:
        body.insert(u"input"_s, u"ping"_s);
        body.insert(u"max_output_tokens"_s, 16); // the API's smallest
        break;
    }
    request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    return request;
}

} // namespace switchyard::resilience
