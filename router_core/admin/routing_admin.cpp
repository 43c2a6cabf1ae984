#include "admin/routing_admin.h"

#include "config/route_rules_io.h"
#include "config/rule_validation.h"
#include "control/operator_commands.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <limits>
#include <optional>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

const QStringList kAgentFields{u"id"_s, u"base_url"_s, u"capabilities"_s, u"capacity"_s,
                               u"models"_s};

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

protocol::ApiError notFound(const QString &message, const QString &code)
{
    return {404, message, u"invalid_request_error"_s, {}, code, {}};
}

// The body as a JSON object; an empty body is an empty object when `emptyAllowed`.
std::variant<QJsonObject, protocol::ApiError> objectBody(const QByteArray &body, bool emptyAllowed)
{
    if (body.trimmed().isEmpty()) {
        if (emptyAllowed)
            return QJsonObject();
        return http::invalidAdminRequest(u"The request body must be a JSON object."_s);
    }
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return http::invalidAdminRequest(u"The request body must be a JSON object."_s);
    return document.object();
}

std::optional<protocol::ApiError> unknownField(const QJsonObject &object, const QStringList &known)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key()))
            return http::invalidAdminRequest(
                u"Unknown field '%1'; expected one of %2."_s.arg(it.key(), known.join(u", "_s)),
                it.key());
    }
    return std::nullopt;
}

std::optional<QStringList> stringList(const QJsonValue &value)
{
    if (!value.isArray())
        return std::nullopt;
    QStringList list;
    for (const QJsonValue &item : value.toArray()) {
        if (!item.isString())
            return std::nullopt;
        list.append(item.toString());
    }
    return list;
}

QJsonObject explanationJson(const routing::Explanation &explanation)
{
    return QJsonObject{
        {u"request_id"_s, QString::fromLatin1(explanation.context.requestId)},
        {u"decision"_s, decisionJson(explanation.decision)},
        {u"context"_s, contextJson(explanation.context)},
        {u"strips_routing_object"_s, explanation.stripsRoutingObject},
    };
}

http::AdminReply explain(const control::OperatorCommands &commands,
                         const http::AdminRequest &request)
{
    auto explained = commands.explain(request.headers, request.body);
    if (const auto *error = std::get_if<protocol::ApiError>(&explained))
        return http::AdminReply::error(*error);
    return http::AdminReply::json(
        QJsonDocument(explanationJson(std::get<routing::Explanation>(explained))));
}

// Rule problems as the admin API shows them: one 400 naming every problem, each with its
// place in the request body when it has one. `lead` says what did not happen.
http::AdminReply rulesRefused(const QList<config::ConfigError> &errors, const QString &lead)
{
    QStringList lines;
    QJsonArray problems;
    for (const config::ConfigError &error : errors) {
        const bool placed = error.where.line > 0;
        lines.append(placed ? error.toString() : error.message);
        QJsonObject problem{{u"message"_s, error.message}};
        if (placed) {
            problem.insert(u"line"_s, error.where.line);
            problem.insert(u"column"_s, error.where.column);
        }
        problems.append(problem);
    }
    protocol::ApiError refusal =
        http::invalidAdminRequest(u"%1: %2"_s.arg(lead, lines.join(u"; "_s)), u"routes"_s);
    refusal.code = u"invalid_routes"_s;
    http::AdminReply reply = http::AdminReply::error(refusal);
    QJsonObject body = reply.body.object();
    QJsonObject error = body.value(u"error"_s).toObject();
    error.insert(u"problems"_s, problems);
    body.insert(u"error"_s, error);
    reply.body = QJsonDocument(body);
    return reply;
}

QJsonObject routesJson(const RoutesState &state)
{
    QJsonArray splits;
    for (const routing::CanarySplitState &split : state.canarySplits)
        splits.append(canarySplitJson(split));
    return QJsonObject{{u"config_version"_s, qint64(state.configVersion)},
                       {u"routes"_s, config::routeRulesJson(state.rules())},
                       {u"canary"_s, splits}};
}

