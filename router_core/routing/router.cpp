#include "routing/router.h"

#include "config/rule_validation.h"
#include "health/health_registry.h"
#include "protocol/chat_request.h"
#include "routing/endpoint_scoring.h"
#include "routing/gearbox.h"
#include "routing/number_text.h"
#include "routing/rule_matcher.h"
#include "routing/stable_hash.h"
#include "telemetry/trace.h"

#include <QLoggingCategory>
#include <QRegularExpression>
#include <QStringBuilder>
#include <QVarLengthArray>
#include <algorithm>

Q_LOGGING_CATEGORY(lcRouting, "switchyard.routing")

namespace switchyard::routing {

using namespace Qt::StringLiterals;

namespace {

const QString kLight = u"light"_s;
const QString kPro = u"pro"_s;
const QString kAuto = u"auto"_s;

// A split hashes its key into this many buckets: a weight moves in steps of 0.01 %.
constexpr int kCanaryBuckets = 10'000;
// Separates the request-id draw from every other use of the same hash.
constexpr quint64 kDrawSeed = 0x64726177; // "draw"
// A draw of its own for shadow traffic: which requests are mirrored must not follow which ones
// a canary or a degraded tier's share took.
constexpr quint64 kShadowSeed = 0x736861646f77; // "shadow"
constexpr std::chrono::milliseconds kAgentSweepInterval{1000};
// Agents do not declare a latency objective; this is the providers' default.
constexpr double kAgentLatencyObjectiveMs = 2500.0;
constexpr qsizetype kLongestAgentIdBytes = 64;

// Candidate reasons are shared constants: a decision for a pool of 50 endpoints formats none.
const QString kReasonAffinity = u"first: the session's endpoint (rendezvous hash)"_s;
const QString kReasonDraw = u"first: weighted draw by score"_s;
const QString kReasonRanked = u"ranked by score"_s;
const QString kReasonCrossTier = u"failover to the pro tier"_s;
const QString kReasonLighter = u"degradation level 1: the light tier's lighter model"_s;
const QString kReasonFallback = u"fallback_chain, in configured order"_s;
const QString kReasonOtherBranch = u"failover to another branch of the split"_s;
// Separates the draw that moves a request off an unavailable or ramping branch from the bucket.
constexpr quint64 kBranchMoveSeed = 0x6d6f7665; // "move"

QString upstreamModelFor(const config::ProviderConfig &provider, const QString &model)
{
    // A provider serving the model gets it under its own name for it. One reached through a tier,
    // a pool or the fallback chain without serving it is sent its first model: a tier's pool
    // holds tier-specific models, and "whatever this endpoint serves" is what the rule meant.
    for (const config::ModelRoute &route : provider.models) {
        if (route.publicName == model)
            return route.upstreamName;
    }
    return provider.models.isEmpty() ? model : provider.models.first().upstreamName;
}

// A configured provider's upstream names, looked up by model once per decision rather than by
// comparing model names for every candidate.
struct ModelServers {
    QList<int> providers;               // serving the model, in file order
    QHash<int, QString> upstreamNames;  // by provider index
    protocol::Operations endpoints = 0; // what they serve together
    int dimensions = 0;                 // an embeddings model's, as its first provider says
};

bool isCapabilityTag(const QString &tag)
{
    static const QRegularExpression pattern(
        u"^[A-Za-z0-9._:-]{1,64}/[A-Za-z0-9._:-]{1,64}/[A-Za-z0-9._:-]{1,64}$"_s);
    return pattern.match(tag).hasMatch();
}

struct CompiledTarget {
    config::RouteTarget::Kind kind = config::RouteTarget::Kind::Tier;
    QList<int> pool; // Provider and Pool: provider indexes
    QString tier;    // Tier: light, pro or auto
    QString label;
};

struct CompiledBranch {
    CompiledTarget target;
    int weight = 0;
};

struct CompiledRule {
    QString name;
    int priority = 0;
    bool hasCondition = false;
    CompiledCondition when;
    CompiledTarget target;
    QList<CompiledBranch> split;
    QStringList splitTargets; // the branches' target labels, for matching live weights
    config::SplitKey splitKey = config::SplitKey::User;
    bool strictSplit = false; // branches are promises: no share moves, no failover between them
    quint64 seed = 0;         // canary hash seed: each rule splits users independently
    config::ErrorFallbacks fallbacks;
    bool continueStreams = false;
    // `shadow`: the provider's slot (-1 when it has none) and the share of requests mirrored.
    int shadowSlot = -1;
    double shadowShare = 0.0;
    std::optional<config::ResponseCacheConfig> cache;
};

} // namespace

struct RoutingTable::Compiled {
    // By endpoint slot, for the slots the registry had when the table was compiled; an entry
    // whose `endpoint` is -1 is not a configured provider of this snapshot (an agent, a retired
    // endpoint). Plain lists: the decision reads them once per candidate.
    QList<EndpointProfile> profiles;
    QList<QString> firstUpstreamModel; // sent when the provider does not serve the model
    // The snapshot's own definition of each configured provider (the table holds the snapshot).
    QList<const config::ProviderConfig *> definitions;
    QHash<QString, ModelServers> serversByModel;
    QList<int> lightPool;
    QList<int> proPool;
    QList<int> fallbackChain;
    QList<CompiledRule> rules; // highest priority first; equal priorities in file order
    // Fallbacks by error of the models that have them, by public name, and of the tiers.
    QHash<QString, config::ErrorFallbacks> fallbacksByModel;
    // `cache:` of the models that have one, by public name.
    QHash<QString, config::ResponseCacheConfig> cacheByModel;
    config::ErrorFallbacks lightFallbacks;
    config::ErrorFallbacks proFallbacks;
    bool lightContinuesStreams = false;
    bool proContinuesStreams = false;

    // Providers by id to their endpoint slots. The health registry knows every provider of a
    // snapshot before the snapshot is applied (it syncs first), so every id resolves.
    static QList<int> slotsOf(const health::HealthRegistry &health, const QStringList &ids)
    {
        QList<int> found;
        for (const QString &id : ids) {
            const int slot = health.configuredIndexOf(id);
            if (slot >= 0)
                found.append(slot);
        }
        return found;
    }

