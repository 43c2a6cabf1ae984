#include "gateway_harness.h"

#include "config/config_loader.h"
#include "eventloop/epoll_event_dispatcher.h"
#include "fake_upstream.h"
#include "health/health_registry.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace switchyard::testing {

namespace {

// SWITCHYARD_TEST_EVENT_DISPATCHER=epoll puts the test's own thread, and with it every engine,
// fake upstream and client an integration test starts there, on the engine thread's epoll
// dispatcher instead of Qt's: the whole integration suite then exercises it. Set before the
// application object exists, as Qt requires.
[[maybe_unused]] const bool kTestThreadOnEpoll = [] {
    if (qgetenv("SWITCHYARD_TEST_EVENT_DISPATCHER") != "epoll")
        return false;
    QCoreApplication::setEventDispatcher(new eventloop::EpollEventDispatcher);
    return true;
}();

} // namespace

config::ProviderConfig providerAt(const QString &id, const QByteArray &baseUrl,
                                  const QStringList &models)
{
    config::ProviderConfig provider;
    provider.id = id;
    provider.kind = config::ProviderKind::OpenAi;
    provider.baseUrl = QUrl::fromEncoded(baseUrl);
    for (const QString &model : models)
        provider.models.append(config::ModelRoute{model, model});
    return provider;
}

config::ProviderConfig providerFor(const QString &id, const FakeUpstream &fake,
                                   const QStringList &models)
{
    return providerAt(id, fake.baseUrl(), models);
}

config::Config loadTestConfig(const QByteArray &yaml, const QString &sourceName,
                              const config::EnvironmentLookup &environment)
{
    const config::EnvironmentLookup nothingSet = [](const QString &) {
        return std::optional<QByteArray>();
    };
    config::LoadResult result =
        config::loadConfigText(yaml, sourceName, environment ? environment : nothingSet);
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return *result.config;
}

config::Config gatewayConfig(const QList<config::ProviderConfig> &providers)
{
    config::Config config;
    config.sourceName = QStringLiteral("integration test");
    config.server.listenHost = QStringLiteral("127.0.0.1");
    config.server.listenPort = 0;
    config.providers = providers;
    // Active probes would add their own calls to the fakes' counts; tests of probes turn them on.
    config.resilience.probes.enabled = false;
    return config;
}

config::TimeoutConfig shortTimeouts()
{
    using std::chrono::milliseconds;
    config::TimeoutConfig timeouts;
    timeouts.connect = milliseconds(500);
    timeouts.firstToken = milliseconds(300);
    timeouts.idle = milliseconds(300);
    timeouts.total = milliseconds(400);
    return timeouts;
}

std::unique_ptr<Engine> startEngine(const config::Config &config)
{
    auto engine = std::make_unique<Engine>(config);
    QString error;
    if (!engine->listen(&error)) {
        qWarning("the engine cannot listen: %s", qPrintable(error));
        return nullptr;
    }
    return engine;
}

QJsonObject errorOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object().value(QStringLiteral("error")).toObject();
}

int healthInFlight(Engine &engine)
{
    int inFlight = 0;
    for (const ProviderHealth &provider : engine.health().snapshot())
        inFlight += provider.inFlight;
    return inFlight;
}

ProviderHealth providerHealth(Engine &engine, const QString &providerId)
{
    for (const ProviderHealth &provider : engine.health().snapshot()) {
        if (provider.id == providerId)
            return provider;
    }
    return {};
}

quint16 closedLoopbackPort()
{
    // A port bound and released again could be taken by another test process before the test
    // connects, which then reached that process's server instead of being refused.
    static const quint16 port = [] {
        const int held = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (held < 0 || ::bind(held, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
            ::getsockname(held, reinterpret_cast<sockaddr *>(&address), &length) != 0)
            return quint16(0);
        return quint16(ntohs(address.sin_port)); // `held` stays open until the process exits
    }();
    return port;
}

config::EnvironmentLookup environmentOf(const QHash<QString, QByteArray> &variables)
{
    return [variables](const QString &name) -> std::optional<QByteArray> {
        const auto found = variables.constFind(name);
        return found == variables.cend() ? std::nullopt : std::optional(*found);
    };
}

} // namespace switchyard::testing
