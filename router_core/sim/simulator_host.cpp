#include "sim/simulator_host.h"

#include "sim/simulated_provider.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcSimulator, "switchyard.simulator")

namespace switchyard::sim {

SimulatorHost::SimulatorHost(QObject *parent) : QObject(parent) {}

QHash<QString, QUrl> SimulatorHost::start(const QList<config::ProviderConfig> &providers,
                                          QString *errorMessage)
{
    QHash<QString, QUrl> urls;
    for (const config::ProviderConfig &provider : providers) {
        if (provider.kind != config::ProviderKind::Simulated)
            continue;
        auto *server = new SimulatedProvider(provider, this);
        const quint16 port = server->listenOnLoopback();
        if (port == 0) {
            *errorMessage = QStringLiteral("cannot start simulated provider `%1`").arg(provider.id);
            return {};
        }
        m_providers.insert(provider.id, server);
        urls.insert(provider.id, QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port)));
    }
    return urls;
}

bool SimulatorHost::setKnobs(const QString &providerId, const SimulatorKnobs &knobs)
{
    SimulatedProvider *server = m_providers.value(providerId);
    if (!server)
        return false;
    server->setKnobs(knobs);
    const QString configured = QStringLiteral("as configured");
    qCInfo(lcSimulator).noquote()
        << "simulated provider" << providerId << "now answers" << simulatorModeName(knobs.mode)
        << "with latency"
        << (knobs.latencyMs < 0 ? configured : QStringLiteral("%1 ms").arg(knobs.latencyMs))
        << "and error rate"
        << (knobs.errorRate < 0 ? configured : QString::number(knobs.errorRate));
    return true;
}

void applySimulatorUrls(config::Config &config, const QHash<QString, QUrl> &urls)
{
    for (config::ProviderConfig &provider : config.providers) {
        if (provider.kind == config::ProviderKind::Simulated)
            provider.baseUrl = urls.value(provider.id);
    }
}

} // namespace switchyard::sim
