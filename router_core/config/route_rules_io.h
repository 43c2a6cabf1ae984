#pragma once

#include "config/config.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QLatin1StringView>
#include <QList>
#include <QString>
#include <variant>

namespace switchyard::config {

// Route rules outside the config file: the admin API reads and writes them as JSON in the same
// shape as the file's `routes:` (JSON is YAML, so one reader serves both).

// A document whose root map holds `routes: [...]` (and, when the caller reads them itself, the
// keys in `otherRootKeys`), checked by the config loader's own routing checker and rule
// validation against the providers and tiers of `live`: the rules, or every problem as
// `SOURCE:LINE:COL: message`.
std::variant<QList<RouteRule>, QList<ConfigError>>
readRouteRules(const QByteArray &text, const QString &sourceName, const Config &live,
               const QList<QLatin1StringView> &otherRootKeys = {});

// The rules in the file's shape: `{name, priority, when?, to, fallbacks?}` with `to` one of
// `{provider}`,
// `{pool}`, `{tier}` or `{split, key, strict?}`. readRouteRules of this gives the same rules back.
QJsonArray routeRulesJson(const QList<RouteRule> &rules);
QJsonObject routeConditionJson(const RouteCondition &condition);
// `{context_length_exceeded: [...], content_filtered: [...]}`, the errors without models left out.
QJsonObject errorFallbacksJson(const ErrorFallbacks &fallbacks);

} // namespace switchyard::config