// PUT routes: {"routes": [...]} in the file's shape replaces the rules at once.
http::AdminReply applyRoutes(control::OperatorCommands &commands, const http::AdminRequest &request)
{
    const RoutesState live = commands.routesState();
    auto read = config::readRouteRules(request.body, u"request body"_s, *live.snapshot);
    if (const auto *errors = std::get_if<QList<config::ConfigError>>(&read))
        return rulesRefused(*errors, u"The rules were not applied"_s);
    // Who applied them, for the config version they become.
    const auto given = [&request](QByteArrayView header, const QString &query) {
        for (const auto &[name, value] : request.headers) {
            if (name.compare(header, Qt::CaseInsensitive) == 0)
                return QString::fromUtf8(value).trimmed();
        }
        return request.query.queryItemValue(query, QUrl::FullyDecoded);
    };
    const ConfigChangeOrigin origin{ConfigChangeSource::Api,
                                    given("x-switchyard-author", u"author"_s),
                                    given("x-switchyard-note", u"note"_s)};
    const QStringList problems =
        commands.applyRoutes(std::get<QList<config::RouteRule>>(read), origin);
    if (!problems.isEmpty()) {
        QList<config::ConfigError> errors;
        for (const QString &problem : problems)
            errors.append({{u"request body"_s, 0, 0}, problem});
        return rulesRefused(errors, u"The rules were not applied"_s);
    }
    return http::AdminReply::json(QJsonDocument(routesJson(commands.routesState())));
}

// POST routes/dry-run: {"request": {chat body}, "headers"?: {name: value}, "routes"?: [...]}.
// The live decision, and with `routes` the decision under those rules as the only difference.
http::AdminReply dryRun(const control::OperatorCommands &commands,
                        const http::AdminRequest &request)
{
    auto parsed = objectBody(request.body, false);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return http::AdminReply::error(*error);
    const QJsonObject body = std::get<QJsonObject>(parsed);
    if (auto error = unknownField(body, {u"request"_s, u"headers"_s, u"routes"_s, u"endpoint"_s}))
        return http::AdminReply::error(*error);
    if (!body.value(u"request"_s).isObject())
        return http::AdminReply::error(http::invalidAdminRequest(
            u"'request' must be a request object for the endpoint."_s, u"request"_s));
    // The request is for /v1/chat/completions unless `endpoint` names another client path.
    protocol::Operation operation = protocol::Operation::Chat;
    if (body.contains(u"endpoint"_s)) {
        const std::optional<protocol::Operation> named =
            protocol::operationFromPath(body.value(u"endpoint"_s).toString());
        if (!named)
            return http::AdminReply::error(http::invalidAdminRequest(
                u"'endpoint' must be one of /v1/chat/completions, /v1/responses, "
                u"/v1/embeddings and /v1/completions."_s,
                u"endpoint"_s));
        operation = *named;
    }
    control::HeaderList headers;
    if (body.contains(u"headers"_s)) {
        if (!body.value(u"headers"_s).isObject())
            return http::AdminReply::error(http::invalidAdminRequest(
                u"'headers' must be an object of header names to values."_s, u"headers"_s));
        const QJsonObject given = body.value(u"headers"_s).toObject();
        for (auto it = given.begin(); it != given.end(); ++it) {
            if (!it.value().isString())
                return http::AdminReply::error(http::invalidAdminRequest(
                    u"Header '%1' must have a string value."_s.arg(it.key()), u"headers"_s));
            headers.append({it.key().toLatin1(), it.value().toString().toUtf8()});
        }
    }
    const QByteArray chat =
        QJsonDocument(body.value(u"request"_s).toObject()).toJson(QJsonDocument::Compact);

    std::optional<QList<config::RouteRule>> rules;
    if (body.contains(u"routes"_s)) {
        auto read = config::readRouteRules(request.body, u"request body"_s,
                                           *commands.routesState().snapshot,
                                           {"request"_L1, "headers"_L1, "endpoint"_L1});
        if (const auto *errors = std::get_if<QList<config::ConfigError>>(&read))
            return rulesRefused(*errors, u"The edited rules cannot be tried"_s);
        rules = std::get<QList<config::RouteRule>>(std::move(read));
    }

    auto live = commands.explain(headers, chat, std::nullopt, operation);
    if (const auto *error = std::get_if<protocol::ApiError>(&live))
        return http::AdminReply::error(*error);
    const routing::Explanation &liveExplanation = std::get<routing::Explanation>(live);
    QJsonObject answer{{u"live"_s, explanationJson(liveExplanation)}};
    if (rules) {
        // The edited side draws with the live side's request id (the client's, or the one the
        // live side drew), so only the rules differ.
        control::HeaderList sameId = headers;
        sameId.removeIf([](const auto &header) {
            return header.first.compare("x-request-id", Qt::CaseInsensitive) == 0;
        });
        sameId.append({"x-request-id", liveExplanation.context.requestId});
        auto edited = commands.explain(sameId, chat, rules, operation);
        if (const auto *error = std::get_if<protocol::ApiError>(&edited))
            return http::AdminReply::error(*error);
        answer.insert(u"edited"_s, explanationJson(std::get<routing::Explanation>(edited)));
    }
    return http::AdminReply::json(QJsonDocument(answer));
}

