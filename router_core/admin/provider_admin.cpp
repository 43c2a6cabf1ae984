#include "admin/provider_admin.h"

#include "control/operator_commands.h"
#include "health/health_registry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QStringList>
#include <cmath>
#include <optional>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

// Long enough for any drill ("answer after a minute"), short enough to be a typo's bound.
constexpr int kMaxSimulatedLatencyMs = 600'000;

const QStringList kKnobFields{u"mode"_s, u"latency_ms"_s, u"error_rate"_s};

QJsonValue measured(double value)
{
    return value < 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(value);
}

protocol::ApiError providerNotFound(const QString &id)
{
    return {404,
            u"No provider `%1`. GET /admin/v1/providers lists them."_s.arg(id),
            u"invalid_request_error"_s,
            {},
            u"provider_not_found"_s,
            {}};
}

protocol::ApiError notSimulated(const QString &id)
{
    return {
        404,
        u"Provider `%1` is not simulated; only simulated providers have simulator knobs."_s.arg(id),
        u"invalid_request_error"_s,
        {},
        u"not_simulated"_s,
        {}};
}

// How a JSON value appears in a message: as it was written.
QString shown(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::String:
        return u'"' + value.toString() + u'"';
    case QJsonValue::Double:
        return QString::number(value.toDouble(), 'g', 12);
    case QJsonValue::Bool:
        return value.toBool() ? u"true"_s : u"false"_s;
    case QJsonValue::Array:
        return u"a list"_s;
    case QJsonValue::Object:
        return u"an object"_s;
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return u"null"_s;
}

QString modeList()
{
    QStringList names;
    for (SimulatorKnobs::Mode mode : {SimulatorKnobs::Mode::Ok, SimulatorKnobs::Mode::ServerError,
                                      SimulatorKnobs::Mode::RateLimited, SimulatorKnobs::Mode::Hang,
                                      SimulatorKnobs::Mode::Reset, SimulatorKnobs::Mode::CutStream})
        names.append(simulatorModeName(mode));
    return names.join(u", "_s);
}

} // namespace

QJsonObject providerJson(const ProviderHealth &provider)
{
    QJsonObject breaker{
        {u"state"_s, health::breakerStateName(provider.breaker)},
        {u"reason"_s, provider.breakerReason.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                       : QJsonValue(provider.breakerReason)},
        {u"ms_until_half_open"_s, provider.msUntilHalfOpen < 0
                                      ? QJsonValue(QJsonValue::Null)
                                      : QJsonValue(double(provider.msUntilHalfOpen))},
        {u"consecutive_failures"_s, provider.consecutiveFailures}};
    QJsonObject json{
        {u"id"_s, provider.id},
        {u"kind"_s, provider.kind},
        {u"models"_s, QJsonArray::fromStringList(provider.models)},
        {u"state"_s, health::providerStateName(provider.state)},
        {u"breaker"_s, breaker},
        {u"operator_state"_s, health::operatorStateName(provider.operatorState)},
        {u"ms_until_cool_down_ends"_s, provider.msUntilCoolDownEnds < 0
                                           ? QJsonValue(QJsonValue::Null)
                                           : QJsonValue(double(provider.msUntilCoolDownEnds))},
        {u"counters"_s, QJsonObject{{u"requests"_s, double(provider.requests)},
                                    {u"errors"_s, double(provider.errors)},
                                    {u"unusable"_s, double(provider.unusableAnswers)},
                                    {u"rate_limited"_s, double(provider.rateLimited)}}},
        {u"recent"_s, QJsonObject{{u"calls"_s, provider.recentCalls},
                                  {u"error_rate_percent"_s, provider.errorRatePercent}}},
        {u"latency_ms"_s, QJsonObject{{u"p50"_s, measured(provider.p50LatencyMs)},
                                      {u"p95"_s, measured(provider.p95LatencyMs)},
                                      {u"ttft_p50"_s, measured(provider.p50TimeToFirstTokenMs)}}},
        {u"in_flight"_s, provider.inFlight},
        {u"traffic_share"_s, provider.trafficShare},
        {u"last_failure"_s, provider.lastFailure.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                           : QJsonValue(provider.lastFailure)},
        {u"simulated"_s, provider.simulated}};
    if (provider.simulated)
        json.insert(u"simulator_mode"_s, simulatorModeName(provider.simulatorMode));
    return json;
}

QJsonObject simulatorKnobsJson(const QString &providerId, const SimulatorKnobs &knobs)
{
    return {{u"id"_s, providerId},
            {u"mode"_s, simulatorModeName(knobs.mode)},
            {u"latency_ms"_s,
             knobs.latencyMs < 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(knobs.latencyMs)},
            {u"error_rate"_s,
             knobs.errorRate < 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(knobs.errorRate)}};
}