    static CompiledTarget compileTarget(const health::HealthRegistry &health,
                                        const config::RouteTarget &target)
    {
        CompiledTarget compiled;
        compiled.kind = target.kind;
        compiled.label = target.label();
        if (target.kind == config::RouteTarget::Kind::Tier)
            compiled.tier = target.names.value(0);
        else
            compiled.pool = slotsOf(health, target.names);
        return compiled;
    }

    bool configured(int slot) const
    {
        return slot >= 0 && slot < profiles.size() && profiles[slot].endpoint == slot;
    }

    Compiled(const config::Config &config, const health::HealthRegistry &health)
        : profiles(health.providerCount()), firstUpstreamModel(health.providerCount()),
          definitions(health.providerCount(), nullptr)
    {
        for (const config::ProviderConfig &provider : config.providers) {
            const int slot = health.configuredIndexOf(provider.id);
            if (slot < 0)
                continue;
            definitions[slot] = &provider;
            profiles[slot] = {slot, provider.weight, provider.capacity,
                              double(provider.latencyObjective.count()),
                              stableHash(QStringView(provider.id))};
            for (const config::ModelRoute &model : provider.models) {
                if (!model.fallbacks.isEmpty())
                    fallbacksByModel.insert(model.publicName, model.fallbacks);
                if (model.cache)
                    cacheByModel.insert(model.publicName, *model.cache);
                ModelServers &servers = serversByModel[model.publicName];
                servers.providers.append(slot);
                servers.upstreamNames.insert(slot, model.upstreamName);
                if (servers.dimensions == 0)
                    servers.dimensions = model.dimensions;
                for (protocol::Operation operation :
                     {protocol::Operation::Chat, protocol::Operation::Responses,
                      protocol::Operation::Embeddings, protocol::Operation::Completions}) {
                    if (provider.serves(model.upstreamName, operation))
                        servers.endpoints |= protocol::operationBit(operation);
                }
            }
            firstUpstreamModel[slot] =
                provider.models.isEmpty() ? QString() : provider.models.first().upstreamName;
        }
        if (const config::TierConfig *light = config.routing.tier(kLight)) {
            lightPool = slotsOf(health, light->pool);
            lightFallbacks = light->fallbacks;
            lightContinuesStreams = light->continueStreams;
        }
        if (const config::TierConfig *pro = config.routing.tier(kPro)) {
            proPool = slotsOf(health, pro->pool);
            proFallbacks = pro->fallbacks;
            proContinuesStreams = pro->continueStreams;
        }
        fallbackChain = slotsOf(health, config.routing.fallbackChain);

        for (const config::RouteRule &rule : config.routing.routes) {
            CompiledRule compiled;
            compiled.name = rule.name;
            compiled.priority = rule.priority;
            compiled.hasCondition = rule.when.has_value();
            if (rule.when)
                compiled.when = CompiledCondition::compile(*rule.when);
            compiled.target = compileTarget(health, rule.to);
            for (const config::SplitBranch &branch : rule.split) {
                compiled.split.append({compileTarget(health, branch.target), branch.weight});
                compiled.splitTargets.append(compiled.split.last().target.label);
            }
            compiled.splitKey = rule.splitKey;
            compiled.strictSplit = rule.strictSplit;
            compiled.fallbacks = rule.fallbacks;
            compiled.continueStreams = rule.continueStreams;
            if (rule.shadow) {
                compiled.shadowSlot = health.configuredIndexOf(rule.shadow->target);
                compiled.shadowShare = rule.shadow->share;
            }
            compiled.cache = rule.cache;
            compiled.seed = stableHash(QStringView(rule.name));
            rules.append(std::move(compiled));
        }
        std::stable_sort(
            rules.begin(), rules.end(),
            [](const CompiledRule &a, const CompiledRule &b) { return a.priority > b.priority; });
    }

    const CompiledRule *rule(const QString &name) const
    {
        for (const CompiledRule &candidate : rules) {
            if (candidate.name == name)
                return &candidate;
        }
        return nullptr;
    }
};

RoutingTable::RoutingTable(std::shared_ptr<const config::Config> config,
                           const health::HealthRegistry &health)
    : m_config(std::move(config)), m_compiled(std::make_unique<const Compiled>(*m_config, health))
{}

RoutingTable::~RoutingTable() = default;

// Builds one decision. Everything it reads is either the compiled snapshot, the request, or the
// health registry's read methods, so the same request in the same state gets the same decision.
struct Router::DecisionBuilder {
    const Router &router;
    const RoutingTable::Compiled &compiled;
    const config::Config &config;
    const RequestContext &context;
    RouteDecision decision;
    QVarLengthArray<bool, 128> listed;     // by provider index: already a candidate
    quint64 sessionHash = 0;               // 0: no session, no affinity
    double draw = 0.0;                     // from the request id: the same request draws the same
    const ModelServers *servers = nullptr; // configured providers serving the requested model
    const CompiledRule *matchedRule = nullptr;

    DecisionBuilder(const Router &owner, const RoutingTable &table, const RequestContext &request)
        : router(owner), compiled(table.compiled()), config(table.config()), context(request),
          listed(owner.m_health.providerCount(), false)
    {
        decision.model = context.model;
        decision.operation = context.operation;
        decision.candidates.reserve(owner.m_health.providerCount());
        decision.steps.reserve(8);
        if (!context.session.isEmpty())
            sessionHash = stableHash(QStringView(context.session)) | 1;
        draw = unitInterval(stableHash(QByteArrayView(context.requestId), kDrawSeed));
        const auto found = compiled.serversByModel.constFind(context.model);
        if (found != compiled.serversByModel.cend())
            servers = &*found;
    }