// POST routes/impact: {"routes": [...]}, the edited rules in the file's shape.
http::AdminReply impact(const control::OperatorCommands &commands,
                        const http::AdminRequest &request)
{
    auto parsed = objectBody(request.body, false);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return http::AdminReply::error(*error);
    const QJsonObject body = std::get<QJsonObject>(parsed);
    if (auto error = unknownField(body, {u"routes"_s, u"examples_per_cell"_s}))
        return http::AdminReply::error(*error);
    int examplesPerCell = routing::ImpactPreview::kExamplesPerCell;
    if (body.contains(u"examples_per_cell"_s)) {
        const QJsonValue given = body.value(u"examples_per_cell"_s);
        const double number = given.toDouble(-1.0);
        if (!given.isDouble() || number < 0 ||
            number > routing::ImpactPreview::kMostExamplesPerCell ||
            number != double(qint64(number)))
            return http::AdminReply::error(http::invalidAdminRequest(
                u"'examples_per_cell' must be a whole number from 0 to %1."_s.arg(
                    routing::ImpactPreview::kMostExamplesPerCell),
                u"examples_per_cell"_s));
        examplesPerCell = int(number);
    }
    auto read = config::readRouteRules(request.body, u"request body"_s,
                                       *commands.routesState().snapshot, {"examples_per_cell"_L1});
    if (const auto *errors = std::get_if<QList<config::ConfigError>>(&read))
        return rulesRefused(*errors, u"The impact of the edited rules cannot be previewed"_s);
    auto previewed =
        commands.previewImpact(std::get<QList<config::RouteRule>>(read), examplesPerCell);
    if (const auto *error = std::get_if<protocol::ApiError>(&previewed))
        return http::AdminReply::error(*error);
    return http::AdminReply::json(
        QJsonDocument(impactJson(std::get<routing::ImpactPreview>(previewed))));
}

http::AdminReply canarySplits(const control::OperatorCommands &commands)
{
    QJsonArray splits;
    for (const routing::CanarySplitState &split : commands.canarySplits())
        splits.append(canarySplitJson(split));
    return http::AdminReply::json(QJsonDocument(QJsonObject{{u"splits"_s, splits}}));
}

