#include "config/config_sections.h"
#include "config/route_rules_io.h"
#include "config/rule_validation.h"

#include <QHash>
#include <QSet>
#include <limits>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> kRoutingRootKeys{"tiers"_L1,   "routes"_L1,  "fallback_chain"_L1,
                                                "gearbox"_L1, "scoring"_L1, "agents"_L1};
const QList<QLatin1StringView> kTierNames{"light"_L1, "pro"_L1};
const QList<QLatin1StringView> kTierKeys{
    "pool"_L1,     "timeout"_L1, "retries"_L1, "max_input_tokens"_L1, "continue_streams"_L1,
    "fallbacks"_L1};
const QList<QLatin1StringView> kRouteKeys{
    "name"_L1,      "priority"_L1, "when"_L1, "to"_L1, "continue_streams"_L1,
    "fallbacks"_L1, "shadow"_L1,   "cache"_L1};
const QList<QLatin1StringView> kShadowKeys{"target"_L1, "share"_L1};
const QList<QLatin1StringView> kFallbackErrorKeys{"context_length_exceeded"_L1,
                                                  "content_filtered"_L1};
const QList<QLatin1StringView> kCombinators{"all"_L1, "any"_L1, "not"_L1};
const QList<QLatin1StringView> kTargetKinds{"provider"_L1, "pool"_L1, "tier"_L1};
const QList<QLatin1StringView> kToKeys{"provider"_L1, "pool"_L1, "tier"_L1,
                                       "split"_L1,    "key"_L1,  "strict"_L1};
const QList<QLatin1StringView> kBranchKeys{"target"_L1, "weight"_L1};
const QList<QLatin1StringView> kGearboxKeys{"pro_tasks"_L1, "light_tasks"_L1, "complexity"_L1};
const QList<QLatin1StringView> kComplexityKeys{"threshold"_L1, "weights"_L1, "saturation"_L1};
const QList<QLatin1StringView> kFeatureKeys{"length"_L1, "turns"_L1, "tools"_L1, "code_blocks"_L1};
const QList<QLatin1StringView> kSaturationKeys{"length_tokens"_L1, "turns"_L1, "tools"_L1,
                                               "code_blocks"_L1};
const QList<QLatin1StringView> kScoringKeys{"load"_L1, "latency"_L1, "success"_L1};
const QList<QLatin1StringView> kAgentsKeys{"ttl"_L1, "scoring"_L1, "default_capacity"_L1};

constexpr int kMostRetries = 10;
constexpr qint64 kLargestPriority = 1'000'000;
constexpr qint64 kLargestSplitWeight = 1'000'000;

QString joined(const QList<QLatin1StringView> &names)
{
    QStringList quoted;
    for (QLatin1StringView name : names)
        quoted.append(u'`' + QString(name) + u'`');
    return quoted.join(u", "_s);
}

// Reads the routing section of a config file into RoutingConfig. Shape errors (wrong types,
// unknown keys) are found here; what the rules mean is checked by config::validateRoutes, the
// same function a form in the console calls, so both say the same thing about a rule.
class RoutingChecker {
public:
    RoutingChecker(YamlReader &reader, Config &config) : m_reader(reader), m_config(config)
    {
        for (const ProviderConfig &provider : config.providers)
            m_knownProviders.insert(provider.id);
    }

    void noteProviderIds(const MapEntry *providers);
    void checkTiers(const MapEntry &entry);
    void checkFallbackChain(const MapEntry &entry);
    void checkGearbox(const MapEntry &entry);
    void checkScoring(const MapEntry &entry, ScoringWeights &weights);
    void checkAgents(const MapEntry &entry);
    void checkRoutes(const MapEntry &entry);
    void validateRoutes();
    // The models the tiers' and the model entries' `fallbacks` name; the rules' are checked with
    // the rest of each rule (validateRoutes).
    void validateFallbackModels();

private:
    TextPosition position(const YAML::Mark &mark) const
    {
        const SourceLocation where = m_reader.locate(mark);
        return {where.line, where.column};
    }
    TextPosition valuePosition(const MapEntry &entry) const
    {
        return position(YamlReader::valueMark(entry));
    }
    void checkProviderList(const MapEntry &entry, QStringList &ids, const QString &owner);
    std::optional<RouteRule> checkRoute(const YAML::Node &node);
    std::optional<RouteCondition> checkCondition(const YAML::Node &node, const YAML::Mark &near);
    std::optional<RouteCondition> checkCombinator(const MapEntry &entry);
    bool checkTo(const MapEntry &entry, RouteRule &rule);
    std::optional<ShadowConfig> checkShadow(const MapEntry &entry);
    std::optional<RouteTarget> checkTargetMap(const YAML::Node &node, const YAML::Mark &near,
                                              const QString &owner);
    std::optional<RouteTarget> checkTargetEntry(const MapEntry &entry);
    std::optional<SplitBranch> checkBranch(const YAML::Node &node, const YAML::Mark &near);