    QString upstreamModelOf(int slot, const config::ProviderConfig &provider) const
    {
        if (!compiled.configured(slot))
            return upstreamModelFor(provider, context.model); // a registered agent
        if (servers) {
            const auto served = servers->upstreamNames.constFind(slot);
            if (served != servers->upstreamNames.cend())
                return *served;
        }
        const QString &first = compiled.firstUpstreamModel[slot];
        return first.isEmpty() ? context.model : first;
    }

    void step(const QString &stage, const QString &detail)
    {
        decision.steps.append({stage, detail});
    }

    // The endpoint's definition: this table's snapshot's for a configured provider, the
    // registry's for an agent.
    const config::ProviderConfig &providerConfig(int slot) const
    {
        return compiled.configured(slot) ? *compiled.definitions[slot]
                                         : router.m_health.providerConfig(slot);
    }

    EndpointHealth healthOf(int index) const
    {
        const health::HealthRegistry &registry = router.m_health;
        EndpointHealth now;
        if (index >= registry.providerCount()) {
            now.selectable = false;
            return now;
        }
        now.selectable = registry.selectable(index);
        if (!now.selectable)
            return now;
        now.inFlight = registry.inFlight(index);
        now.latencyP50Ms = registry.latencyP50Ms(index);
        now.successRatio = registry.recentSuccessRatio(index);
        now.recentCalls = registry.recentCallCount(index);
        now.trafficShare = registry.trafficShare(index);
        return now;
    }

    // Ranks endpoints not yet listed and appends them as candidates. Returns how many.
    qsizetype addPool(const QVarLengthArray<EndpointProfile, 64> &members, CandidateRole role,
                      const QString &tier, int degradationLevel, PoolOrder order,
                      const config::ScoringWeights &weights, const QString &poolName)
    {
        const QVarLengthArray<EndpointProfile, 64> &profiles = members;
        QVarLengthArray<EndpointHealth, 64> health;
        for (const EndpointProfile &member : members)
            health.append(healthOf(member.endpoint));
        // Spans, not pointers: GCC 12 takes a pointer-to-const argument as a read of the array
        // it points into, and a QVarLengthArray's inline storage is unset when `members` is
        // empty (a false -Wmaybe-uninitialized in the profile-guided build).
        const PoolRanking ranking = rankPool({profiles.constData(), std::size_t(profiles.size())},
                                             {health.constData(), std::size_t(health.size())},
                                             weights, order, sessionHash, draw);

        for (int skipped : ranking.skipped) {
            if (!decision.unavailable.contains(profiles[skipped].endpoint))
                decision.unavailable.append(profiles[skipped].endpoint);
            step(u"pool"_s,
                 u"%1: skipped `%2`: not selectable (breaker open, disabled, draining or "
                 u"retired)"_s.arg(poolName, providerConfig(profiles[skipped].endpoint).id));
        }
        for (qsizetype r = 0; r < ranking.ranked.size(); ++r) {
            const ScoredEndpoint &scored = ranking.ranked[r];
            const int index = profiles[scored.member].endpoint;
            const config::ProviderConfig &provider = providerConfig(index);
            const QString &reason = role != CandidateRole::Primary
                                        ? (role == CandidateRole::CrossTier      ? kReasonCrossTier
                                           : role == CandidateRole::LighterModel ? kReasonLighter
                                           : role == CandidateRole::OtherBranch ? kReasonOtherBranch
                                                                                : kReasonFallback)
                                    : r > 0                                      ? kReasonRanked
                                    : ranking.first == FirstChoice::Affinity     ? kReasonAffinity
                                    : ranking.first == FirstChoice::WeightedDraw ? kReasonDraw
                                                                                 : kReasonRanked;
            // Built whole and moved in: copy-constructing its strings is cheaper than assigning.
            decision.candidates.append(RouteCandidate{
                .endpoint = index,
                .providerId = provider.id,
                .upstreamModel = upstreamModelOf(index, provider),
                .tier = tier,
                .role = role,
                .degradationLevel = degradationLevel,
                .score = scored.score,
                .factors = scored.factors,
                .reason = reason,
            });
            if (index < listed.size())
                listed[index] = true;
        }
        if (ranking.ranked.isEmpty() || order != PoolOrder::ChooseFirst)
            return ranking.ranked.size();

        const RouteCandidate &first =
            decision.candidates[decision.candidates.size() - ranking.ranked.size()];
        if (ranking.first == FirstChoice::Affinity) {
            step(u"affinity"_s, poolName % u": session `"_s % context.session % u"` stays on `"_s %
                                    first.providerId % u"` while it is healthy"_s);
        } else {
            // Every request takes this step: written into one string, not five.
            QString detail;
            detail.reserve(poolName.size() + first.providerId.size() + 80);
            detail.append(poolName).append(u": weighted draw "_s);
            appendTwoDecimals(detail, draw).append(u" chose `"_s).append(first.providerId);
            appendTwoDecimals(detail.append(u"` (score "_s), first.score).append(u" of "_s);
            appendTwoDecimals(detail, ranking.scoreTotal).append(u" across "_s);
            protocol::appendDecimal(detail, ranking.ranked.size()).append(u" endpoint(s))"_s);
            step(u"pool"_s, detail);
        }
        return ranking.ranked.size();
    }

    qsizetype addProviders(const QList<int> &indexes, CandidateRole role, const QString &tier,
                           int degradationLevel, PoolOrder order, const QString &poolName)
    {
        QVarLengthArray<EndpointProfile, 64> members;
        for (int slot : indexes) {
            if (slot >= listed.size() || !listed[slot])
                members.append(compiled.profiles[slot]);
        }
        return addPool(members, role, tier, degradationLevel, order, config.routing.scoring,
                       poolName);
    }

    void addFallbackChain()
    {
        if (compiled.fallbackChain.isEmpty())
            return;
        const qsizetype added =
            addProviders(compiled.fallbackChain, CandidateRole::FallbackChain, QString(), 0,
                         PoolOrder::AsListed, u"fallback_chain"_s);
        if (added > 0)
            step(u"failover"_s,
                 u"then "_s % QString::number(added) % u" endpoint(s) of the fallback chain"_s);
    }

