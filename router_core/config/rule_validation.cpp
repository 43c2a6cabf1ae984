#include "config/rule_validation.h"

#include "config/yaml_reader.h"

#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <cmath>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

struct OperatorName {
    ConditionOperator op;
    QLatin1StringView name;
};

constexpr OperatorName kOperators[] = {
    {ConditionOperator::Eq, "eq"_L1},       {ConditionOperator::Ne, "ne"_L1},
    {ConditionOperator::In, "in"_L1},       {ConditionOperator::Glob, "glob"_L1},
    {ConditionOperator::Regex, "regex"_L1}, {ConditionOperator::Lt, "lt"_L1},
    {ConditionOperator::Le, "le"_L1},       {ConditionOperator::Gt, "gt"_L1},
    {ConditionOperator::Ge, "ge"_L1},       {ConditionOperator::Exists, "exists"_L1},
};

struct PlainField {
    QLatin1StringView name;
    FieldRef::Kind kind;
};

constexpr PlainField kPlainFields[] = {
    {"model"_L1, FieldRef::Kind::Model},
    {"tenant"_L1, FieldRef::Kind::Tenant},
    {"user"_L1, FieldRef::Kind::User},
    {"task"_L1, FieldRef::Kind::Task},
    {"sensitivity"_L1, FieldRef::Kind::Sensitivity},
    {"priority"_L1, FieldRef::Kind::Priority},
    {"tokens.input"_L1, FieldRef::Kind::TokensInput},
};

const QString kTierAuto = u"auto"_s;

bool isHeaderName(const QString &name)
{
    static const QRegularExpression token(u"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"_s);
    return token.match(name).hasMatch();
}

bool isRuleName(const QString &name)
{
    // The name is echoed in the x-switchyard-route response header.
    static const QRegularExpression pattern(u"^[A-Za-z0-9._-]+$"_s);
    return pattern.match(name).hasMatch();
}

QString withSuggestion(const QString &message, const QString &typed, const QStringList &choices)
{
    QList<QByteArray> storage;
    QList<QLatin1StringView> views;
    for (const QString &choice : choices)
        storage.append(choice.toLatin1());
    for (const QByteArray &bytes : storage)
        views.append(QLatin1StringView(bytes));
    const QString suggestion = config::closestKey(typed, views);
    return suggestion.isEmpty() ? message : message + u" (did you mean `%1`?)"_s.arg(suggestion);
}

QStringList providerIds(const Config &config)
{
    QStringList ids;
    ids.reserve(config.providers.size());
    for (const config::ProviderConfig &provider : config.providers)
        ids.append(provider.id);
    return ids;
}

class RuleChecker {
public:
    explicit RuleChecker(const Config &config)
        : m_config(config), m_providerIds(providerIds(config))
    {}

    QList<RuleProblem> problems;

    void checkRule(const RouteRule &rule)
    {
        if (rule.name.isEmpty())
            problems.append({rule.position, u"route is missing required key `name`"_s});
        else if (!isRuleName(rule.name))
            problems.append({rule.namePosition,
                             u"route name may contain only letters, digits, `.`, `_` and `-`, "
                             u"got \"%1\""_s.arg(rule.name)});
        if (rule.when)
            checkCondition(*rule.when);
        problems.append(validateErrorFallbacks(rule.fallbacks, rule.fallbacksPosition, m_config));
        if (rule.shadow)
            checkShadow(*rule.shadow);
        if (rule.split.isEmpty()) {
            checkTarget(rule.to);
            return;
        }
        int total = 0;
        QSet<QString> labels;
        for (const config::SplitBranch &branch : rule.split) {
            checkTarget(branch.target);
            if (branch.weight < 0)
                problems.append({branch.weightPosition,
                                 u"split weight must be at least 0, got %1"_s.arg(branch.weight)});
            else
                total += branch.weight;
            const QString label = branch.target.label();
            if (labels.contains(label))
                problems.append({branch.position, u"split lists `%1` twice"_s.arg(label)});
            labels.insert(label);
        }
        if (total <= 0)
            problems.append(
                {rule.split.first().position, u"split weights must add up to more than 0"_s});
    }

private:
    void checkCondition(const RouteCondition &condition)
    {
        switch (condition.kind) {
        case RouteCondition::Kind::All:
        case RouteCondition::Kind::Any:
            if (condition.children.isEmpty())
                problems.append(
                    {condition.position,
                     u"`%1` needs a list of at least one condition"_s.arg(
                         condition.kind == RouteCondition::Kind::All ? u"all"_s : u"any"_s)});
            for (const RouteCondition &child : condition.children)
                checkCondition(child);
            return;
        case RouteCondition::Kind::Not:
            if (condition.children.size() != 1)
                problems.append({condition.position, u"`not` takes exactly one condition"_s});
            for (const RouteCondition &child : condition.children)
                checkCondition(child);
            return;
        case RouteCondition::Kind::Compare:
            break;
        }
        checkField(condition);
        checkValues(condition);
    }