    YamlReader &m_reader;
    Config &m_config;
    QSet<QString> m_knownProviders;
    // Providers whose entries had errors are missing from the config but still named in the
    // file: rules naming them should not add a second, misleading error.
    QSet<QString> m_providersWithErrors;
};

void RoutingChecker::noteProviderIds(const MapEntry *providers)
{
    if (!providers || !providers->value.IsSequence())
        return;
    for (const YAML::Node &node : providers->value) {
        if (!node.IsMap())
            continue;
        const YAML::Node id = node["id"];
        if (id && id.IsScalar() && !m_knownProviders.contains(fromYaml(id.Scalar())))
            m_providersWithErrors.insert(fromYaml(id.Scalar()));
    }
}

void RoutingChecker::checkProviderList(const MapEntry &entry, QStringList &ids,
                                       const QString &owner)
{
    const std::optional<QStringList> names = m_reader.readStringList(entry);
    if (!names)
        return;
    QSet<QString> seen;
    for (const QString &name : *names) {
        if (!m_knownProviders.contains(name) && !m_providersWithErrors.contains(name)) {
            m_reader.reportValue(entry, u"%1 names no provider `%2`"_s.arg(owner, name));
            continue;
        }
        if (seen.contains(name)) {
            m_reader.reportValue(entry, u"%1 lists provider `%2` twice"_s.arg(owner, name));
            continue;
        }
        seen.insert(name);
        ids.append(name);
    }
}

void RoutingChecker::checkTiers(const MapEntry &entry)
{
    const std::optional<KeyedMap> tiers = m_reader.readSection(entry, kTierNames);
    if (!tiers)
        return;
    for (const MapEntry &tierEntry : tiers->entries) {
        TierConfig *tier = nullptr;
        for (TierConfig &candidate : m_config.routing.tiers) {
            if (candidate.name == tierEntry.name)
                tier = &candidate;
        }
        if (!tier)
            continue;
        const std::optional<KeyedMap> keys = m_reader.readSection(tierEntry, kTierKeys);
        if (!keys)
            continue;
        if (const MapEntry *pool = keys->find("pool"_L1))
            checkProviderList(*pool, tier->pool, u"tier `%1` pool"_s.arg(tier->name));
        if (const MapEntry *timeout = keys->find("timeout"_L1)) {
            if (const auto value = m_reader.readDuration(*timeout, ZeroDuration::Rejected))
                tier->timeout = *value;
        }
        if (const MapEntry *retries = keys->find("retries"_L1)) {
            if (const auto value = m_reader.readInteger(*retries, 0, kMostRetries))
                tier->retries = int(*value);
        }
        if (const MapEntry *maxTokens = keys->find("max_input_tokens"_L1)) {
            // Zero is allowed and means "no limit", as for pro by default.
            if (const auto value =
                    m_reader.readInteger(*maxTokens, 0, std::numeric_limits<int>::max()))
                tier->maxInputTokens = int(*value);
        }
        if (const MapEntry *continues = keys->find("continue_streams"_L1)) {
            if (const auto value = m_reader.readBool(*continues))
                tier->continueStreams = *value;
        }
        if (const MapEntry *fallbacks = keys->find("fallbacks"_L1)) {
            tier->fallbacksPosition = valuePosition(*fallbacks);
            if (auto read = readErrorFallbacks(m_reader, *fallbacks))
                tier->fallbacks = std::move(*read);
        }
    }
}

void RoutingChecker::checkFallbackChain(const MapEntry &entry)
{
    checkProviderList(entry, m_config.routing.fallbackChain, u"`fallback_chain`"_s);
}