    // The key a split hashes, and what the trace calls it.
    struct SplitKeyValue {
        QString name;  // user, tenant or session
        QString value; // empty when the request has none: the request id stands in
    };
    SplitKeyValue splitKeyOf(const CompiledRule &rule) const
    {
        const QString &value = rule.splitKey == config::SplitKey::User     ? context.user
                               : rule.splitKey == config::SplitKey::Tenant ? context.tenant
                                                                           : context.session;
        return {config::splitKeyName(rule.splitKey), value};
    }
    quint64 splitHash(const SplitKeyValue &key, quint64 seed) const
    {
        return key.value.isEmpty() ? stableHash(QByteArrayView(context.requestId), seed)
                                   : stableHash(QStringView(key.value), seed);
    }

    // The endpoints a split branch stands for: its provider or pool, or the pools its tier tries
    // (light fails over to pro; pro alone, since a lighter model is a degradation).
    QList<int> branchEndpoints(const CompiledTarget &target) const
    {
        if (target.kind != config::RouteTarget::Kind::Tier)
            return target.pool;
        return target.tier == kPro ? compiled.proPool : compiled.lightPool + compiled.proPool;
    }

    // How much of its share a split branch takes now, in [0, 1]: 0 while none of its endpoints
    // can be chosen (breaker open, disabled, draining, failing its probes, cooling down after a
    // 429), the largest recovery-ramp share among those that can, else 1.
    double branchAvailability(const CompiledTarget &target) const
    {
        const health::HealthRegistry &registry = router.m_health;
        double best = 0.0;
        for (int slot : branchEndpoints(target)) {
            if (slot >= registry.providerCount() || !registry.selectable(slot) ||
                registry.coolDownLeft(slot).count() > 0)
                continue;
            best = std::max(best, registry.trafficShare(slot));
        }
        return best;
    }

    // The branches' weights, read once per decision: the live ones when set (the override is
    // shared, not copied), else the file's.
    using SplitWeights = QVarLengthArray<int, 8>;
    SplitWeights splitWeights(const CompiledRule &rule) const
    {
        const auto override = router.m_canaryOverrides.constFind(rule.name);
        const bool live =
            override != router.m_canaryOverrides.cend() && override->targets == rule.splitTargets;
        SplitWeights weights;
        for (qsizetype branch = 0; branch < rule.split.size(); ++branch)
            weights.append(
                std::max(0, live ? override->weights.at(branch) : rule.split[branch].weight));
        return weights;
    }

    // The branch whose buckets hold the request, by weight.
    qsizetype pickCanary(const CompiledRule &rule, const SplitWeights &weights)
    {
        const auto weightOf = [&](qsizetype branch) { return weights[branch]; };
        const SplitKeyValue key = splitKeyOf(rule);
        const int bucket = int(splitHash(key, rule.seed) % kCanaryBuckets);
        qint64 total = 0;
        for (qsizetype i = 0; i < rule.split.size(); ++i)
            total += weightOf(i);
        qsizetype side = rule.split.size() - 1;
        qint64 cumulative = 0;
        int lowBucket = 0;
        int highBucket = kCanaryBuckets;
        for (qsizetype i = 0; i < rule.split.size() && total > 0; ++i) {
            const int low = int(cumulative * kCanaryBuckets / total);
            cumulative += weightOf(i);
            const int high = int(cumulative * kCanaryBuckets / total);
            if (bucket < high) {
                side = i;
                lowBucket = low;
                highBucket = high;
                break;
            }
        }
        const CompiledBranch &branch = rule.split[side];
        decision.canarySide = branch.target.label;
        const QString who = key.value.isEmpty()
                                ? QString(u"no "_s % key.name % u" given, so request id `"_s %
                                          QLatin1StringView(context.requestId) % u'`')
                                : QString(key.name % u" `"_s % key.value % u'`');
        step(u"canary"_s, who % u" is in bucket "_s % QString::number(bucket) % u" of "_s %
                              QString::number(kCanaryBuckets) % u"; `"_s % branch.target.label %
                              u"` takes buckets "_s % QString::number(lowBucket) % u'-' %
                              QString::number(highBucket - 1) % u" (weight "_s %
                              QString::number(weightOf(side)) % u" of "_s % QString::number(total) %
                              u')');
        return rule.strictSplit ? side : followHealth(rule, side, key, weights);
    }

    // Splits follow health: a request whose branch has no endpoint to choose goes to the other
    // branches in proportion to their weights; while the branch recovers through its breaker's
    // ramp it keeps the ramp's share of its requests. The draws hash the split's key, so a
    // client moves and comes back as one, and the requests of healthy branches never move.
    qsizetype followHealth(const CompiledRule &rule, qsizetype side, const SplitKeyValue &key,
                           const SplitWeights &weights)
    {
        const QString &label = rule.split[side].target.label;
        const double available = branchAvailability(rule.split[side].target);
        if (available >= 1.0)
            return side;
        const double stay = unitInterval(splitHash(key, rule.seed ^ kBranchMoveSeed));
        const QString percent = QString::number(qRound(available * 100.0));
        if (stay < available) {
            step(u"canary"_s, u"`"_s % label % u"` is recovering and takes "_s % percent %
                                  u" % of its share: this request stays"_s);
            return side;
        }
        QVarLengthArray<double, 8> shares(rule.split.size(), 0.0);
        double total = 0.0;
        for (qsizetype i = 0; i < rule.split.size(); ++i) {
            if (i != side)
                shares[i] = weights[i] * branchAvailability(rule.split[i].target);
            total += shares[i];
        }
        const QString why = available > 0.0
                                ? QString(u"`"_s % label % u"` is recovering and takes "_s %
                                          percent % u" % of its share"_s)
                                : QString(u"branch `"_s % label %
                                          u"` unavailable: none of its endpoints can be chosen"_s);
        if (total <= 0.0) {
            step(u"canary"_s, why % u"; no other branch can take its share"_s);
            return side;
        }
        double target = unitInterval(splitHash(key, rule.seed ^ ~kBranchMoveSeed)) * total;
        qsizetype moved = side;
        for (qsizetype i = 0; i < rule.split.size(); ++i) {
            if (shares[i] <= 0.0)
                continue;
            moved = i;
            if (target < shares[i])
                break;
            target -= shares[i];
        }
        decision.canaryMovedFrom = label;
        decision.canarySide = rule.split[moved].target.label;
        step(u"canary"_s, why % u", share moved to `"_s % rule.split[moved].target.label % u'`');
        return moved;
    }