http::AdminReply changeCanary(control::OperatorCommands &commands,
                              const http::AdminRequest &request)
{
    auto parsed = objectBody(request.body, false);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return http::AdminReply::error(*error);
    const QJsonObject body = std::get<QJsonObject>(parsed);
    if (auto error = unknownField(body, {u"rule"_s, u"weights"_s, u"reset"_s}))
        return http::AdminReply::error(*error);
    const QString rule = body.value(u"rule"_s).toString();
    if (rule.isEmpty())
        return http::AdminReply::error(
            http::invalidAdminRequest(u"'rule' must name a route with a split."_s, u"rule"_s));

    std::optional<routing::CanarySplitState> current;
    for (const routing::CanarySplitState &split : commands.canarySplits()) {
        if (split.rule == rule)
            current = split;
    }
    if (!current) {
        return http::AdminReply::error(notFound(
            u"No route `%1` with a split. GET /admin/v1/routes/canary lists them."_s.arg(rule),
            u"route_not_found"_s));
    }

    if (body.value(u"reset"_s).toBool()) {
        if (body.contains(u"weights"_s))
            return http::AdminReply::error(http::invalidAdminRequest(
                u"Give either 'weights' or 'reset', not both."_s, u"reset"_s));
        commands.resetCanaryWeights(rule);
    } else {
        const QJsonValue given = body.value(u"weights"_s);
        QList<int> weights;
        const auto asWeight = [](const QJsonValue &value) -> std::optional<int> {
            const double number = value.toDouble(-1.0);
            if (!value.isDouble() || number < 0 || number > std::numeric_limits<int>::max() ||
                number != double(qint64(number)))
                return std::nullopt;
            return int(number);
        };
        if (given.isArray()) {
            for (const QJsonValue &value : given.toArray()) {
                const auto weight = asWeight(value);
                if (!weight)
                    return http::AdminReply::error(http::invalidAdminRequest(
                        u"'weights' must hold whole numbers of at least 0."_s, u"weights"_s));
                weights.append(*weight);
            }
        } else if (given.isObject()) {
            const QJsonObject byTarget = given.toObject();
            QStringList targets;
            for (const routing::CanaryBranchState &branch : current->branches)
                targets.append(branch.target);
            for (auto it = byTarget.begin(); it != byTarget.end(); ++it) {
                if (!targets.contains(it.key()))
                    return http::AdminReply::error(http::invalidAdminRequest(
                        u"Route `%1` has no split target `%2`; its targets are %3."_s.arg(
                            rule, it.key(), targets.join(u", "_s)),
                        u"weights"_s));
            }
            for (const routing::CanaryBranchState &branch : current->branches) {
                // A target left out keeps the weight it has now.
                const auto weight = byTarget.contains(branch.target)
                                        ? asWeight(byTarget.value(branch.target))
                                        : std::optional<int>(branch.weight);
                if (!weight)
                    return http::AdminReply::error(http::invalidAdminRequest(
                        u"'weights' must hold whole numbers of at least 0."_s, u"weights"_s));
                weights.append(*weight);
            }
        } else {
            return http::AdminReply::error(http::invalidAdminRequest(
                u"'weights' must be an object of target: weight, or a list of weights "
                u"in the order of the split."_s,
                u"weights"_s));
        }
        const QString problem = commands.setCanaryWeights(rule, weights);
        if (!problem.isEmpty())
            return http::AdminReply::error(http::invalidAdminRequest(problem + u'.', u"weights"_s));
    }
    for (const routing::CanarySplitState &split : commands.canarySplits()) {
        if (split.rule == rule)
            return http::AdminReply::json(QJsonDocument(canarySplitJson(split)));
    }
    return http::AdminReply::json(QJsonDocument(QJsonObject()));
}

http::AdminReply agentReply(const control::OperatorCommands &commands, const QString &id,
                            int status = 200)
{
    const health::AgentRecord *agent = commands.agents().find(id);
    if (!agent)
        return http::AdminReply::error(
            notFound(u"No registered agent `%1`."_s.arg(id), u"agent_not_found"_s));
    return http::AdminReply::json(
        QJsonDocument(agentJson(*agent, commands.agents().isLive(*agent))), status);
}

http::AdminReply refusalReply(const routing::AgentRefusal &refusal)
{
    switch (refusal.reason) {
    case routing::AgentRefusal::Reason::Invalid:
        return http::AdminReply::error(http::invalidAdminRequest(refusal.message + u'.'));
    case routing::AgentRefusal::Reason::IdTaken:
        return http::AdminReply::error({409,
                                        refusal.message + u'.',
                                        u"invalid_request_error"_s,
                                        u"id"_s,
                                        u"agent_id_taken"_s,
                                        {}});
    case routing::AgentRefusal::Reason::Unknown:
        break;
    }
    return http::AdminReply::error(notFound(refusal.message + u'.', u"agent_not_found"_s));
}

} // namespace

QString cascadeStepName(routing::CascadeStep step)
{
    switch (step) {
    case routing::CascadeStep::NotUsed:
        return u"not_used"_s;
    case routing::CascadeStep::ExplicitHint:
        return u"explicit_hint"_s;
    case routing::CascadeStep::TaskTag:
        return u"task_tag"_s;
    case routing::CascadeStep::InputTokens:
        return u"input_tokens"_s;
    case routing::CascadeStep::Complexity:
        return u"complexity"_s;
    case routing::CascadeStep::Default:
        return u"default"_s;
    }
    return {};
}

QString candidateRoleName(routing::CandidateRole role)
{
    switch (role) {
    case routing::CandidateRole::Primary:
        return u"primary"_s;
    case routing::CandidateRole::CrossTier:
        return u"cross_tier"_s;
    case routing::CandidateRole::FallbackChain:
        return u"fallback_chain"_s;
    case routing::CandidateRole::LighterModel:
        return u"lighter_model"_s;
    case routing::CandidateRole::OtherBranch:
        return u"other_branch"_s;
    }
    return {};
}