void RoutingChecker::checkGearbox(const MapEntry &entry)
{
    const std::optional<KeyedMap> gearbox = m_reader.readSection(entry, kGearboxKeys);
    if (!gearbox)
        return;
    GearboxConfig &config = m_config.routing.gearbox;
    if (const MapEntry *pro = gearbox->find("pro_tasks"_L1)) {
        if (const auto tasks = m_reader.readStringList(*pro))
            config.proTasks = *tasks;
    }
    if (const MapEntry *light = gearbox->find("light_tasks"_L1)) {
        if (const auto tasks = m_reader.readStringList(*light)) {
            config.lightTasks = *tasks;
            for (const QString &task : *tasks) {
                if (config.proTasks.contains(task))
                    m_reader.reportValue(
                        *light, u"task `%1` is in both `pro_tasks` and `light_tasks`"_s.arg(task));
            }
        }
    }
    const MapEntry *complexityEntry = gearbox->find("complexity"_L1);
    if (!complexityEntry)
        return;
    const std::optional<KeyedMap> complexity =
        m_reader.readSection(*complexityEntry, kComplexityKeys);
    if (!complexity)
        return;
    ComplexityConfig &score = config.complexity;
    if (const MapEntry *threshold = complexity->find("threshold"_L1)) {
        if (const auto value = m_reader.readInteger(*threshold, 0, 100))
            score.threshold = int(*value);
    }
    if (const MapEntry *weightsEntry = complexity->find("weights"_L1)) {
        if (const auto weights = m_reader.readSection(*weightsEntry, kFeatureKeys)) {
            const std::pair<QLatin1StringView, double *> fields[] = {
                {"length"_L1, &score.lengthWeight},
                {"turns"_L1, &score.turnsWeight},
                {"tools"_L1, &score.toolsWeight},
                {"code_blocks"_L1, &score.codeBlocksWeight},
            };
            for (const auto &[name, target] : fields) {
                if (const MapEntry *field = weights->find(name)) {
                    if (const auto value =
                            m_reader.readNumberIn(*field, 0.0, std::numeric_limits<double>::max()))
                        *target = *value;
                }
            }
            if (score.lengthWeight + score.turnsWeight + score.toolsWeight +
                    score.codeBlocksWeight <=
                0.0)
                m_reader.reportValue(*weightsEntry,
                                     u"complexity `weights` must add up to more than 0"_s);
        }
    }
    if (const MapEntry *saturationEntry = complexity->find("saturation"_L1)) {
        if (const auto saturation = m_reader.readSection(*saturationEntry, kSaturationKeys)) {
            const std::pair<QLatin1StringView, int *> fields[] = {
                {"length_tokens"_L1, &score.lengthTokensFull},
                {"turns"_L1, &score.turnsFull},
                {"tools"_L1, &score.toolsFull},
                {"code_blocks"_L1, &score.codeBlocksFull},
            };
            for (const auto &[name, target] : fields) {
                if (const MapEntry *field = saturation->find(name)) {
                    if (const auto value =
                            m_reader.readInteger(*field, 1, std::numeric_limits<int>::max()))
                        *target = int(*value);
                }
            }
        }
    }
}

void RoutingChecker::checkScoring(const MapEntry &entry, ScoringWeights &weights)
{
    const std::optional<KeyedMap> scoring = m_reader.readSection(entry, kScoringKeys);
    if (!scoring)
        return;
    const std::pair<QLatin1StringView, double *> fields[] = {
        {"load"_L1, &weights.load},
        {"latency"_L1, &weights.latency},
        {"success"_L1, &weights.success},
    };
    for (const auto &[name, target] : fields) {
        if (const MapEntry *field = scoring->find(name)) {
            if (const auto value =
                    m_reader.readNumberIn(*field, 0.0, std::numeric_limits<double>::max()))
                *target = *value;
        }
    }
    if (weights.load + weights.latency + weights.success <= 0.0)
        m_reader.reportValue(entry, u"`%1` weights must add up to more than 0"_s.arg(entry.name));
}

void RoutingChecker::checkAgents(const MapEntry &entry)
{
    const std::optional<KeyedMap> agents = m_reader.readSection(entry, kAgentsKeys);
    if (!agents)
        return;
    AgentsConfig &config = m_config.routing.agents;
    if (const MapEntry *ttl = agents->find("ttl"_L1)) {
        if (const auto value = m_reader.readDuration(*ttl, ZeroDuration::Rejected))
            config.ttl = *value;
    }
    if (const MapEntry *scoring = agents->find("scoring"_L1))
        checkScoring(*scoring, config.scoring);
    if (const MapEntry *capacity = agents->find("default_capacity"_L1)) {
        if (const auto value = m_reader.readInteger(*capacity, 1, std::numeric_limits<int>::max()))
            config.defaultCapacity = int(*value);
    }
}