    // A rule's split: the chosen branch, then, unless the split is strict, the endpoints of the
    // other branches by weight, as failover for a failed attempt. A branch at weight 0 is one an
    // operator turned off: it takes no failover either.
    void routeSplit(const CompiledRule &rule)
    {
        const SplitWeights weights = splitWeights(rule);
        const qsizetype side = pickCanary(rule, weights);
        routeTarget(rule.split[side].target, rule.strictSplit ? Promise::Kept : Promise::None);
        if (rule.strictSplit)
            return;
        QVarLengthArray<qsizetype, 8> others;
        for (qsizetype i = 0; i < rule.split.size(); ++i) {
            if (i != side && weights[i] > 0)
                others.append(i);
        }
        std::stable_sort(others.begin(), others.end(),
                         [&](qsizetype a, qsizetype b) { return weights[a] > weights[b]; });
        qsizetype added = 0;
        for (qsizetype i : others) {
            const CompiledTarget &other = rule.split[i].target;
            const bool tier = other.kind == config::RouteTarget::Kind::Tier && other.tier != kAuto;
            added += addProviders(branchEndpoints(other), CandidateRole::OtherBranch,
                                  tier ? other.tier : QString(), 0, PoolOrder::ByScore,
                                  u"branch `"_s % other.label % u'`');
        }
        if (added > 0)
            step(u"failover"_s, u"then "_s % QString::number(added) %
                                    u" endpoint(s) of the split's other branches"_s);
    }

    void routeTier(const QString &pinnedTier)
    {
        QString tier = pinnedTier;
        if (pinnedTier == kAuto) {
            const TierChoice choice = chooseTier(context, config.routing);
            decision.cascadeStep = choice.step;
            decision.complexityScore = choice.complexityScore;
            step(u"cascade"_s, choice.reason);
            tier = choice.tier;
        } else {
            step(u"tier"_s, u"the rule pins tier "_s % tier);
        }
        decision.tier = tier;
        const bool light = tier == kLight;
        const qsizetype primary =
            addProviders(light ? compiled.lightPool : compiled.proPool, CandidateRole::Primary,
                         tier, 0, PoolOrder::ChooseFirst, u"tier "_s % tier);
        if (primary == 0)
            step(u"tier"_s,
                 u"tier "_s % tier % u" is degraded: none of its endpoints can be chosen"_s);
        if (light) {
            const qsizetype added = addProviders(compiled.proPool, CandidateRole::CrossTier, kPro,
                                                 0, PoolOrder::ByScore, u"tier pro"_s);
            if (added > 0)
                step(u"failover"_s,
                     u"then "_s % QString::number(added) % u" endpoint(s) of tier pro"_s);
        } else if (context.fallbackLevel >= RequestContext::kLighterModel) {
            const qsizetype added =
                addProviders(compiled.lightPool, CandidateRole::LighterModel, kLight,
                             RequestContext::kLighterModel, PoolOrder::ByScore, u"tier light"_s);
            if (added > 0)
                step(u"failover"_s,
                     u"then %1 endpoint(s) of tier light as a lighter model (degradation level "
                     u"1; the request allows up to %2)"_s.arg(added)
                         .arg(context.fallbackLevel));
        } else {
            step(u"failover"_s, u"no lighter model: the request's fallback level is 0"_s);
        }
        addFallbackChain();
    }

    // Whether a provider or pool target is a promise about where a request may go (a rule keeping
    // sensitive traffic local, a strict split's branch): then no other tier or fallback chain
    // follows. A branch of a split that follows health promises nothing.
    enum class Promise { Kept, None };

    void routeTarget(const CompiledTarget &target, Promise promise = Promise::Kept)
    {
        if (target.kind == config::RouteTarget::Kind::Tier) {
            routeTier(target.tier);
            return;
        }
        const QString name = target.kind == config::RouteTarget::Kind::Provider
                                 ? u"provider `%1`"_s.arg(target.label)
                                 : u"pool %1"_s.arg(target.label);
        if (promise == Promise::Kept)
            step(u"target"_s, u"pinned to %1; no failover beyond it"_s.arg(name));
        else
            step(u"target"_s, u"split branch %1"_s.arg(name));
        addProviders(target.pool, CandidateRole::Primary, QString(), 0, PoolOrder::ChooseFirst,
                     name);
    }

    void routeIntent()
    {
        const health::AgentRegistry &agents = router.m_health.agents();
        const QList<const health::AgentRecord *> offering = agents.offering(context.intent);
        if (offering.isEmpty()) {
            decision.refusal = RouteDecision::Refusal::NoCandidate;
            step(u"intent"_s, u"no live, idle agent offers `%1` (%2 agent(s) registered)"_s.arg(
                                  context.intent, QString::number(agents.agents().size())));
            return;
        }
        step(u"intent"_s,
             u"%1 agent(s) offer `%2`"_s.arg(QString::number(offering.size()), context.intent));
        QVarLengthArray<EndpointProfile, 64> members;
        for (const health::AgentRecord *agent : offering) {
            const config::ProviderConfig &provider = providerConfig(agent->endpoint);
            members.append({agent->endpoint, provider.weight, provider.capacity,
                            double(provider.latencyObjective.count()),
                            stableHash(QStringView(provider.id))});
        }
        addPool(members, CandidateRole::Primary, QString(), 0, PoolOrder::ChooseFirst,
                config.routing.agents.scoring, u"agents offering `%1`"_s.arg(context.intent));
    }

