#include "config/route_rules_io.h"

#include "config/rule_validation.h"

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

QJsonValue targetNames(const RouteTarget &target)
{
    if (target.kind == RouteTarget::Kind::Pool)
        return QJsonArray::fromStringList(target.names);
    return target.names.value(0);
}

QString targetKey(const RouteTarget &target)
{
    switch (target.kind) {
    case RouteTarget::Kind::Provider:
        return u"provider"_s;
    case RouteTarget::Kind::Pool:
        return u"pool"_s;
    case RouteTarget::Kind::Tier:
        return u"tier"_s;
    }
    return {};
}

QJsonObject targetJson(const RouteTarget &target)
{
    return QJsonObject{{targetKey(target), targetNames(target)}};
}

} // namespace

QJsonObject errorFallbacksJson(const ErrorFallbacks &fallbacks)
{
    QJsonObject object;
    for (const FallbackError error :
         {FallbackError::ContextLengthExceeded, FallbackError::ContentFiltered}) {
        if (!fallbacks.models(error).isEmpty())
            object.insert(fallbackErrorName(error),
                          QJsonArray::fromStringList(fallbacks.models(error)));
    }
    return object;
}

QJsonObject routeConditionJson(const RouteCondition &condition)
{
    switch (condition.kind) {
    case RouteCondition::Kind::All:
    case RouteCondition::Kind::Any: {
        QJsonArray parts;
        for (const RouteCondition &child : condition.children)
            parts.append(routeConditionJson(child));
        return QJsonObject{
            {condition.kind == RouteCondition::Kind::All ? u"all"_s : u"any"_s, parts}};
    }
    case RouteCondition::Kind::Not:
        return QJsonObject{
            {u"not"_s, condition.children.isEmpty()
                           ? QJsonValue(QJsonObject())
                           : QJsonValue(routeConditionJson(condition.children.first()))}};
    case RouteCondition::Kind::Compare:
        break;
    }
    QJsonValue value;
    if (condition.op == ConditionOperator::In)
        value = QJsonArray::fromStringList(condition.values);
    else if (condition.op == ConditionOperator::Exists)
        value = condition.values.value(0) != u"false"_s;
    else
        value = condition.values.value(0);
    return QJsonObject{{u"field"_s, condition.field}, {operatorName(condition.op), value}};
}

QJsonArray routeRulesJson(const QList<RouteRule> &rules)
{
    QJsonArray array;
    for (const RouteRule &rule : rules) {
        QJsonObject object{{u"name"_s, rule.name}, {u"priority"_s, rule.priority}};
        if (rule.when)
            object.insert(u"when"_s, routeConditionJson(*rule.when));
        if (rule.split.isEmpty()) {
            object.insert(u"to"_s, targetJson(rule.to));
        } else {
            QJsonArray branches;
            for (const SplitBranch &branch : rule.split)
                branches.append(QJsonObject{{u"target"_s, targetJson(branch.target)},
                                            {u"weight"_s, branch.weight}});
            QJsonObject to{{u"split"_s, branches}, {u"key"_s, splitKeyName(rule.splitKey)}};
            if (rule.strictSplit)
                to.insert(u"strict"_s, true);
            object.insert(u"to"_s, to);
        }
        if (rule.continueStreams)
            object.insert(u"continue_streams"_s, true);
        if (!rule.fallbacks.isEmpty())
            object.insert(u"fallbacks"_s, errorFallbacksJson(rule.fallbacks));
        if (rule.shadow)
            object.insert(u"shadow"_s, QJsonObject{{u"target"_s, rule.shadow->target},
                                                   {u"share"_s, rule.shadow->share}});
        if (rule.cache) {
            // The ttl in whole milliseconds, which every duration key reads.
            QJsonObject cache{{u"ttl"_s, u"%1ms"_s.arg(rule.cache->ttl.count())},
                              {u"max_bytes"_s, QString::number(rule.cache->maxAnswerBytes)}};
            if (rule.cache->sampled)
                cache.insert(u"sampled"_s, true);
            object.insert(u"cache"_s, cache);
        }
        array.append(object);
    }
    return array;
}

} // namespace switchyard::config