void RoutingChecker::checkRoutes(const MapEntry &entry)
{
    if (!entry.value.IsSequence()) {
        m_reader.reportValue(
            entry, u"`routes` must be a list of rules, got %1"_s.arg(describe(entry.value)));
        return;
    }
    int index = 0;
    for (const YAML::Node &node : entry.value) {
        ++index;
        if (!node.IsMap()) {
            m_reader.report(node.IsNull() ? entry.value.Mark() : node.Mark(),
                            u"entry %1 of `routes` must be a map with `name`, `when` and `to`, "
                            u"got %2"_s.arg(QString::number(index), describe(node)));
            continue;
        }
        if (std::optional<RouteRule> rule = checkRoute(node))
            m_config.routing.routes.append(std::move(*rule));
    }
}

std::optional<RouteRule> RoutingChecker::checkRoute(const YAML::Node &node)
{
    const qsizetype errorsBefore = m_reader.errorCount();
    const KeyedMap keys = m_reader.readKeys(node, kRouteKeys);
    RouteRule rule;
    rule.position = position(node.Mark());
    if (const MapEntry *name = keys.find("name"_L1)) {
        rule.namePosition = valuePosition(*name);
        if (const auto text = m_reader.readString(*name)) {
            rule.name = *text;
            if (text->isEmpty())
                m_reader.reportValue(*name, u"`name` must not be empty"_s);
        }
    } else {
        m_reader.reportMissing(node, u"route"_s, "name"_L1);
    }
    if (const MapEntry *priority = keys.find("priority"_L1)) {
        if (const auto value = m_reader.readInteger(*priority, -kLargestPriority, kLargestPriority))
            rule.priority = int(*value);
    }
    if (const MapEntry *when = keys.find("when"_L1))
        rule.when = checkCondition(when->value, when->key.Mark());
    if (const MapEntry *to = keys.find("to"_L1))
        checkTo(*to, rule);
    else
        m_reader.reportMissing(node, u"route"_s, "to"_L1);
    if (const MapEntry *continues = keys.find("continue_streams"_L1)) {
        if (const auto value = m_reader.readBool(*continues))
            rule.continueStreams = *value;
    }
    if (const MapEntry *fallbacks = keys.find("fallbacks"_L1)) {
        rule.fallbacksPosition = valuePosition(*fallbacks);
        if (auto read = readErrorFallbacks(m_reader, *fallbacks))
            rule.fallbacks = std::move(*read);
    }
    if (const MapEntry *shadow = keys.find("shadow"_L1))
        rule.shadow = checkShadow(*shadow);
    if (const MapEntry *cache = keys.find("cache"_L1))
        rule.cache = readResponseCache(m_reader, *cache);
    if (m_reader.errorCount() != errorsBefore)
        return std::nullopt;
    return rule;
}