    void checkField(const RouteCondition &condition)
    {
        const QString &field = condition.field;
        if (field.isEmpty()) {
            problems.append({condition.position, u"condition is missing required key `field`"_s});
            return;
        }
        if (field.startsWith(u"header."_s)) {
            if (!isHeaderName(field.sliced(7)))
                problems.append({condition.fieldPosition,
                                 u"`%1` must name a header: `header.` followed by a header "
                                 u"name such as `header.x-team`"_s.arg(field)});
            return;
        }
        if (field.startsWith(u"meta."_s)) {
            if (field.size() == 5)
                problems.append({condition.fieldPosition,
                                 u"`meta.` must be followed by a key of the body's "
                                 u"`switchyard` object, such as `meta.app`"_s});
            return;
        }
        if (!parseField(field)) {
            QStringList plain;
            for (const PlainField &known : kPlainFields)
                plain.append(QString(known.name));
            problems.append({condition.fieldPosition,
                             withSuggestion(u"unknown field `%1`"_s.arg(field), field, plain) +
                                 u"; fields are model, tenant, user, task, sensitivity, priority, "
                                 u"tokens.input, header.<name> and meta.<key>"_s});
        }
    }

    void checkValues(const RouteCondition &condition)
    {
        const QString name = operatorName(condition.op);
        const QStringList &values = condition.values;
        const TextPosition &where = condition.valuePosition;
        switch (condition.op) {
        case ConditionOperator::In:
            if (values.isEmpty())
                problems.append({where, u"`in` needs a list of at least one value"_s});
            return;
        case ConditionOperator::Exists:
            if (values.size() != 1 || (values[0] != u"true"_s && values[0] != u"false"_s))
                problems.append(
                    {where, u"`exists` must be true or false, got %1"_s.arg(describe(values))});
            return;
        default:
            break;
        }
        if (values.size() != 1) {
            problems.append({where, u"`%1` takes one value, got %2"_s.arg(name, describe(values))});
            return;
        }
        const QString &value = values[0];
        switch (condition.op) {
        case ConditionOperator::Lt:
        case ConditionOperator::Le:
        case ConditionOperator::Gt:
        case ConditionOperator::Ge: {
            bool parsed = false;
            const double number = value.toDouble(&parsed);
            if (!parsed || !std::isfinite(number))
                problems.append({where, u"`%1` compares numbers, got \"%2\""_s.arg(name, value)});
            return;
        }
        case ConditionOperator::Regex: {
            const QRegularExpression regex(value);
            if (!regex.isValid())
                problems.append(
                    {where, u"`regex` does not compile: %1 at offset %2"_s.arg(
                                regex.errorString(), QString::number(regex.patternErrorOffset()))});
            return;
        }
        default:
            return;
        }
    }

    static QString describe(const QStringList &values)
    {
        if (values.isEmpty())
            return u"nothing"_s;
        if (values.size() > 1)
            return u"a list"_s;
        return u'"' + values[0] + u'"';
    }

    using TextPosition = config::TextPosition;

    void checkProviderId(const QString &id, const TextPosition &where)
    {
        if (m_providerIds.contains(id))
            return;
        problems.append(
            {where, withSuggestion(u"target names no provider `%1`"_s.arg(id), id, m_providerIds)});
    }

    // Only a model API may be a shadow: its answer is thrown away, which is harmless only for a
    // call that does nothing but answer. An agent (a mapped provider, or a registered one) may
    // book, send or write when called; the simulator would compare against nothing real.
    void checkShadow(const config::ShadowConfig &shadow)
    {
        const config::ProviderConfig *provider = nullptr;
        for (const config::ProviderConfig &candidate : m_config.providers) {
            if (candidate.id == shadow.target)
                provider = &candidate;
        }
        if (!provider) {
            problems.append(
                {shadow.targetPosition,
                 withSuggestion(u"`shadow.target` names no provider `%1`"_s.arg(shadow.target),
                                shadow.target, m_providerIds) +
                     u"; a shadow is an `openai` or `anthropic` provider, never an agent"_s});
            return;
        }
        if (provider->kind != config::ProviderKind::OpenAi &&
            provider->kind != config::ProviderKind::Anthropic)
            problems.append(
                {shadow.targetPosition,
                 u"`shadow.target` names `%1`, a `%2` provider; a shadow must be an `openai` or "
                 u"`anthropic` provider, since calling an agent may act"_s.arg(
                     shadow.target, config::kindName(provider->kind))});
    }