    void routeRequest()
    {
        // A token count asks what the model's anthropic providers count, not for an answer:
        // no rule, tier or agent chooses who counts.
        if (context.operation == protocol::Operation::Embeddings ||
            context.operation == protocol::Operation::Completions ||
            context.operation == protocol::Operation::CountTokens) {
            routeByModelAlone();
        } else if (!context.intent.isEmpty()) {
            routeIntent();
        } else if (const CompiledRule *rule = matchingRule()) {
            matchedRule = rule;
            decision.rule = rule->name;
            const QString head =
                u'`' % rule->name % u"` (priority "_s % QString::number(rule->priority) % u')';
            step(u"rule"_s, rule->hasCondition ? QString(head % u" matched: "_s % rule->when.text())
                                               : QString(head % u" matches every request"_s));
            if (rule->split.isEmpty())
                routeTarget(rule->target);
            else
                routeSplit(*rule);
        } else {
            step(u"rule"_s, compiled.rules.isEmpty()
                                ? u"no rules configured: the model's providers are the pool"_s
                                : u"none of %1 rule(s) matched: the model's providers are the "
                                  u"pool"_s.arg(compiled.rules.size()));
            if (!addModelProviders())
                return;
            addFallbackChain();
        }
        if (decision.candidates.isEmpty() && decision.refusal == RouteDecision::Refusal::None) {
            decision.refusal = RouteDecision::Refusal::NoCandidate;
            step(u"refusal"_s, u"no endpoint can be chosen now"_s);
        }
        if (decision.refusal == RouteDecision::Refusal::None) {
            addErrorFallbacks();
            // Either the matched rule or the chosen tier turns it on.
            decision.continueStreams =
                (matchedRule && matchedRule->continueStreams) ||
                (decision.tier == kLight && compiled.lightContinuesStreams) ||
                (decision.tier == kPro && compiled.proContinuesStreams);
            addShadow();
        }
        if (decision.refusal != RouteDecision::Refusal::UnknownModel)
            addResponseCache();
    }

    // The matched rule's `cache:`, else the requested model's. An intent's request goes to an
    // agent, which may act on it: never answered from the cache. A token count costs nothing.
    void addResponseCache()
    {
        if (!context.intent.isEmpty() || context.operation == protocol::Operation::CountTokens)
            return;
        QString source;
        if (matchedRule && matchedRule->cache) {
            decision.cache = matchedRule->cache;
            source = u"rule `"_s % matchedRule->name % u'`';
        } else if (const auto found = compiled.cacheByModel.constFind(context.model);
                   found != compiled.cacheByModel.cend()) {
            decision.cache = *found;
            source = u"model `"_s % context.model % u'`';
        } else {
            return;
        }
        step(u"cache"_s,
             u"answers kept for %1 s (%2)"_s.arg(
                 QString::number(double(decision.cache->ttl.count()) / 1000.0), source));
    }

    // The matched rule's shadow, when this request's own draw falls under its share. Only chat
    // is mirrored: it is what a shadow compares, and the other operations have no chat form.
    void addShadow()
    {
        if (!matchedRule || matchedRule->shadowShare <= 0.0 ||
            !compiled.configured(matchedRule->shadowSlot))
            return;
        if (context.operation != protocol::Operation::Chat &&
            context.operation != protocol::Operation::Messages)
            return;
        const double shadowDraw =
            unitInterval(stableHash(QByteArrayView(context.requestId), kShadowSeed));
        if (shadowDraw >= matchedRule->shadowShare)
            return;
        const int slot = matchedRule->shadowSlot;
        const config::ProviderConfig &provider = *compiled.definitions[slot];
        RouteCandidate shadow;
        shadow.endpoint = slot;
        shadow.providerId = provider.id;
        shadow.upstreamModel = upstreamModelOf(slot, provider);
        shadow.reason = u"shadow of rule `"_s % matchedRule->name % u'`';
        step(u"shadow"_s, u"also sent to %1 as %2; its answer is only recorded"_s.arg(
                              provider.id, shadow.upstreamModel));
        decision.shadow = std::move(shadow);
    }

    // Fallbacks by error, for the operations a rule routes (embeddings and legacy completions are
    // tied to their model's vectors and prompt format): for each error, the matched rule's list,
    // else the requested model's, else the tier's.
    void addErrorFallbacks()
    {
        if (context.operation == protocol::Operation::Embeddings ||
            context.operation == protocol::Operation::Completions ||
            context.operation == protocol::Operation::CountTokens)
            return;
        const config::ErrorFallbacks *model = nullptr;
        if (const auto found = compiled.fallbacksByModel.constFind(context.model);
            found != compiled.fallbacksByModel.cend())
            model = &*found;
        const config::ErrorFallbacks *tier = decision.tier == kLight ? &compiled.lightFallbacks
                                             : decision.tier == kPro ? &compiled.proFallbacks
                                                                     : nullptr;
        // Most requests have no fallback by error anywhere: their sources are named (three
        // strings made) only when one has a model to name.
        const config::ErrorFallbacks *const sources[] = {
            matchedRule ? &matchedRule->fallbacks : nullptr, model, tier};
        const auto sourceName = [&](int source) {
            return source == 0   ? QString(u"rule `"_s % matchedRule->name % u'`')
                   : source == 1 ? QString(u"model `"_s % context.model % u'`')
                                 : QString(u"tier "_s % decision.tier);
        };
        QStringList said;
        for (const config::FallbackError error : {config::FallbackError::ContextLengthExceeded,
                                                  config::FallbackError::ContentFiltered}) {
            for (int source = 0; source < 3; ++source) {
                if (!sources[source] || sources[source]->models(error).isEmpty())
                    continue;
                decision.errorFallbacks.models(error) = sources[source]->models(error);
                said.append(config::fallbackErrorName(error) % u" -> "_s %
                            sources[source]->models(error).join(u", "_s) % u" ("_s %
                            sourceName(source) % u')');
                break;
            }
        }
        if (!said.isEmpty())
            step(u"fallbacks"_s,
                 u"on "_s % said.join(u"; "_s) % u"; each fallback model at most once"_s);
    }