std::optional<RouteCondition> RoutingChecker::checkCondition(const YAML::Node &node,
                                                             const YAML::Mark &near)
{
    if (!node.IsMap()) {
        m_reader.report(node.IsNull() ? near : node.Mark(),
                        u"a condition must be a map such as `{field: tenant, eq: acme}` or "
                        u"`{all: [...]}`, got %1"_s.arg(describe(node)));
        return std::nullopt;
    }
    // Keys are read here rather than with readKeys: a wrong key in a condition is almost always a
    // misspelt operator, and the message should say so.
    const QStringList operators = config::operatorNames();
    QList<QLatin1StringView> allowed{"field"_L1};
    allowed += kCombinators;
    QList<QByteArray> operatorStorage;
    for (const QString &op : operators)
        operatorStorage.append(op.toLatin1());
    for (const QByteArray &op : operatorStorage)
        allowed.append(QLatin1StringView(op));

    KeyedMap keys;
    QHash<QString, int> firstLines;
    bool keysOk = true;
    for (auto it = node.begin(); it != node.end(); ++it) {
        const YAML::Node key = it->first;
        if (!key.IsScalar()) {
            m_reader.report(key.Mark(), u"keys must be plain names, got %1"_s.arg(describe(key)));
            keysOk = false;
            continue;
        }
        const QString name = fromYaml(key.Scalar());
        if (!allowed.contains(name)) {
            const QString suggestion = closestKey(name, allowed);
            m_reader.report(key.Mark(), (suggestion.isEmpty()
                                             ? u"unknown operator `%1`"_s.arg(name)
                                             : u"unknown operator `%1` (did you mean `%2`?)"_s.arg(
                                                   name, suggestion)) +
                                            u"; a condition takes `field` and one of %1, or one of "
                                            u"`all`, `any`, `not`"_s.arg(operators.join(u", "_s)));
            keysOk = false;
            continue;
        }
        if (const auto first = firstLines.constFind(name); first != firstLines.cend()) {
            m_reader.report(key.Mark(), u"duplicate key `%1` (first at line %2)"_s.arg(
                                            name, QString::number(first.value())));
            keysOk = false;
            continue;
        }
        firstLines.insert(name, m_reader.locate(key.Mark()).line);
        keys.entries.append({name, key, it->second});
    }
    if (!keysOk)
        return std::nullopt;

    for (QLatin1StringView combinator : kCombinators) {
        if (const MapEntry *entry = keys.find(combinator)) {
            if (keys.entries.size() > 1) {
                m_reader.report(node.Mark(), u"a condition with `%1` takes no other keys; put "
                                             u"the other conditions inside it"_s.arg(combinator));
                return std::nullopt;
            }
            return checkCombinator(*entry);
        }
    }

    RouteCondition condition;
    condition.position = position(node.Mark());
    const MapEntry *operatorEntry = nullptr;
    for (const MapEntry &entry : keys.entries) {
        if (entry.name == u"field"_s)
            continue;
        if (operatorEntry) {
            m_reader.report(entry.key.Mark(),
                            u"a condition takes one operator, got `%1` and `%2`; combine "
                            u"conditions with `all`"_s.arg(operatorEntry->name, entry.name));
            return std::nullopt;
        }
        operatorEntry = &entry;
    }
    const MapEntry *field = keys.find("field"_L1);
    if (!field) {
        m_reader.reportMissing(node, u"condition"_s, "field"_L1);
        return std::nullopt;
    }
    const std::optional<QString> fieldName = m_reader.readString(*field);
    if (!fieldName)
        return std::nullopt;
    condition.field = *fieldName;
    condition.fieldPosition = valuePosition(*field);
    if (!operatorEntry) {
        m_reader.report(node.Mark(), u"the condition on `%1` needs an operator: one of %2"_s.arg(
                                         *fieldName, operators.join(u", "_s)));
        return std::nullopt;
    }
    condition.op = *config::operatorFromName(operatorEntry->name);
    condition.valuePosition = valuePosition(*operatorEntry);
    if (condition.op == ConditionOperator::In) {
        const auto values = m_reader.readStringList(*operatorEntry);
        if (!values)
            return std::nullopt;
        condition.values = *values;
    } else {
        if (!operatorEntry->value.IsScalar()) {
            m_reader.reportValue(*operatorEntry,
                                 u"`%1` takes one value, got %2"_s.arg(
                                     operatorEntry->name, describe(operatorEntry->value)));
            return std::nullopt;
        }
        condition.values = QStringList{fromYaml(operatorEntry->value.Scalar())};
    }
    return condition;
}

std::optional<RouteCondition> RoutingChecker::checkCombinator(const MapEntry &entry)
{
    RouteCondition condition;
    condition.position = position(entry.key.Mark());
    if (entry.name == u"not"_s) {
        condition.kind = RouteCondition::Kind::Not;
        std::optional<RouteCondition> inner = checkCondition(entry.value, entry.key.Mark());
        if (!inner)
            return std::nullopt;
        condition.children.append(std::move(*inner));
        return condition;
    }
    condition.kind = entry.name == u"all"_s ? RouteCondition::Kind::All : RouteCondition::Kind::Any;
    if (!entry.value.IsSequence() || entry.value.size() == 0) {
        m_reader.reportValue(entry, u"`%1` needs a list of at least one condition, got %2"_s.arg(
                                        entry.name, describe(entry.value)));
        return std::nullopt;
    }
    bool allOk = true;
    for (const YAML::Node &child : entry.value) {
        std::optional<RouteCondition> inner = checkCondition(child, entry.value.Mark());
        if (inner)
            condition.children.append(std::move(*inner));
        else
            allOk = false;
    }
    if (!allOk)
        return std::nullopt;
    return condition;
}

std::optional<RouteTarget> RoutingChecker::checkTargetEntry(const MapEntry &entry)
{
    RouteTarget target;
    target.position = valuePosition(entry);
    if (entry.name == u"pool"_s) {
        target.kind = RouteTarget::Kind::Pool;
        const auto ids = m_reader.readStringList(entry);
        if (!ids)
            return std::nullopt;
        target.names = *ids;
        return target;
    }
    target.kind =
        entry.name == u"provider"_s ? RouteTarget::Kind::Provider : RouteTarget::Kind::Tier;
    const auto name = m_reader.readString(entry);
    if (!name)
        return std::nullopt;
    target.names = QStringList{*name};
    return target;
}

