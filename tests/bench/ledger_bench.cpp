// Usage ledger benchmark: what one row costs. The real UsageLedger writing to a state database
// file in a temporary directory with its default options (batches of 500, WAL): the calling
// thread hands it finished requests as the engine thread does, and the writer's own thread writes
// them. Prints, per run, the calling thread's CPU per row (making the row, the budgets, the
// queue's lock) and the writer thread's CPU per row (SQLite), and their medians. A measurement,
// never a pass/fail test.
//
//   ledger_bench [--rows N] (default 50000 a run, 7 runs)

#include "config/config_loader.h"
#include "config/config_store.h"
#include "storage/state_database.h"
#include "telemetry/trace.h"
#include "thread_cpu.h"
#include "usage/budget_tracker.h"
#include "usage/pricing.h"
#include "usage/usage_ledger.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLoggingCategory>
#include <QStringList>
#include <QTemporaryDir>
#include <QThread>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace Qt::StringLiterals;
using namespace switchyard;

namespace {

constexpr int kRuns = 7;

// The CPU time of this process's thread named `name`, in nanoseconds (the scheduler's own
// count, /proc/self/task/TID/schedstat); -1 when there is no such thread.
double namedThreadCpuNanoseconds(const QString &name)
{
    const QDir tasks(u"/proc/self/task"_s);
    for (const QString &task : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile comm(tasks.filePath(task + u"/comm"_s));
        if (!comm.open(QIODevice::ReadOnly) || QString::fromUtf8(comm.readAll()).trimmed() != name)
            continue;
        QFile schedstat(tasks.filePath(task + u"/schedstat"_s));
        if (!schedstat.open(QIODevice::ReadOnly))
            return -1;
        return schedstat.readAll().split(' ').value(0).toDouble();
    }
    return -1;
}

config::Config pricedConfig()
{
    const config::LoadResult result =
        config::loadConfigText("providers:\n"
                               "  - {id: cloud, kind: simulated, models: [gpt-4o]}\n"
                               "pricing:\n"
                               "  models:\n"
                               "    gpt-4o: {input_per_million: 2, output_per_million: 10}\n",
                               u"bench.yaml"_s, [](const QString &) { return std::nullopt; });
    if (!result.ok())
        qFatal("ledger_bench: its config does not load");
    return *result.config;
}

// A finished request as the recorder hands one to its sinks: priced, with the names a real one
// carries.
telemetry::Trace finished(const config::PricingConfig &pricing, int sequence)
{
    telemetry::Trace trace;
    trace.requestId = "req_" + QByteArray::number(sequence).rightJustified(24, '0');
    trace.startedAtUtc = QDateTime::currentDateTimeUtc();
    trace.totalMicros = 812000;
    trace.tenant = u"team-checkout"_s;
    trace.keyId = u"checkout-ci"_s;
    trace.model = u"gpt-4o"_s;
    trace.provider = u"cloud"_s;
    trace.route = u"rule: code review"_s;
    trace.tier = u"pro"_s;
    trace.status = 200;
    trace.inputTokens = 412;
    trace.outputTokens = 24;
    usage::priceRecord(trace, pricing);
    return trace;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(u"switchyard.*.info=false"_s);
    int rows = 50000;
    const QStringList arguments = app.arguments();
    if (const qsizetype at = arguments.indexOf(u"--rows"_s); at >= 0)
        rows = std::max(1, arguments.value(at + 1).toInt());

    QTemporaryDir directory;
    const config::Config config = pricedConfig();
    config::ConfigStore store(config);
    usage::BudgetTracker budgets(store);
    usage::LedgerOptions options;
    options.databasePath = storage::stateDatabasePath(directory.path());
    usage::UsageLedger ledger(budgets, options);
    // Made before the clock starts: the recorder has the trace already.
    std::vector<telemetry::Trace> traces;
    traces.reserve(size_t(rows));
    for (int i = 0; i < rows; ++i)
        traces.push_back(finished(config.usage.pricing, i));

    std::printf("| run | rows | calling thread CPU µs per row | writer thread CPU µs per row |\n"
                "| ---: | ---: | ---: | ---: |\n");
    std::vector<double> calling;
    std::vector<double> writing;
    quint64 written = 0;
    for (int run = 1; run <= kRuns; ++run) {
        const double writerBefore = namedThreadCpuNanoseconds(u"usage-ledger"_s);
        const double before = threadCpuNanoseconds();
        for (const telemetry::Trace &trace : traces)
            ledger.traceFinished(trace);
        const double after = threadCpuNanoseconds();
        ledger.flushSoon();
        written += quint64(rows);
        while (ledger.state().writtenRows < written)
            QThread::msleep(5);
        const double writerAfter = namedThreadCpuNanoseconds(u"usage-ledger"_s);
        calling.push_back((after - before) / 1000.0 / rows);
        writing.push_back((writerAfter - writerBefore) / 1000.0 / rows);
        std::printf("| %d | %d | %.2f | %.2f |\n", run, rows, calling.back(), writing.back());
    }
    std::printf("| median | | %.2f | %.2f |\n", median(calling), median(writing));
    return 0;
}
