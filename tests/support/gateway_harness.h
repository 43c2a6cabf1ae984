#pragma once

#include "config/config.h"
#include "config/config_loader.h"
#include "engine/engine.h"
#include "health/endpoint_state.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QStringList>
#include <memory>

namespace switchyard::testing {

class FakeUpstream;

// An OpenAI-kind provider entry whose models are served by `baseUrl`.
config::ProviderConfig providerAt(const QString &id, const QByteArray &baseUrl,
                                  const QStringList &models);
config::ProviderConfig providerFor(const QString &id, const FakeUpstream &fake,
                                   const QStringList &models);

// A config from YAML through the real loader; the test stops with the first error when it does
// not load (a broken fixture, not a behaviour under test). Without `environment`, no variable is
// set.
config::Config loadTestConfig(const QByteArray &yaml, const QString &sourceName,
                              const config::EnvironmentLookup &environment = {});

// An environment that holds `variables` and nothing else, for configs that name secrets by
// environment variable ({env: NAME}, api_key_env).
config::EnvironmentLookup environmentOf(const QHash<QString, QByteArray> &variables);

// A gateway on 127.0.0.1, port 0, in front of `providers`, with the default timeouts.
config::Config gatewayConfig(const QList<config::ProviderConfig> &providers);

// Timeouts short enough for a test to wait for them to fire. Assertions only ever use them as
// upper bounds on waiting, never as durations to measure.
config::TimeoutConfig shortTimeouts();

// The engine, listening on its free port; nullptr (after a warning saying why) when it cannot.
std::unique_ptr<Engine> startEngine(const config::Config &config);

// The "error" object of an OpenAI-shaped error body; empty when the body is not one.
QJsonObject errorOf(const QByteArray &body);

// Calls in flight summed over every provider, as the health registry counts them.
int healthInFlight(Engine &engine);
// One provider's health as the registry reports it; a default value when there is no such id.
ProviderHealth providerHealth(Engine &engine, const QString &providerId);

// A loopback port that refuses every connection for the life of the test process: a socket
// holds it bound without listening, so no other process (tests run in parallel) can take it.
quint16 closedLoopbackPort();

} // namespace switchyard::testing