std::optional<RouteTarget>
RoutingChecker::checkTargetMap(const YAML::Node &node, const YAML::Mark &near, const QString &owner)
{
    const qsizetype errorsBefore = m_reader.errorCount();
    const KeyedMap keys = m_reader.readKeys(node, kTargetKinds);
    if (keys.entries.size() != 1) {
        if (m_reader.errorCount() == errorsBefore)
            m_reader.report(
                node.IsNull() ? near : node.Mark(),
                u"%1 must name exactly one of `provider`, `pool` or `tier`"_s.arg(owner));
        return std::nullopt;
    }
    return checkTargetEntry(keys.entries.first());
}

std::optional<SplitBranch> RoutingChecker::checkBranch(const YAML::Node &node,
                                                       const YAML::Mark &near)
{
    if (!node.IsMap()) {
        m_reader.report(node.IsNull() ? near : node.Mark(),
                        u"a split branch must be a map such as `{target: hermes, weight: 95}`, "
                        u"got %1"_s.arg(describe(node)));
        return std::nullopt;
    }
    const KeyedMap keys = m_reader.readKeys(node, kBranchKeys);
    SplitBranch branch;
    branch.position = position(node.Mark());
    const MapEntry *target = keys.find("target"_L1);
    const MapEntry *weight = keys.find("weight"_L1);
    if (!target)
        m_reader.reportMissing(node, u"split branch"_s, "target"_L1);
    if (!weight)
        m_reader.reportMissing(node, u"split branch"_s, "weight"_L1);
    if (!target || !weight)
        return std::nullopt;
    if (target->value.IsScalar()) {
        // A bare name is a tier when it names one, else a provider; a provider whose id is a
        // tier's name is written `{provider: light}`.
        const QString name = fromYaml(target->value.Scalar());
        branch.target.kind = (name == u"light"_s || name == u"pro"_s || name == u"auto"_s)
                                 ? RouteTarget::Kind::Tier
                                 : RouteTarget::Kind::Provider;
        branch.target.names = QStringList{name};
        branch.target.position = valuePosition(*target);
    } else if (target->value.IsMap()) {
        const auto parsed = checkTargetMap(target->value, target->key.Mark(), u"`target`"_s);
        if (!parsed)
            return std::nullopt;
        branch.target = *parsed;
    } else {
        m_reader.reportValue(
            *target, u"`target` must be a provider or tier name, or a map with "
                     u"`provider`, `pool` or `tier`, got %1"_s.arg(describe(target->value)));
        return std::nullopt;
    }
    branch.weightPosition = valuePosition(*weight);
    const auto value = m_reader.readInteger(*weight, 0, kLargestSplitWeight);
    if (!value)
        return std::nullopt;
    branch.weight = int(*value);
    return branch;
}

std::optional<ShadowConfig> RoutingChecker::checkShadow(const MapEntry &entry)
{
    const std::optional<KeyedMap> keys = m_reader.readSection(entry, kShadowKeys);
    if (!keys)
        return std::nullopt;
    ShadowConfig shadow;
    shadow.position = valuePosition(entry);
    if (const MapEntry *target = keys->find("target"_L1)) {
        shadow.targetPosition = valuePosition(*target);
        if (const auto text = m_reader.readString(*target))
            shadow.target = *text;
    } else {
        m_reader.reportMissing(entry.value, u"`shadow`"_s, "target"_L1);
    }
    if (const MapEntry *share = keys->find("share"_L1)) {
        if (const auto value = m_reader.readNumberIn(*share, 0.0, 1.0))
            shadow.share = *value;
    } else {
        m_reader.reportMissing(entry.value, u"`shadow`"_s, "share"_L1);
    }
    return shadow;
}