QString refusalName(routing::RouteDecision::Refusal refusal)
{
    switch (refusal) {
    case routing::RouteDecision::Refusal::None:
        break;
    case routing::RouteDecision::Refusal::UnknownModel:
        return u"unknown_model"_s;
    case routing::RouteDecision::Refusal::NoCandidate:
        return u"no_candidate"_s;
    }
    return {};
}

QJsonObject decisionJson(const routing::RouteDecision &decision)
{
    QJsonArray candidates;
    for (const routing::RouteCandidate &candidate : decision.candidates) {
        candidates.append(QJsonObject{
            {u"provider"_s, candidate.providerId},
            {u"provider_index"_s, candidate.endpoint},
            {u"upstream_model"_s, candidate.upstreamModel},
            {u"tier"_s, textOrNull(candidate.tier)},
            {u"role"_s, candidateRoleName(candidate.role)},
            {u"degradation_level"_s, candidate.degradationLevel},
            {u"score"_s, candidate.score},
            {u"factors"_s, QJsonObject{{u"load"_s, candidate.factors.load},
                                       {u"latency"_s, candidate.factors.latency},
                                       {u"success"_s, candidate.factors.success},
                                       {u"weight"_s, candidate.factors.weight}}},
            {u"reason"_s, candidate.reason},
        });
    }
    QJsonArray steps;
    for (const routing::RouteStep &step : decision.steps)
        steps.append(QJsonObject{{u"stage"_s, step.stage}, {u"detail"_s, step.detail}});
    return QJsonObject{
        {u"model"_s, decision.model},
        {u"rule"_s, textOrNull(decision.rule)},
        {u"tier"_s, textOrNull(decision.tier)},
        {u"cascade_step"_s, cascadeStepName(decision.cascadeStep)},
        {u"complexity_score"_s, decision.complexityScore < 0
                                    ? QJsonValue(QJsonValue::Null)
                                    : QJsonValue(decision.complexityScore)},
        {u"canary_side"_s, textOrNull(decision.canarySide)},
        {u"canary_moved_from"_s, textOrNull(decision.canaryMovedFrom)},
        {u"refusal"_s, textOrNull(refusalName(decision.refusal))},
        {u"candidates"_s, candidates},
        {u"steps"_s, steps},
        {u"reason"_s, decision.reason()},
        // What a provider's context-length or content-filter error would move the request to.
        {u"error_fallbacks"_s, config::errorFallbacksJson(decision.errorFallbacks)},
    };
}

QJsonObject contextJson(const routing::RequestContext &context)
{
    QJsonObject meta;
    for (auto it = context.meta.cbegin(); it != context.meta.cend(); ++it)
        meta.insert(it.key(), it.value());
    return QJsonObject{
        {u"model"_s, context.model},
        {u"stream"_s, context.stream},
        {u"tenant"_s, textOrNull(context.tenant)},
        {u"user"_s, textOrNull(context.user)},
        {u"session"_s, textOrNull(context.session)},
        {u"priority"_s, textOrNull(context.priority)},
        {u"tier_hint"_s, textOrNull(context.tierHint)},
        {u"task"_s, textOrNull(context.task)},
        {u"sensitivity"_s, textOrNull(context.sensitivity)},
        {u"intent"_s, textOrNull(context.intent)},
        {u"max_cost"_s,
         context.maxCost ? QJsonValue(*context.maxCost) : QJsonValue(QJsonValue::Null)},
        {u"timeout_budget_ms"_s, context.timeoutBudget
                                     ? QJsonValue(qint64(context.timeoutBudget->count()))
                                     : QJsonValue(QJsonValue::Null)},
        {u"fallback_level"_s, context.fallbackLevel},
        {u"depth"_s, context.depth},
        {u"meta"_s, meta},
        {u"estimated_input_tokens"_s, context.estimatedInputTokens},
        {u"message_count"_s, context.messageCount},
        {u"tool_count"_s, context.toolCount},
        {u"code_block_count"_s, context.codeBlockCount},
        {u"character_count"_s, context.characterCount},
    };
}

