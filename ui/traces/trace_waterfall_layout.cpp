#include "ui/traces/trace_waterfall_layout.h"

#include <algorithm>
#include <cmath>

namespace switchyard::ui {

AttemptTone attemptToneOf(const telemetry::Span &span)
{
    const QString &outcome = span.outcome;
    if (outcome.isEmpty() || span.durationMicros < 0)
        return AttemptTone::Running;
    if (outcome == QLatin1String("success"))
        return AttemptTone::Success;
    if (outcome == QLatin1String("rate_limited"))
        return AttemptTone::RateLimited;
    if (outcome == QLatin1String("unusable"))
        return AttemptTone::Unusable;
    if (outcome == QLatin1String("request_fault"))
        return AttemptTone::RequestFault;
    if (outcome == QLatin1String("cancelled"))
        return AttemptTone::Cancelled;
    return AttemptTone::Failure;
}

QColor attemptToneColor(AttemptTone tone)
{
    // The health matrix's state colours: green answers, red failures, amber for a provider
    // asking to slow down, violet for an answer that could not be used, grey for abandoned.
    switch (tone) {
    case AttemptTone::Success:
        return QColor(0x22, 0xc5, 0x5e);
    case AttemptTone::Failure:
        return QColor(0xef, 0x44, 0x44);
    case AttemptTone::RateLimited:
        return QColor(0xf5, 0x9e, 0x0b);
    case AttemptTone::Unusable:
        return QColor(0xa8, 0x55, 0xf7);
    case AttemptTone::RequestFault:
        return QColor(0xf9, 0x73, 0x16);
    case AttemptTone::Cancelled:
        return QColor(0x9c, 0xa3, 0xaf);
    case AttemptTone::Running:
        return QColor(0x3b, 0x82, 0xf6);
    }
    return {};
}

ChunkGapStats ChunkGapStats::of(const std::vector<telemetry::ChunkMark> &chunks)
{
    ChunkGapStats stats;
    if (chunks.size() < 2)
        return stats;
    std::vector<qint64> gaps;
    gaps.reserve(chunks.size() - 1);
    for (size_t i = 1; i < chunks.size(); ++i)
        gaps.push_back(std::max<qint64>(0, chunks[i].atMicros - chunks[i - 1].atMicros));
    for (const qint64 gap : gaps) {
        int bin = 0;
        while (bin < int(kBinUpperMs.size()) && gap >= qint64(kBinUpperMs[size_t(bin)]) * 1000)
            ++bin;
        ++stats.histogram[size_t(bin)];
    }
    stats.gapCount = int(gaps.size());
    stats.maxMicros = *std::max_element(gaps.begin(), gaps.end());
    // The lower median: a gap that actually happened, not the mean of two.
    const auto middle = gaps.begin() + std::ptrdiff_t((gaps.size() - 1) / 2);
    std::nth_element(gaps.begin(), middle, gaps.end());
    stats.medianMicros = *middle;
    return stats;
}

WaterfallLayout::WaterfallLayout(const telemetry::Trace &trace, double plotWidth)
    : m_plotWidth(std::max(1.0, plotWidth))
{
    // The axis ends where the last thing happened: the request's end or, while it runs, the
    // time so far; a span or chunk reported after that still fits.
    qint64 end = std::max<qint64>(1, trace.totalMicros);
    for (const telemetry::Span &span : trace.spans)
        end = std::max(end, span.startMicros + std::max<qint64>(0, span.durationMicros));
    if (!trace.chunks.empty())
        end = std::max(end, trace.chunks.back().atMicros);
    m_endMicros = end;

    m_rows.reserve(trace.spans.size());
    for (int i = 0; i < trace.spans.size(); ++i) {
        const telemetry::Span &span = trace.spans.at(i);
        Row row;
        row.spanIndex = i;
        row.kind = span.kind;
        row.x = xOf(span.startMicros);
        const bool pointEvent = span.kind == telemetry::SpanKind::Event || span.durationMicros == 0;
        row.open = span.durationMicros < 0;
        if (!pointEvent) {
            const qint64 spanEnd = row.open ? m_endMicros : span.startMicros + span.durationMicros;
            row.width = std::max(0.0, xOf(spanEnd) - row.x);
        }
        if (span.kind == telemetry::SpanKind::Attempt)
            row.tone = attemptToneOf(span);
        m_rows.append(row);
    }
    m_chunkXs.reserve(qsizetype(trace.chunks.size()));
    for (const telemetry::ChunkMark &chunk : trace.chunks)
        m_chunkXs.append(xOf(chunk.atMicros));
}

double WaterfallLayout::xOf(qint64 micros) const
{
    return double(std::clamp<qint64>(micros, 0, m_endMicros)) / double(m_endMicros) * m_plotWidth;
}

qint64 WaterfallLayout::tickStepMicros(double minimumSpacing) const
{
    // 1, 2, 5 times a power of ten, from a microsecond up: the first that leaves room.
    const double microsPerPixel = double(m_endMicros) / m_plotWidth;
    const double wanted = std::max(1.0, minimumSpacing * microsPerPixel);
    qint64 magnitude = 1;
    while (true) {
        for (const qint64 factor : {1, 2, 5}) {
            if (double(factor * magnitude) >= wanted)
                return factor * magnitude;
        }
        magnitude *= 10;
    }
}

QList<qint64> WaterfallLayout::ticksMicros(double minimumSpacing) const
{
    const qint64 step = tickStepMicros(minimumSpacing);
    QList<qint64> ticks;
    for (qint64 at = 0; at <= m_endMicros; at += step)
        ticks.append(at);
    return ticks;
}

} // namespace switchyard::ui