bool RoutingChecker::checkTo(const MapEntry &entry, RouteRule &rule)
{
    if (!entry.value.IsMap()) {
        m_reader.reportValue(entry, u"`to` must be a map such as `{tier: auto}`, "
                                    u"`{provider: x}`, `{pool: [a, b]}` or `{split: [...]}`, "
                                    u"got %1"_s.arg(describe(entry.value)));
        return false;
    }
    const qsizetype errorsBefore = m_reader.errorCount();
    const KeyedMap keys = m_reader.readKeys(entry.value, kToKeys);
    const MapEntry *chosen = nullptr;
    int targets = 0;
    for (const MapEntry &key : keys.entries) {
        if (key.name != u"key"_s && key.name != u"strict"_s) {
            chosen = &key;
            ++targets;
        }
    }
    if (targets != 1) {
        if (m_reader.errorCount() == errorsBefore)
            m_reader.report(entry.value.Mark(),
                            u"`to` must name exactly one of %1"_s.arg(joined(kToKeys.first(4))));
        return false;
    }
    const MapEntry *key = keys.find("key"_L1);
    const MapEntry *strict = keys.find("strict"_L1);
    if (chosen->name != u"split"_s) {
        if (key) {
            m_reader.report(key->key.Mark(), u"`key` only applies to a `split`"_s);
            return false;
        }
        // A provider or pool target is a promise already; a tier follows health by design.
        if (strict) {
            m_reader.report(strict->key.Mark(),
                            u"`strict` only applies to a `split`: a provider or pool target is "
                            u"strict already, and a tier fails over by design"_s);
            return false;
        }
        const auto target = checkTargetEntry(*chosen);
        if (!target)
            return false;
        rule.to = *target;
        return true;
    }
    if (key) {
        const auto name = m_reader.readString(*key);
        if (!name)
            return false;
        if (*name == u"user"_s)
            rule.splitKey = SplitKey::User;
        else if (*name == u"tenant"_s)
            rule.splitKey = SplitKey::Tenant;
        else if (*name == u"session"_s)
            rule.splitKey = SplitKey::Session;
        else {
            m_reader.reportValue(*key, u"`key` must be `user`, `tenant` or `session`, got %1"_s.arg(
                                           describe(key->value)));
            return false;
        }
    }
    if (strict) {
        const auto value = m_reader.readBool(*strict);
        if (!value)
            return false;
        rule.strictSplit = *value;
    }
    if (!chosen->value.IsSequence() || chosen->value.size() == 0) {
        m_reader.reportValue(*chosen, u"`split` needs a list of branches such as `[{target: a, "
                                      u"weight: 95}, {target: b, weight: 5}]`, got %1"_s.arg(
                                          describe(chosen->value)));
        return false;
    }
    bool allOk = true;
    for (const YAML::Node &node : chosen->value) {
        if (auto branch = checkBranch(node, chosen->value.Mark()))
            rule.split.append(std::move(*branch));
        else
            allOk = false;
    }
    return allOk;
}

void RoutingChecker::validateFallbackModels()
{
    const auto report = [this](const QList<RuleProblem> &problems) {
        for (const RuleProblem &problem : problems) {
            YAML::Mark mark;
            mark.line = problem.position.line - 1;
            mark.column = problem.position.column - 1;
            m_reader.report(mark, problem.message);
        }
    };
    for (const TierConfig &tier : std::as_const(m_config.routing.tiers))
        report(validateErrorFallbacks(tier.fallbacks, tier.fallbacksPosition, m_config));
    // A model's fallbacks belong to its public name, whichever provider lists it: said once, or
    // said the same everywhere, so a request's fallbacks never depend on the endpoint it drew.
    QHash<QString, const ModelRoute *> declared;
    QHash<QString, const ModelRoute *> cached;
    for (const ProviderConfig &provider : std::as_const(m_config.providers)) {
        for (const ModelRoute &model : provider.models) {
            // A model's cache too: whether an answer is given again never depends on the
            // endpoint the request drew.
            if (model.cache) {
                const ModelRoute *first = cached.value(model.publicName);
                if (!first)
                    cached.insert(model.publicName, &model);
                else if (!first->cache->sameSettings(*model.cache))
                    report({{{model.cache->line, model.cache->column},
                             u"model `%1` has another `cache` at line %2: a model's cache is "
                             u"said once, or the same for every provider that lists it"_s.arg(
                                 model.publicName, QString::number(first->cache->line))}});
            }
            if (model.fallbacks.isEmpty())
                continue;
            report(validateErrorFallbacks(model.fallbacks, model.fallbacksPosition, m_config,
                                          model.publicName));
            const ModelRoute *first = declared.value(model.publicName);
            if (!first) {
                declared.insert(model.publicName, &model);
            } else if (!(first->fallbacks == model.fallbacks)) {
                report({{model.fallbacksPosition,
                         u"model `%1` has other `fallbacks` at line %2: a model's fallbacks are "
                         u"said once, or the same for every provider that lists it"_s.arg(
                             model.publicName, QString::number(first->fallbacksPosition.line))}});
            }
        }
    }
}