    // The providers that list the requested model, ranked; false (a refusal) when none does.
    bool addModelProviders()
    {
        if (!servers) {
            decision.refusal = RouteDecision::Refusal::UnknownModel;
            step(u"model"_s, u"no provider serves model `%1`"_s.arg(context.model));
            return false;
        }
        // Concatenated, not QString::arg, which parses its pattern: every request by model alone
        // takes this step.
        addProviders(servers->providers, CandidateRole::Primary, QString(), 0,
                     PoolOrder::ChooseFirst, u"model `"_s % context.model % u'`');
        return true;
    }

    // Rules, tiers and canary splits choose between chat models, and agents speak chat: an
    // embeddings model is tied to its vector space and a completions model to its prompt
    // format, so these go to the providers that serve the model, ranked as any pool is.
    void routeByModelAlone()
    {
        const QString path = protocol::operationPath(context.operation);
        step(u"rule"_s,
             u"%1 goes by model: rules, tiers and canary splits are for chat"_s.arg(path));
        if (!addModelProviders())
            return;
        if (context.operation == protocol::Operation::Embeddings)
            addSameDimensionEmbeddings();
    }

    // The ladder's lighter model for embeddings: another embeddings model whose vectors have the
    // same configured dimensions, and no other (a vector of another length fits no index).
    void addSameDimensionEmbeddings()
    {
        if (context.fallbackLevel < RequestContext::kLighterModel || servers->dimensions == 0)
            return;
        QStringList models;
        for (auto it = compiled.serversByModel.cbegin(); it != compiled.serversByModel.cend();
             ++it) {
            if (&*it != servers && it->dimensions == servers->dimensions &&
                (it->endpoints & protocol::operationBit(protocol::Operation::Embeddings)))
                models.append(it.key());
        }
        models.sort(); // a hash's order differs between runs; the decision must not
        for (const QString &model : models) {
            const ModelServers &lighter = compiled.serversByModel[model];
            const qsizetype before = decision.candidates.size();
            addProviders(lighter.providers, CandidateRole::LighterModel, QString(),
                         RequestContext::kLighterModel, PoolOrder::ByScore,
                         u"model `%1`"_s.arg(model));
            for (qsizetype i = before; i < decision.candidates.size(); ++i) {
                RouteCandidate &candidate = decision.candidates[i];
                candidate.upstreamModel = lighter.upstreamNames.value(candidate.endpoint);
            }
            if (decision.candidates.size() > before)
                step(u"failover"_s, u"then model `%1` as a lighter model (degradation level 1): "
                                    u"its embeddings have the same %2 dimensions"_s.arg(
                                        model, QString::number(servers->dimensions)));
        }
    }

