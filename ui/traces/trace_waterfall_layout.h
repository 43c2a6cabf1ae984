#pragma once

#include "telemetry/trace.h"

#include <QColor>
#include <QList>
#include <QString>
#include <array>
#include <vector>

namespace switchyard::ui {

// How an upstream attempt ended, as the waterfall colours it. From the trace's closed set of
// attempt outcomes ("success", "failure", "rate_limited", "unusable", "request_fault",
// "cancelled"); an attempt with no outcome yet is still running.
enum class AttemptTone {
    Success,
    Failure,
    RateLimited,
    Unusable,
    RequestFault,
    Cancelled,
    Running
};

AttemptTone attemptToneOf(const telemetry::Span &span);
QColor attemptToneColor(AttemptTone tone);

// The spread of gaps between streamed chunks: the rhythm a client feels. Bins are upper bounds
// in milliseconds, the last one open-ended.
struct ChunkGapStats {
    static constexpr std::array<int, 6> kBinUpperMs{10, 25, 50, 100, 250, 500};
    static constexpr int kBinCount = int(kBinUpperMs.size()) + 1;

    int gapCount = 0;
    qint64 medianMicros = -1; // -1: fewer than two chunks
    qint64 maxMicros = -1;
    std::array<int, kBinCount> histogram{};

    static ChunkGapStats of(const std::vector<telemetry::ChunkMark> &chunks);
};

// The time-to-pixel maths of one request's waterfall, apart from any widget so it can be tested
// alone: every span on one axis of microseconds from the request's start, from 0 at x = 0 to the
// request's end (or, while it runs, the time so far) at x = plotWidth.
class WaterfallLayout {
public:
    struct Row {
        int spanIndex = 0;
        telemetry::SpanKind kind = telemetry::SpanKind::Step;
        double x = 0;                            // the bar's left edge; an event's point
        double width = 0;                        // 0 for an event
        bool open = false;                       // not closed yet: drawn up to the time so far
        AttemptTone tone = AttemptTone::Success; // attempts only
    };

    WaterfallLayout(const telemetry::Trace &trace, double plotWidth);

    qint64 endMicros() const { return m_endMicros; }
    double plotWidth() const { return m_plotWidth; }
    double xOf(qint64 micros) const;
    // One row per span, in the trace's order (which is the order they began).
    const QList<Row> &rows() const { return m_rows; }
    // Where each kept chunk arrival lands.
    const QList<double> &chunkXs() const { return m_chunkXs; }
    // Round instants in microseconds for labels, at least `minimumSpacing` pixels apart.
    QList<qint64> ticksMicros(double minimumSpacing) const;
    qint64 tickStepMicros(double minimumSpacing) const;

private:
    qint64 m_endMicros = 1;
    double m_plotWidth = 1;
    QList<Row> m_rows;
    QList<double> m_chunkXs;
};

} // namespace switchyard::ui