    void checkTarget(const RouteTarget &target)
    {
        switch (target.kind) {
        case RouteTarget::Kind::Provider:
            if (target.names.size() != 1)
                problems.append({target.position, u"`provider` names exactly one provider"_s});
            for (const QString &id : target.names)
                checkProviderId(id, target.position);
            return;
        case RouteTarget::Kind::Pool: {
            if (target.names.isEmpty())
                problems.append({target.position, u"`pool` must list at least one provider"_s});
            QSet<QString> seen;
            for (const QString &id : target.names) {
                checkProviderId(id, target.position);
                if (seen.contains(id))
                    problems.append(
                        {target.position, u"`pool` lists provider `%1` twice"_s.arg(id)});
                seen.insert(id);
            }
            return;
        }
        case RouteTarget::Kind::Tier:
            break;
        }
        const QString tier = target.names.value(0);
        const QStringList known{u"light"_s, u"pro"_s, kTierAuto};
        if (target.names.size() != 1 || !known.contains(tier)) {
            problems.append({target.position,
                             withSuggestion(u"target names no tier `%1`"_s.arg(tier), tier, known) +
                                 u"; tiers are `light`, `pro` and `auto` (the cascade)"_s});
            return;
        }
        const QStringList needed =
            tier == kTierAuto ? QStringList{u"light"_s, u"pro"_s} : QStringList{tier};
        for (const QString &name : needed) {
            const config::TierConfig *configured = m_config.routing.tier(name);
            if (!configured || configured->pool.isEmpty())
                problems.append(
                    {target.position,
                     u"target `tier: %1` needs a pool for tier `%2`: add `tiers: {%2: {pool: "
                     u"[...]}}`"_s.arg(tier, name)});
        }
    }

    const Config &m_config;
    QStringList m_providerIds;
};

} // namespace

std::optional<FieldRef> parseField(const QString &field)
{
    for (const PlainField &known : kPlainFields) {
        if (field == known.name)
            return FieldRef{known.kind, {}};
    }
    if (field.startsWith(u"header."_s) && isHeaderName(field.sliced(7)))
        return FieldRef{FieldRef::Kind::Header, field.sliced(7).toLower()};
    if (field.startsWith(u"meta."_s) && field.size() > 5)
        return FieldRef{FieldRef::Kind::Meta, field.sliced(5)};
    return std::nullopt;
}

QStringList fieldNames()
{
    QStringList names;
    for (const PlainField &known : kPlainFields)
        names.append(QString(known.name));
    names << u"header.<name>"_s << u"meta.<key>"_s;
    return names;
}

QString operatorName(ConditionOperator op)
{
    for (const OperatorName &known : kOperators) {
        if (known.op == op)
            return QString(known.name);
    }
    return {};
}

std::optional<ConditionOperator> operatorFromName(const QString &name)
{
    for (const OperatorName &known : kOperators) {
        if (name == known.name)
            return known.op;
    }
    return std::nullopt;
}

QStringList operatorNames()
{
    QStringList names;
    for (const OperatorName &known : kOperators)
        names.append(QString(known.name));
    return names;
}

QString splitKeyName(SplitKey key)
{
    switch (key) {
    case SplitKey::User:
        return u"user"_s;
    case SplitKey::Tenant:
        return u"tenant"_s;
    case SplitKey::Session:
        return u"session"_s;
    }
    return {};
}

QList<RuleProblem> validateErrorFallbacks(const ErrorFallbacks &fallbacks,
                                          const TextPosition &position, const Config &config,
                                          const QString &ownModel)
{
    QList<RuleProblem> problems;
    if (fallbacks.isEmpty())
        return problems;
    QStringList known;
    for (const ProviderConfig &provider : config.providers) {
        for (const ModelRoute &model : provider.models) {
            if (!known.contains(model.publicName))
                known.append(model.publicName);
        }
    }
    for (const FallbackError error :
         {FallbackError::ContextLengthExceeded, FallbackError::ContentFiltered}) {
        const QString kind = fallbackErrorName(error);
        for (const QString &model : fallbacks.models(error)) {
            if (model.isEmpty()) {
                problems.append(
                    {position, u"`fallbacks.%1` lists an empty model name"_s.arg(kind)});
            } else if (!ownModel.isEmpty() && model == ownModel) {
                problems.append({position, u"model `%1` falls back to itself on `%2`: list "
                                           u"another model"_s.arg(model, kind)});
            } else if (!known.contains(model)) {
                problems.append(
                    {position,
                     withSuggestion(
                         u"`fallbacks.%1` names model `%2`, which no provider lists"_s.arg(kind,
                                                                                           model),
                         model, known)});
            }
        }
    }
    return problems;
}

QList<RuleProblem> validateRule(const RouteRule &rule, const Config &config)
{
    RuleChecker checker(config);
    checker.checkRule(rule);
    return checker.problems;
}

QList<RuleProblem> validateRoutes(const QList<RouteRule> &rules, const Config &config)
{
    RuleChecker checker(config);
    QHash<QString, const RouteRule *> firstByName;
    for (const RouteRule &rule : rules) {
        checker.checkRule(rule);
        if (rule.name.isEmpty())
            continue;
        if (const auto first = firstByName.constFind(rule.name); first != firstByName.cend()) {
            const int line = (*first)->namePosition.line;
            checker.problems.append(
                {rule.namePosition, line > 0
                                        ? u"duplicate route name `%1` (first at line %2)"_s.arg(
                                              rule.name, QString::number(line))
                                        : u"duplicate route name `%1`"_s.arg(rule.name)});
            continue;
        }
        firstByName.insert(rule.name, &rule);
    }
    return checker.problems;
}

} // namespace switchyard::config