    const CompiledRule *matchingRule() const
    {
        for (const CompiledRule &rule : compiled.rules) {
            if (!rule.hasCondition || rule.when.matches(context))
                return &rule;
        }
        return nullptr;
    }
};

Router::Router(const config::ConfigStore &store, health::HealthRegistry &health, QObject *parent)
    : QObject(parent), m_store(store), m_health(health)
{
    compile(store.current());
    connect(&store, &config::ConfigStore::replaced, this, &Router::compile);
    m_agentSweep.setInterval(kAgentSweepInterval);
    connect(&m_agentSweep, &QTimer::timeout, this, &Router::expireAgents);
}

void Router::start()
{
    m_agentSweep.start();
}

Router::~Router() = default;

void Router::compile(const std::shared_ptr<const config::Config> &snapshot)
{
    m_table = std::make_shared<const RoutingTable>(snapshot, m_health);
    // Live canary weights outlive a new snapshot only when their rule keeps its branches.
    for (auto it = m_canaryOverrides.begin(); it != m_canaryOverrides.end();) {
        const CompiledRule *after = m_table->compiled().rule(it.key());
        it = after && after->splitTargets == it->targets ? std::next(it)
                                                         : m_canaryOverrides.erase(it);
    }
}

RouteDecision Router::route(const RoutingTable &table, const RequestContext &context) const
{
    DecisionBuilder builder(*this, table, context);
    builder.routeRequest();
    return std::move(builder.decision);
}

Explanation Router::explain(const RoutingTable &table, RequestContext context,
                            bool stripsRoutingObject) const
{
    Explanation explanation;
    explanation.context = std::move(context);
    // The same id rule as live traffic, so the same x-request-id draws the same endpoint.
    if (explanation.context.requestId.isEmpty())
        explanation.context.requestId = telemetry::newRequestId();
    explanation.decision = route(table, explanation.context);
    explanation.stripsRoutingObject = stripsRoutingObject;
    return explanation;
}

QList<Router::ModelListing> Router::models() const
{
    QList<ModelListing> models;
    const RoutingTable::Compiled &compiled = m_table->compiled();
    for (auto it = compiled.serversByModel.cbegin(); it != compiled.serversByModel.cend(); ++it) {
        // Servers are in file order: the provider listed first owns the model in /v1/models.
        models.append({it.key(), m_health.providerConfig(it->providers.first()).id, it->endpoints});
    }
    std::sort(models.begin(), models.end(),
              [](const ModelListing &a, const ModelListing &b) { return a.id < b.id; });
    return models;
}

std::optional<protocol::Operations> Router::modelEndpoints(const RoutingTable &table,
                                                           const QString &model)
{
    const auto found = table.compiled().serversByModel.constFind(model);
    if (found == table.compiled().serversByModel.cend())
        return std::nullopt;
    return found->endpoints;
}

QList<CanarySplitState> Router::canarySplits() const
{
    QList<CanarySplitState> splits;
    for (const CompiledRule &rule : m_table->compiled().rules) {
        if (rule.split.isEmpty())
            continue;
        CanarySplitState state;
        state.rule = rule.name;
        state.key = rule.splitKey;
        const auto override = m_canaryOverrides.constFind(rule.name);
        state.overridden = override != m_canaryOverrides.cend();
        for (qsizetype i = 0; i < rule.split.size(); ++i) {
            const int configured = rule.split[i].weight;
            state.branches.append({rule.split[i].target.label, configured,
                                   state.overridden ? override->weights.value(i) : configured});
        }
        splits.append(state);
    }
    return splits;
}

QString Router::setCanaryWeights(const QString &ruleName, const QList<int> &weights)
{
    const CompiledRule *rule = m_table->compiled().rule(ruleName);
    if (!rule || rule->split.isEmpty())
        return u"no route named `%1` has a split"_s.arg(ruleName);
    if (weights.size() != rule->split.size())
        return u"route `%1` splits %2 ways, got %3 weight(s)"_s.arg(
            ruleName, QString::number(rule->split.size()), QString::number(weights.size()));
    qint64 total = 0;
    for (int weight : weights) {
        if (weight < 0)
            return u"split weight must be at least 0, got %1"_s.arg(weight);
        total += weight;
    }
    if (total <= 0)
        return u"split weights must add up to more than 0"_s;
    m_canaryOverrides.insert(ruleName, {rule->splitTargets, weights});
    qCInfo(lcRouting).noquote() << "canary" << ruleName << "weights set to" << weights;
    emit canaryWeightsChanged(ruleName);
    return {};
}

bool Router::resetCanaryWeights(const QString &ruleName)
{
    const CompiledRule *rule = m_table->compiled().rule(ruleName);
    if (!rule || rule->split.isEmpty())
        return false;
    if (m_canaryOverrides.remove(ruleName) > 0)
        emit canaryWeightsChanged(ruleName);
    return true;
}

std::optional<AgentRefusal> Router::registerAgent(const health::AgentRegistration &registration)
{
    using Reason = AgentRefusal::Reason;
    static const QRegularExpression idPattern(u"^[A-Za-z0-9._-]+$"_s);
    if (registration.id.isEmpty() || registration.id.size() > kLongestAgentIdBytes ||
        !idPattern.match(registration.id).hasMatch())
        return AgentRefusal{Reason::Invalid,
                            u"`id` must be 1 to 64 letters, digits, `.`, `_` or `-`"_s};
    if (m_store.config().provider(registration.id))
        return AgentRefusal{Reason::IdTaken,
                            u"`%1` is a configured provider; an agent needs an id of its own"_s.arg(
                                registration.id)};
    const QUrl &url = registration.baseUrl;
    if (!url.isValid() || (url.scheme() != u"http"_s && url.scheme() != u"https"_s) ||
        url.host().isEmpty())
        return AgentRefusal{Reason::Invalid, u"`base_url` must be an http or https URL such as "
                                             u"`http://127.0.0.1:9001/v1`"_s};
    if (registration.capabilities.isEmpty())
        return AgentRefusal{Reason::Invalid, u"`capabilities` must list at least one tag"_s};
    for (const QString &tag : registration.capabilities) {
        if (!isCapabilityTag(tag))
            return AgentRefusal{Reason::Invalid,
                                u"capability `%1` must be `domain/action/attribute`, each a word "
                                u"of letters, digits, `-`, `_`, `.` or `:`"_s.arg(tag)};
    }
    if (registration.capacity < 0)
        return AgentRefusal{Reason::Invalid, u"`capacity` must be at least 1"_s};
    for (const QString &model : registration.models) {
        if (model.isEmpty())
            return AgentRefusal{Reason::Invalid, u"`models` must not hold an empty name"_s};
    }

    config::ProviderConfig provider;
    provider.id = registration.id;
    provider.kind = config::ProviderKind::OpenAi;
    provider.baseUrl = registration.baseUrl;
    provider.capacity = registration.capacity > 0 ? registration.capacity
                                                  : m_store.config().routing.agents.defaultCapacity;
    provider.latencyObjective = std::chrono::milliseconds(qint64(kAgentLatencyObjectiveMs));
    for (const QString &model : registration.models)
        provider.models.append({model, model});

    // A re-registration with the same address keeps its endpoint and health history; a moved
    // agent is a new endpoint (calls in flight to the old address finish there).
    int index = -1;
    if (const health::AgentRecord *existing = m_health.agents().find(registration.id)) {
        const config::ProviderConfig &before = m_health.providerConfig(existing->endpoint);
        const bool same = before.baseUrl == provider.baseUrl &&
                          before.capacity == provider.capacity &&
                          registration.models == existing->registration.models;
        if (same)
            index = existing->endpoint;
        else
            m_health.retireProvider(existing->endpoint);
    }
    if (index < 0)
        index = m_health.addProvider(provider);
    m_health.agents().upsert(registration, index);
    qCInfo(lcRouting).noquote() << "agent" << registration.id << "registered at"
                                << registration.baseUrl.toString() << "offering"
                                << registration.capabilities.join(u", "_s);
    emit agentsChanged();
    return std::nullopt;
}

const health::AgentRegistry &Router::agents() const
{
    return m_health.agents();
}

std::optional<AgentRefusal> Router::agentHeartbeat(const QString &id, std::optional<bool> busy)
{
    if (!m_health.agents().heartbeat(id, busy))
        return AgentRefusal{AgentRefusal::Reason::Unknown,
                            u"no registered agent `%1`; register it again with POST "
                            u"/admin/v1/agents"_s.arg(id)};
    if (busy)
        emit agentsChanged();
    return std::nullopt;
}

std::optional<AgentRefusal> Router::removeAgent(const QString &id)
{
    const std::optional<health::AgentRecord> removed = m_health.agents().remove(id);
    if (!removed)
        return AgentRefusal{AgentRefusal::Reason::Unknown, u"no registered agent `%1`"_s.arg(id)};
    m_health.retireProvider(removed->endpoint);
    qCInfo(lcRouting).noquote() << "agent" << id << "deregistered";
    emit agentsChanged();
    return std::nullopt;
}

void Router::expireAgents()
{
    const QList<health::AgentRecord> expired = m_health.agents().expire();
    for (const health::AgentRecord &agent : expired) {
        m_health.retireProvider(agent.endpoint);
        qCInfo(lcRouting).noquote()
            << "agent" << agent.registration.id << "removed: no heartbeat for"
            << m_health.agents().ttl().count() << "ms";
    }
    if (!expired.isEmpty())
        emit agentsChanged();
}

} // namespace switchyard::routing
