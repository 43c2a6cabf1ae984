#include "routing/gearbox.h"

#include "routing/number_text.h"

#include <algorithm>
#include <cmath>

namespace switchyard::routing {

using namespace Qt::StringLiterals;

namespace {

const QString kLight = u"light"_s;
const QString kPro = u"pro"_s;

double fraction(double value, int full)
{
    return full > 0 ? std::clamp(value / full, 0.0, 1.0) : 0.0;
}

} // namespace

ComplexityFeatures complexityFeatures(const RequestContext &context,
                                      const config::ComplexityConfig &config)
{
    ComplexityFeatures features;
    features.length = fraction(context.estimatedInputTokens, config.lengthTokensFull);
    // The first message is the question itself; every one after it is a turn of conversation.
    features.turns = fraction(std::max(0, context.messageCount - 1), config.turnsFull);
    features.tools = fraction(context.toolCount, config.toolsFull);
    features.codeBlocks = fraction(context.codeBlockCount, config.codeBlocksFull);
    return features;
}

int complexityScore(const ComplexityFeatures &features, const config::ComplexityConfig &config)
{
    const double totalWeight =
        config.lengthWeight + config.turnsWeight + config.toolsWeight + config.codeBlocksWeight;
    if (totalWeight <= 0.0)
        return 0;
    const double weighted =
        config.lengthWeight * features.length + config.turnsWeight * features.turns +
        config.toolsWeight * features.tools + config.codeBlocksWeight * features.codeBlocks;
    return int(std::lround(100.0 * weighted / totalWeight));
}

TierChoice chooseTier(const RequestContext &context, const config::RoutingConfig &config)
{
    TierChoice choice;
    if (!context.tierHint.isEmpty()) {
        choice.tier = context.tierHint;
        choice.step = CascadeStep::ExplicitHint;
        choice.reason = u"step 1: the x-switchyard-tier header asks for %1"_s.arg(choice.tier);
        return choice;
    }
    if (context.priority == u"high"_s) {
        choice.tier = kPro;
        choice.step = CascadeStep::ExplicitHint;
        choice.reason = u"step 1: priority high goes to pro"_s;
        return choice;
    }
    if (!context.task.isEmpty()) {
        const bool pro = config.gearbox.proTasks.contains(context.task);
        if (pro || config.gearbox.lightTasks.contains(context.task)) {
            choice.tier = pro ? kPro : kLight;
            choice.step = CascadeStep::TaskTag;
            choice.reason = u"step 2: task `%1` is a %2 task"_s.arg(context.task, choice.tier);
            return choice;
        }
    }
    const config::TierConfig *light = config.tier(kLight);
    if (light && light->maxInputTokens > 0 &&
        context.estimatedInputTokens > light->maxInputTokens) {
        choice.tier = kPro;
        choice.step = CascadeStep::InputTokens;
        choice.reason = u"step 3: about %1 input tokens, above light's maximum of %2"_s.arg(
            QString::number(context.estimatedInputTokens), QString::number(light->maxInputTokens));
        return choice;
    }
    const config::ComplexityConfig &complexity = config.gearbox.complexity;
    const ComplexityFeatures features = complexityFeatures(context, complexity);
    choice.complexityScore = complexityScore(features, complexity);
    const QString detail =
        u"complexity "_s % QString::number(choice.complexityScore) % u" (length "_s %
        twoDecimals(features.length) % u", turns "_s % twoDecimals(features.turns) % u", tools "_s %
        twoDecimals(features.tools) % u", code blocks "_s % twoDecimals(features.codeBlocks) % u')';
    if (choice.complexityScore >= complexity.threshold) {
        choice.tier = kPro;
        choice.step = CascadeStep::Complexity;
        choice.reason =
            u"step 4: %1 is at or above %2"_s.arg(detail, QString::number(complexity.threshold));
        return choice;
    }
    choice.tier = kLight;
    choice.step = CascadeStep::Default;
    choice.reason =
        u"step 5: %1 is below %2, so light"_s.arg(detail, QString::number(complexity.threshold));
    return choice;
}

} // namespace switchyard::routing