void RoutingChecker::validateRoutes()
{
    // Rules are judged against the providers as the file names them, including those whose own
    // entries had errors, so one broken provider entry gives one error, not one per rule.
    Config known = m_config;
    for (const QString &id : std::as_const(m_providersWithErrors)) {
        ProviderConfig standIn;
        standIn.id = id;
        known.providers.append(standIn);
    }
    for (const config::RuleProblem &problem :
         config::validateRoutes(m_config.routing.routes, known)) {
        YAML::Mark mark;
        mark.line = problem.position.line - 1;
        mark.column = problem.position.column - 1;
        m_reader.report(mark, problem.message);
    }
}

} // namespace

std::optional<ErrorFallbacks> readErrorFallbacks(YamlReader &reader, const MapEntry &entry)
{
    const std::optional<KeyedMap> keys = reader.readSection(entry, kFallbackErrorKeys);
    if (!keys)
        return std::nullopt;
    const qsizetype errorsBefore = reader.errorCount();
    ErrorFallbacks fallbacks;
    for (const MapEntry &kind : keys->entries) {
        const std::optional<FallbackError> error = fallbackErrorFromName(kind.name);
        const std::optional<QStringList> models = reader.readStringList(kind);
        if (!error || !models)
            continue;
        if (models->isEmpty()) {
            reader.reportValue(kind, u"`%1` must list at least one model"_s.arg(kind.name));
            continue;
        }
        QStringList &into = fallbacks.models(*error);
        for (const QString &model : *models) {
            if (into.contains(model)) {
                reader.reportValue(kind, u"`%1` lists model `%2` twice"_s.arg(kind.name, model));
                continue;
            }
            into.append(model);
        }
    }
    if (reader.errorCount() != errorsBefore)
        return std::nullopt;
    return fallbacks;
}

std::variant<QList<RouteRule>, QList<ConfigError>>
readRouteRules(const QByteArray &text, const QString &sourceName, const Config &live,
               const QList<QLatin1StringView> &otherRootKeys)
{
    YamlReader reader(sourceName);
    YAML::Node root;
    try {
        root = YAML::Load(text.toStdString());
    } catch (const YAML::Exception &syntaxError) {
        const YAML::Mark &mark = syntaxError.mark;
        const SourceLocation where =
            mark.is_null() ? SourceLocation{sourceName, 1, 1}
                           : SourceLocation{sourceName, mark.line + 1, mark.column + 1};
        return QList<ConfigError>{
            {where, u"invalid JSON or YAML: %1"_s.arg(QString::fromStdString(syntaxError.msg))}};
    }
    if (!root.IsMap()) {
        reader.report(root.Mark(), u"expected a map with `routes`, got %1"_s.arg(describe(root)));
        return reader.takeErrors();
    }
    const KeyedMap keys =
        reader.readKeys(root, QList<QLatin1StringView>{"routes"_L1} + otherRootKeys);
    const MapEntry *routes = keys.find("routes"_L1);
    if (!routes)
        reader.reportMissing(root, u"the document"_s, "routes"_L1);
    if (reader.errorCount() > 0)
        return reader.takeErrors();
    // The rules are judged against the live providers and tiers, as an Apply would judge them.
    Config trial = live;
    trial.routing.routes.clear();
    RoutingChecker checker(reader, trial);
    checker.checkRoutes(*routes);
    if (reader.errorCount() == 0)
        checker.validateRoutes();
    if (reader.errorCount() > 0)
        return reader.takeErrors();
    return trial.routing.routes;
}

QList<QLatin1StringView> routingRootKeys()
{
    return kRoutingRootKeys;
}

void checkRoutingSections(YamlReader &reader, const KeyedMap &root, Config &config)
{
    RoutingChecker checker(reader, config);
    checker.noteProviderIds(root.find("providers"_L1));
    // Tiers first: rules that target a tier are checked against its pool.
    if (const MapEntry *tiers = root.find("tiers"_L1))
        checker.checkTiers(*tiers);
    if (const MapEntry *chain = root.find("fallback_chain"_L1))
        checker.checkFallbackChain(*chain);
    if (const MapEntry *gearbox = root.find("gearbox"_L1))
        checker.checkGearbox(*gearbox);
    if (const MapEntry *scoring = root.find("scoring"_L1))
        checker.checkScoring(*scoring, config.routing.scoring);
    if (const MapEntry *agents = root.find("agents"_L1))
        checker.checkAgents(*agents);
    if (const MapEntry *routes = root.find("routes"_L1)) {
        checker.checkRoutes(*routes);
        checker.validateRoutes();
    }
    checker.validateFallbackModels();
}

} // namespace switchyard::config
