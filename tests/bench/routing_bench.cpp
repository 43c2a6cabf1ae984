// Routing benchmark: what one routing decision costs with 100 rules and 50 endpoints, the figure
// docs/benchmarks.md records. Runs the real Router on a real HealthRegistry whose endpoints have
// traffic history, so scoring reads measured latency and success. Single-threaded, like the
// engine; prints a Markdown table. A measurement, never a pass/fail test.
//
//   routing_bench [--iterations N]

#include "config/config_loader.h"
#include "health/health_registry.h"
#include "logging/log_line.h"
#include "protocol/chat_request.h"
#include "routing/request_context.h"
#include "routing/router.h"
#include "telemetry/request_log.h"
#include "thread_cpu.h"

#include <QCoreApplication>
#include <QLoggingCategory>
#include <QStringList>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace Qt::StringLiterals;
using namespace switchyard;

namespace {

constexpr int kEndpoints = 50;
constexpr int kRules = 100;
constexpr int kRuns = 7; // the median run is reported

// 50 endpoints, 25 per tier; 100 rules of mixed kinds, most of which the measured requests pass
// over, so the matcher does real work before the last rules decide.
QByteArray benchConfig()
{
    QByteArray yaml = "providers:\n";
    for (int i = 0; i < kEndpoints; ++i) {
        yaml += "  - {id: endpoint-" + QByteArray::number(i) +
                ", kind: openai, base_url: http://127.0.0.1:9/v1, models: [model-" +
                QByteArray::number(i % 5) + "], weight: " + QByteArray::number(1 + i % 3) +
                ", capacity: 64}\n";
    }
    QByteArray light;
    QByteArray pro;
    for (int i = 0; i < kEndpoints; ++i) {
        QByteArray &pool = i % 2 == 0 ? light : pro;
        pool += QByteArray(pool.isEmpty() ? "" : ", ") + "endpoint-" + QByteArray::number(i);
    }
    yaml += "tiers:\n  light: {pool: [" + light + "]}\n  pro: {pool: [" + pro + "]}\n";
    yaml += "fallback_chain: [endpoint-0, endpoint-1, endpoint-2]\n";
    yaml += "routes:\n";
    for (int i = 0; i < kRules - 4; ++i) {
        const QByteArray n = QByteArray::number(i);
        yaml += "  - name: rule-" + n + "\n    priority: " + QByteArray::number(1000 - i) + "\n";
        switch (i % 4) {
        case 0:
            yaml += "    when: {all: [{field: tenant, eq: tenant-" + n +
                    "}, {field: model, glob: \"model-*\"}]}\n";
            break;
        case 1:
            yaml += "    when: {field: user, in: [u-" + n + "a, u-" + n + "b, u-" + n + "c]}\n";
            break;
        case 2:
            yaml += "    when: {any: [{field: header.x-team, eq: team-" + n +
                    "}, {field: meta.app, eq: app-" + n + "}]}\n";
            break;
        default:
            yaml += "    when: {all: [{field: tokens.input, gt: " + QByteArray::number(100000 + i) +
                    "}, {not: {field: sensitivity, eq: low}}]}\n";
            break;
        }
        yaml += "    to: {pool: [endpoint-" + QByteArray::number(i % kEndpoints) + "]}\n";
    }
    yaml +=
        "  - name: regex-rule\n    priority: 5\n"
        "    when: {field: model, regex: \"model-[0-9]+-(preview|beta)\"}\n"
        "    to: {tier: pro}\n"
        "  - name: canary\n    priority: 4\n    when: {field: meta.canary, exists: true}\n"
        "    to: {split: [{target: light, weight: 95}, {target: pro, weight: 5}], key: user}\n"
        "  - name: pinned-pool\n    priority: 3\n    when: {field: header.x-pin, exists: true}\n"
        "    to: {pool: [";
    for (int i = 0; i < kEndpoints; ++i)
        yaml += QByteArray(i ? ", " : "") + "endpoint-" + QByteArray::number(i);
    yaml += "]}\n  - name: default\n    priority: 0\n    to: {tier: auto}\n";
    return yaml;
}

struct Scenario {
    const char *name;
    routing::RequestContext context;
};

double nanosecondsPerDecision(const routing::Router &router, const routing::RequestContext &base,
                              int iterations)
{
    std::vector<double> runs;
    routing::RequestContext context = base;
    std::size_t sink = 0;
    for (int run = 0; run < kRuns; ++run) {
        const double start = threadCpuNanoseconds();
        for (int i = 0; i < iterations; ++i) {
            // A fresh request id each time, as live traffic has: the draw changes, the work not.
            context.requestId = "req-" + QByteArray::number(i);
            const routing::RouteDecision decision = router.route(context);
            sink += std::size_t(decision.candidates.size());
        }
        runs.push_back((threadCpuNanoseconds() - start) / iterations);
    }
    if (sink == 0)
        std::fprintf(stderr, "routing_bench: no candidates were produced\n");
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

double nanosecondsPerContext(const QByteArray &body,
                             const QList<QPair<QByteArray, QByteArray>> &headers, int iterations)
{
    std::vector<double> runs;
    std::size_t sink = 0;
    for (int run = 0; run < kRuns; ++run) {
        const double start = threadCpuNanoseconds();
        for (int i = 0; i < iterations; ++i) {
            auto parsed = protocol::parseChatRequest(body);
            const auto &chat = std::get<protocol::ChatRequest>(parsed);
            auto built = routing::buildRequestContext(headers, chat);
            sink += std::size_t(std::get<routing::RequestContext>(built).estimatedInputTokens);
        }
        runs.push_back((threadCpuNanoseconds() - start) / iterations);
    }
    if (sink == 0)
        std::fprintf(stderr, "routing_bench: no tokens were estimated\n");
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

// The request log's line for one finished request: built and formatted as the process's handler
// does, then dropped instead of written, so the figure is the line's own cost, not stderr's.
logging::LogFormat g_benchFormat = logging::LogFormat::Text;
std::size_t g_formattedBytes = 0;

void formatAndDrop(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    g_formattedBytes +=
        std::size_t(logging::formatLine(g_benchFormat, type, context, message).size());
}

double nanosecondsPerRequestLine(logging::LogFormat format, logging::LogLevel level, int iterations)
{
    telemetry::Trace trace;
    trace.requestId = "3f2a9c1e-5b7d-4e8f-a1b2-c3d4e5f60718";
    trace.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    trace.endpoint = u"/v1/chat/completions"_s;
    trace.tenant = u"acme"_s;
    trace.model = u"model-1"_s;
    trace.route = u"default"_s;
    trace.tier = u"light"_s;
    trace.provider = u"endpoint-7"_s;
    trace.attempts = 1;
    trace.status = 200;
    trace.outcome = u"ok"_s;
    trace.totalMicros = 812345;
    trace.timeToFirstByteMicros = 120456;
    trace.inputTokens = 57;
    trace.outputTokens = 24;
    trace.streamed = true;

    g_benchFormat = format;
    QLoggingCategory::setFilterRules(logging::filterRules(level));
    const QtMessageHandler previous = qInstallMessageHandler(formatAndDrop);
    std::vector<double> runs;
    for (int run = 0; run < kRuns; ++run) {
        const double start = threadCpuNanoseconds();
        for (int i = 0; i < iterations; ++i)
            telemetry::requestLog().traceFinished(trace);
        runs.push_back((threadCpuNanoseconds() - start) / iterations);
    }
    qInstallMessageHandler(previous);
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(u"switchyard.*=false"_s);
    int iterations = 20000;
    const QStringList arguments = app.arguments();
    const qsizetype at = arguments.indexOf(u"--iterations"_s);
    if (at >= 0 && at + 1 < arguments.size())
        iterations = std::max(1, arguments[at + 1].toInt());

    config::LoadResult loaded =
        config::loadConfigText(benchConfig(), u"routing bench"_s,
                               [](const QString &) { return std::optional<QByteArray>(); });
    if (!loaded.ok()) {
        std::fprintf(stderr, "routing_bench: %s\n", qPrintable(loaded.errors.first().toString()));
        return 1;
    }
    const config::ConfigStore store(std::move(*loaded.config));
    health::HealthRegistry health(store);
    // Traffic history, so every factor of the score is measured rather than neutral.
    for (int i = 0; i < kEndpoints; ++i) {
        for (int call = 0; call < 20; ++call) {
            health.callStarted(i);
            health.callFinished(
                i, call % 10 == 0 ? health::CallOutcome::CallFailure : health::CallOutcome::Success,
                100.0 + 7 * i + call, -1.0);
        }
        for (int open = 0; open < i % 4; ++open)
            health.callStarted(i);
    }
    routing::Router router(store, health);

    routing::RequestContext base;
    base.model = u"model-1"_s;
    base.tenant = u"acme"_s;
    base.user = u"alice"_s;
    base.priority = u"normal"_s;
    base.estimatedInputTokens = 900;
    base.messageCount = 3;
    base.headers = {{"content-type", "application/json"}, {"x-team", "blue"}};

    std::vector<Scenario> scenarios;
    scenarios.push_back({"100 rules evaluated, cascade to light: 25 ranked + 25 cross-tier", base});
    {
        routing::RequestContext context = base;
        context.session = u"conversation-42"_s;
        scenarios.push_back({"same, with session affinity", context});
    }
    {
        routing::RequestContext context = base;
        context.meta.insert(u"canary"_s, u"1"_s);
        scenarios.push_back({"98 rules, then a canary split to a tier", context});
    }
    {
        routing::RequestContext context = base;
        context.headers.append(qMakePair("x-pin"_ba, "yes"_ba));
        scenarios.push_back({"99 rules, then a pinned pool of 50", context});
    }
    {
        routing::RequestContext context = base;
        context.tenant = u"tenant-0"_s;
        scenarios.push_back({"first rule matches: a pinned provider", context});
    }

    std::printf("| scenario | candidates | CPU ns per decision |\n| --- | ---: | ---: |\n");
    for (const Scenario &scenario : scenarios) {
        routing::RequestContext context = scenario.context;
        context.requestId = "warm-up";
        const qsizetype candidates = router.route(context).candidates.size();
        nanosecondsPerDecision(router, scenario.context, iterations / 10);
        std::printf("| %s | %lld | %.0f |\n", scenario.name, static_cast<long long>(candidates),
                    nanosecondsPerDecision(router, scenario.context, iterations));
    }

    const QByteArray body =
        R"({"model":"model-1","stream":true,"messages":[{"role":"system","content":"You are a )"
        R"(helpful assistant."},{"role":"user","content":"Summarise this: the quick brown fox )"
        R"(jumps over the lazy dog. 你好世界。"}],"switchyard":{"app":"bench"}})";
    const QList<QPair<QByteArray, QByteArray>> headers{{"content-type", "application/json"},
                                                       {"x-switchyard-tenant", "acme"},
                                                       {"x-switchyard-user", "alice"},
                                                       {"x-switchyard-priority", "normal"},
                                                       {"x-switchyard-task", "summarize"}};
    std::printf("\n| ingress step | CPU ns per request |\n| --- | ---: |\n");
    std::printf(
        "| parse the body and build the RequestContext (%lld-byte body, 5 headers) | %.0f |\n",
        static_cast<long long>(body.size()), nanosecondsPerContext(body, headers, iterations));

    std::printf("\n| request log line | CPU ns per request |\n| --- | ---: |\n");
    std::printf(
        "| info, text (built and formatted, not written) | %.0f |\n",
        nanosecondsPerRequestLine(logging::LogFormat::Text, logging::LogLevel::Info, iterations));
    std::printf(
        "| info, json (built and formatted, not written) | %.0f |\n",
        nanosecondsPerRequestLine(logging::LogFormat::Json, logging::LogLevel::Info, iterations));
    std::printf("| warning: the line is off | %.0f |\n",
                nanosecondsPerRequestLine(logging::LogFormat::Json, logging::LogLevel::Warning,
                                          iterations));
    if (g_formattedBytes == 0)
        std::fprintf(stderr, "routing_bench: no request line was formatted\n");
    return 0;
}