namespace {

QJsonObject destinationJson(const routing::RouteDestination &destination)
{
    return QJsonObject{{u"rule"_s, textOrNull(destination.rule)},
                       {u"tier"_s, textOrNull(destination.tier)},
                       {u"provider"_s, textOrNull(destination.provider)},
                       {u"refusal"_s, textOrNull(refusalName(destination.refusal))}};
}

} // namespace

QJsonObject impactJson(const routing::ImpactPreview &preview)
{
    QJsonArray cells;
    for (const routing::ImpactCell &cell : preview.cells) {
        QJsonArray examples;
        for (const routing::ImpactExample &example : cell.examples) {
            examples.append(QJsonObject{{u"request_id"_s, QString::fromLatin1(example.requestId)},
                                        {u"model"_s, example.model},
                                        {u"user"_s, textOrNull(example.user)},
                                        {u"tenant"_s, textOrNull(example.tenant)},
                                        {u"session"_s, textOrNull(example.session)},
                                        {u"live"_s, decisionJson(example.live)},
                                        {u"edited"_s, decisionJson(example.edited)}});
        }
        cells.append(QJsonObject{
            {u"from"_s, destinationJson(cell.from)},
            {u"to"_s, destinationJson(cell.to)},
            {u"moves"_s, cell.moves()},
            {u"count"_s, cell.count},
            {u"share"_s, preview.sampled > 0 ? double(cell.count) / preview.sampled : 0.0},
            {u"examples"_s, examples},
        });
    }
    return QJsonObject{
        {u"sampled"_s, preview.sampled},
        {u"moved"_s, preview.moved},
        {u"newly_refused"_s, preview.newlyRefused},
        {u"oldest_ms"_s, preview.oldestMsSinceEpoch > 0 ? QJsonValue(preview.oldestMsSinceEpoch)
                                                        : QJsonValue(QJsonValue::Null)},
        {u"sample"_s, QJsonObject{{u"capacity"_s, preview.sampleCapacity},
                                  {u"window_minutes"_s, preview.windowMinutes},
                                  {u"per_minute"_s, preview.perMinute},
                                  {u"one_in"_s, preview.stride}}},
        {u"cells"_s, cells},
    };
}

QJsonObject canarySplitJson(const routing::CanarySplitState &split)
{
    QJsonArray branches;
    for (const routing::CanaryBranchState &branch : split.branches) {
        branches.append(QJsonObject{{u"target"_s, branch.target},
                                    {u"weight"_s, branch.weight},
                                    {u"configured_weight"_s, branch.configuredWeight}});
    }
    return QJsonObject{{u"rule"_s, split.rule},
                       {u"key"_s, config::splitKeyName(split.key)},
                       {u"overridden"_s, split.overridden},
                       {u"branches"_s, branches}};
}

QJsonObject agentJson(const health::AgentRecord &agent, bool live)
{
    const health::AgentRegistration &registration = agent.registration;
    return QJsonObject{
        {u"id"_s, registration.id},
        {u"base_url"_s, registration.baseUrl.toString()},
        {u"capabilities"_s, QJsonArray::fromStringList(registration.capabilities)},
        {u"capacity"_s, registration.capacity > 0 ? QJsonValue(registration.capacity)
                                                  : QJsonValue(QJsonValue::Null)},
        {u"models"_s, QJsonArray::fromStringList(registration.models)},
        {u"busy"_s, agent.busy},
        {u"live"_s, live},
        {u"provider_index"_s, agent.endpoint},
        {u"registered_at_ms"_s, agent.registeredAtMsSinceEpoch},
        {u"last_heartbeat_ms"_s, agent.lastHeartbeatMsSinceEpoch},
    };
}