std::variant<SimulatorKnobs, protocol::ApiError> parseSimulatorKnobs(const QByteArray &body,
                                                                     const SimulatorKnobs &current)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        return http::invalidAdminRequest(
            u"The body must be a JSON object with `mode`, `latency_ms` or "
            u"`error_rate`, such as {\"mode\": \"500\"}."_s);
    }
    const QJsonObject object = document.object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!kKnobFields.contains(it.key())) {
            return http::invalidAdminRequest(
                u"Unknown field `%1`; expected `mode`, `latency_ms` or `error_rate`."_s.arg(
                    it.key()),
                it.key());
        }
    }

    SimulatorKnobs knobs = current;
    if (object.contains(u"mode"_s)) {
        const QJsonValue value = object.value(u"mode"_s);
        const std::optional<SimulatorKnobs::Mode> mode =
            value.isString() ? simulatorModeFromName(value.toString()) : std::nullopt;
        if (!mode) {
            return http::invalidAdminRequest(
                u"`mode` must be one of %1; got %2."_s.arg(modeList(), shown(value)), u"mode"_s);
        }
        knobs.mode = *mode;
    }
    if (object.contains(u"latency_ms"_s)) {
        const QJsonValue value = object.value(u"latency_ms"_s);
        const double number = value.toDouble(-1.0);
        if (value.isNull()) {
            knobs.latencyMs = -1;
        } else if (value.isDouble() && number >= 0 && number <= kMaxSimulatedLatencyMs &&
                   std::floor(number) == number) {
            knobs.latencyMs = int(number);
        } else {
            return http::invalidAdminRequest(
                u"`latency_ms` must be a whole number of milliseconds from 0 to %1, "
                u"or null for the configured latency; got %2."_s.arg(
                    QString::number(kMaxSimulatedLatencyMs), shown(value)),
                u"latency_ms"_s);
        }
    }
    if (object.contains(u"error_rate"_s)) {
        const QJsonValue value = object.value(u"error_rate"_s);
        const double number = value.toDouble(-1.0);
        if (value.isNull()) {
            knobs.errorRate = -1.0;
        } else if (value.isDouble() && number >= 0.0 && number <= 1.0) {
            knobs.errorRate = number;
        } else {
            return http::invalidAdminRequest(
                u"`error_rate` must be a number from 0 to 1, or null for the "
                u"configured rate; got %1."_s.arg(shown(value)),
                u"error_rate"_s);
        }
    }
    return knobs;
}

void registerProviderAdmin(http::AdminEndpoints &api, control::OperatorCommands &commands)
{
    api.add(Method::Get, u"providers"_s,
            [&commands](const http::AdminRequest &, const QStringList &) {
                QJsonArray data;
                for (const ProviderHealth &provider : commands.providers())
                    data.append(providerJson(provider));
                return http::AdminReply::json(
                    QJsonDocument(QJsonObject{{u"object"_s, u"list"_s}, {u"data"_s, data}}));
            });

    api.add(Method::Get, u"providers/{}"_s,
            [&commands](const http::AdminRequest &, const QStringList &captures) {
                const std::optional<ProviderHealth> provider = commands.provider(captures[0]);
                if (!provider)
                    return http::AdminReply::error(providerNotFound(captures[0]));
                return http::AdminReply::json(QJsonDocument(providerJson(*provider)));
            });

    api.add(Method::Post, u"providers/{}/{}"_s,
            [&commands](const http::AdminRequest &, const QStringList &captures) {
                const QString &id = captures[0];
                if (!commands.hasProvider(id))
                    return http::AdminReply::error(providerNotFound(id));
                const std::optional<ProviderAction> action =
                    health::providerActionFromName(captures[1]);
                if (!action) {
                    return http::AdminReply::error(http::invalidAdminRequest(
                        u"Unknown action `%1`; use enable, disable, drain, trip or reset."_s.arg(
                            captures[1]),
                        u"action"_s));
                }
                commands.applyProviderAction(id, *action);
                return http::AdminReply::json(QJsonDocument(providerJson(*commands.provider(id))));
            });

    const auto simulatedProvider =
        [&commands](const QString &id) -> std::optional<protocol::ApiError> {
        if (!commands.hasProvider(id))
            return providerNotFound(id);
        if (!commands.isSimulated(id))
            return notSimulated(id);
        if (!commands.simulatorRunning()) {
            return protocol::ApiError::serviceUnavailable(
                u"The simulator is not running, so simulated providers cannot be changed."_s);
        }
        return std::nullopt;
    };

    api.add(
        Method::Get, u"simulator/{}"_s,
        [&commands, simulatedProvider](const http::AdminRequest &, const QStringList &captures) {
            if (const auto error = simulatedProvider(captures[0]))
                return http::AdminReply::error(*error);
            return http::AdminReply::json(QJsonDocument(
                simulatorKnobsJson(captures[0], commands.simulatorKnobs(captures[0]))));
        });

    api.add(Method::Post, u"simulator/{}"_s,
            [&commands, simulatedProvider](const http::AdminRequest &request,
                                           const QStringList &captures) {
                const QString &id = captures[0];
                if (const auto error = simulatedProvider(id))
                    return http::AdminReply::error(*error);
                auto parsed = parseSimulatorKnobs(request.body, commands.simulatorKnobs(id));
                if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
                    return http::AdminReply::error(*error);
                const SimulatorKnobs knobs = std::get<SimulatorKnobs>(parsed);
                commands.setSimulatorKnobs(id, knobs);
                return http::AdminReply::json(QJsonDocument(simulatorKnobsJson(id, knobs)));
            });
}

} // namespace switchyard::admin
