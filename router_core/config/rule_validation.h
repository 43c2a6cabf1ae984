#pragma once

#include "config/config.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace switchyard::config {

// A request field a condition can read.
struct FieldRef {
    enum class Kind { Model, Tenant, User, Task, Sensitivity, Priority, TokensInput, Header, Meta };

    Kind kind = Kind::Model;
    QString name; // Header: the header name, lower-cased; Meta: the key
};

// "tenant" -> Tenant, "header.X-Team" -> Header "x-team", "meta.app" -> Meta "app"; nullopt for
// anything else.
std::optional<FieldRef> parseField(const QString &field);
// The fields a form offers, in the order docs/routing.md lists them.
QStringList fieldNames(); // model ... tokens.input, header.<name>, meta.<key>

QString operatorName(ConditionOperator op); // "eq", "in", "exists"...
std::optional<ConditionOperator> operatorFromName(const QString &name);
QStringList operatorNames();

QString splitKeyName(SplitKey key); // "user", "tenant", "session"

// One thing wrong with a rule: what and where. The config loader reports each as
// "FILE:LINE:COL: message"; a form shows the message beside the field it names.
struct RuleProblem {
    config::TextPosition position;
    QString message;
};

// The models of a `fallbacks:` map (a tier's, a rule's or a model entry's) against the models
// `config`'s providers list: each must be listed by one, and a model entry (`ownModel`) never
// names itself. Every problem is reported at `position`, the map's.
QList<RuleProblem> validateErrorFallbacks(const ErrorFallbacks &fallbacks,
                                          const TextPosition &position, const Config &config,
                                          const QString &ownModel = {});

// What a rule means, checked against the providers and tiers of `config`: known fields, values
// that fit their operator, regexes that compile, targets that name something, split weights. The
// config loader reports exactly these messages, so a rule a form accepts loads from a file too.
QList<RuleProblem> validateRule(const RouteRule &rule, const Config &config);
// Every rule, plus a name used twice.
QList<RuleProblem> validateRoutes(const QList<RouteRule> &rules, const Config &config);

} // namespace switchyard::config
