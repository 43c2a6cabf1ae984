#include "config/config_sections.h"

#include <limits>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> otlpKeys{"endpoint"_L1, "headers"_L1,  "sampling_ratio"_L1,
                                        "batch"_L1,    "interval"_L1, "queue"_L1,
                                        "timeout"_L1};

// Far beyond what one process should hold for a collector: a bigger number is a typo, and a
// span queue of this size is already a few hundred megabytes.
constexpr qint64 kMostQueuedSpans = 1'000'000;

} // namespace

QUrl OtlpExportConfig::tracesUrl() const
{
    QUrl url = endpoint;
    QString path = url.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    url.setPath(path + u"/v1/traces"_s);
    return url;
}

void checkOtlpExport(YamlReader &reader, const EnvironmentLookup &environment,
                     const MapEntry &entry, std::optional<OtlpExportConfig> &otlp)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, otlpKeys);
    if (!section)
        return;
    OtlpExportConfig exportConfig;
    const qsizetype errorsBefore = reader.errorCount();

    if (const MapEntry *endpoint = section->find("endpoint"_L1)) {
        if (const auto text = reader.readString(*endpoint)) {
            const QUrl url(*text, QUrl::StrictMode);
            const bool httpScheme = url.scheme() == u"http"_s || url.scheme() == u"https"_s;
            if (!url.isValid() || !httpScheme || url.host().isEmpty() || url.hasQuery() ||
                url.hasFragment()) {
                reader.reportValue(*endpoint,
                                   u"`endpoint` must be the collector's http or https base URL "
                                   u"such as `http://127.0.0.1:4318` (spans go to its "
                                   u"`/v1/traces`), got %1"_s.arg(describe(endpoint->value)));
            } else if (url.path().endsWith(u"/v1/traces"_s)) {
                // The OpenTelemetry SDKs append the signal's path to the base URL too; a URL
                // that already has it would be sent to /v1/traces/v1/traces.
                reader.reportValue(*endpoint,
                                   u"`endpoint` is the collector's base URL: leave out "
                                   u"`/v1/traces`, which Switchyard appends, got %1"_s.arg(
                                       describe(endpoint->value)));
            } else {
                exportConfig.endpoint = url;
            }
        }
    } else {
        reader.reportMissing(entry.value, u"`trace.otlp`"_s, "endpoint"_L1);
    }
    if (const MapEntry *headers = section->find("headers"_L1))
        readHeaderMap(reader, environment, *headers, exportConfig.headers);
    if (const MapEntry *ratio = section->find("sampling_ratio"_L1)) {
        if (const auto value = reader.readNumberIn(*ratio, 0.0, 1.0))
            exportConfig.samplingRatio = *value;
    }
    const MapEntry *batch = section->find("batch"_L1);
    if (batch) {
        if (const auto spans = reader.readInteger(*batch, 1, kMostQueuedSpans))
            exportConfig.batchSpans = int(*spans);
    }
    if (const MapEntry *queue = section->find("queue"_L1)) {
        if (const auto spans = reader.readInteger(*queue, 1, kMostQueuedSpans))
            exportConfig.queueSpans = int(*spans);
    }
    if (const MapEntry *interval = section->find("interval"_L1)) {
        if (const auto duration = reader.readDuration(*interval, ZeroDuration::Rejected))
            exportConfig.interval = *duration;
    }
    if (const MapEntry *timeout = section->find("timeout"_L1)) {
        if (const auto duration = reader.readDuration(*timeout, ZeroDuration::Rejected))
            exportConfig.timeout = *duration;
    }
    // A batch is taken from the queue: one larger than the queue could never fill.
    if (exportConfig.batchSpans > exportConfig.queueSpans) {
        reader.report(batch ? YamlReader::valueMark(*batch) : entry.key.Mark(),
                      u"`batch` (%1 spans) must not be larger than `queue` (%2 spans)"_s.arg(
                          QString::number(exportConfig.batchSpans),
                          QString::number(exportConfig.queueSpans)));
    }
    if (reader.errorCount() == errorsBefore)
        otlp = std::move(exportConfig);
}

} // namespace switchyard::config