std::variant<health::AgentRegistration, protocol::ApiError>
parseAgentRegistration(const QByteArray &body)
{
    auto parsed = objectBody(body, false);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return *error;
    const QJsonObject object = std::get<QJsonObject>(parsed);
    if (auto error = unknownField(object, kAgentFields))
        return *error;
    health::AgentRegistration registration;
    if (!object.value(u"id"_s).isString())
        return http::invalidAdminRequest(u"'id' must be a string."_s, u"id"_s);
    registration.id = object.value(u"id"_s).toString();
    if (!object.value(u"base_url"_s).isString())
        return http::invalidAdminRequest(
            u"'base_url' must be a string such as \"http://127.0.0.1:9001/v1\"."_s, u"base_url"_s);
    registration.baseUrl = QUrl(object.value(u"base_url"_s).toString(), QUrl::StrictMode);
    const auto capabilities = stringList(object.value(u"capabilities"_s));
    if (!capabilities)
        return http::invalidAdminRequest(
            u"'capabilities' must be a list of \"domain/action/attribute\" tags."_s,
            u"capabilities"_s);
    registration.capabilities = *capabilities;
    if (object.contains(u"capacity"_s)) {
        const QJsonValue capacity = object.value(u"capacity"_s);
        const double value = capacity.toDouble(-1.0);
        if (!capacity.isDouble() || value < 1 || value > std::numeric_limits<int>::max() ||
            value != double(qint64(value)))
            return http::invalidAdminRequest(u"'capacity' must be a whole number of at least 1."_s,
                                             u"capacity"_s);
        registration.capacity = int(value);
    }
    if (object.contains(u"models"_s)) {
        const auto models = stringList(object.value(u"models"_s));
        if (!models)
            return http::invalidAdminRequest(u"'models' must be a list of model names."_s,
                                             u"models"_s);
        registration.models = *models;
    }
    return registration;
}

void registerRoutingAdmin(http::AdminEndpoints &api, control::OperatorCommands &commands)
{
    control::OperatorCommands *target = &commands;
    api.add(Method::Post, u"route/explain"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                return explain(*target, request);
            });
    api.add(Method::Get, u"routes"_s, [target](const http::AdminRequest &, const QStringList &) {
        return http::AdminReply::json(QJsonDocument(routesJson(target->routesState())));
    });
    api.add(Method::Put, u"routes"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                return applyRoutes(*target, request);
            });
    api.add(Method::Post, u"routes/dry-run"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                return dryRun(*target, request);
            });
    api.add(Method::Post, u"routes/impact"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                return impact(*target, request);
            });
    api.add(Method::Get, u"routes/canary"_s,
            [target](const http::AdminRequest &, const QStringList &) {
                return canarySplits(*target);
            });
    api.add(Method::Post, u"routes/canary"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                return changeCanary(*target, request);
            });
    api.add(Method::Get, u"agents"_s, [target](const http::AdminRequest &, const QStringList &) {
        QJsonArray agents;
        for (const health::AgentRecord &agent : target->agents().agents())
            agents.append(agentJson(agent, target->agents().isLive(agent)));
        return http::AdminReply::json(QJsonDocument(QJsonObject{{u"agents"_s, agents}}));
    });
    api.add(Method::Post, u"agents"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                auto parsed = parseAgentRegistration(request.body);
                if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
                    return http::AdminReply::error(*error);
                const auto &registration = std::get<health::AgentRegistration>(parsed);
                const bool known = target->agents().find(registration.id) != nullptr;
                if (auto refusal = target->registerAgent(registration))
                    return refusalReply(*refusal);
                return agentReply(*target, registration.id, known ? 200 : 201);
            });
    api.add(Method::Post, u"agents/{}/heartbeat"_s,
            [target](const http::AdminRequest &request, const QStringList &captures) {
                auto parsed = objectBody(request.body, true);
                if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
                    return http::AdminReply::error(*error);
                const QJsonObject body = std::get<QJsonObject>(parsed);
                if (auto error = unknownField(body, {u"busy"_s}))
                    return http::AdminReply::error(*error);
                std::optional<bool> busy;
                if (body.contains(u"busy"_s)) {
                    if (!body.value(u"busy"_s).isBool())
                        return http::AdminReply::error(http::invalidAdminRequest(
                            u"'busy' must be true or false."_s, u"busy"_s));
                    busy = body.value(u"busy"_s).toBool();
                }
                if (auto refusal = target->agentHeartbeat(captures[0], busy))
                    return refusalReply(*refusal);
                return agentReply(*target, captures[0]);
            });
    api.add(Method::Delete, u"agents/{}"_s,
            [target](const http::AdminRequest &, const QStringList &captures) {
                if (auto refusal = target->removeAgent(captures[0]))
                    return refusalReply(*refusal);
                return http::AdminReply::json(
                    QJsonDocument(QJsonObject{{u"id"_s, captures[0]}, {u"removed"_s, true}}));
            });
}

} // namespace switchyard::admin
