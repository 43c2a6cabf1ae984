#include "ui/traces/trace_waterfall_view.h"

#include "ui/common/widget_helpers.h"

#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

constexpr int kLabelWidth = 168;
constexpr int kRightMargin = 12;
constexpr int kAxisHeight = 22;
constexpr int kRowHeight = 22;
constexpr int kStreamRowHeight = 30;
constexpr int kLegendHeight = 26;
constexpr int kBarHeight = 12;

const QColor kTextColor(0x11, 0x18, 0x27);
const QColor kQuietText(0x6b, 0x72, 0x80);
const QColor kGridColor(0xee, 0xf0, 0xf3);
const QColor kStepColor(0xcb, 0xd5, 0xe1);
const QColor kWaitColor(0xb4, 0x53, 0x09);
const QColor kEventColor(0x47, 0x55, 0x69);
const QColor kChunkColor(0x25, 0x63, 0xeb);

QString spanLabel(const telemetry::Span &span)
{
    if (span.kind == telemetry::SpanKind::Attempt && span.attempt > 0)
        return TraceWaterfallView::tr("attempt %1 · %2").arg(span.attempt).arg(span.provider);
    return span.name;
}

void drawDiamond(QPainter &painter, const QPointF &center, double radius)
{
    QPainterPath path;
    path.moveTo(center.x(), center.y() - radius);
    path.lineTo(center.x() + radius, center.y());
    path.lineTo(center.x(), center.y() + radius);
    path.lineTo(center.x() - radius, center.y());
    path.closeSubpath();
    painter.drawPath(path);
}

} // namespace

TraceWaterfallView::TraceWaterfallView(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("traceWaterfall"));
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
}

void TraceWaterfallView::setTrace(const telemetry::Trace &trace)
{
    const bool heightChanges = !m_hasTrace || trace.spans.size() != m_trace.spans.size();
    m_trace = trace;
    m_hasTrace = true;
    if (heightChanges)
        updateGeometry();
    update();
}

void TraceWaterfallView::clear()
{
    m_trace = {};
    m_hasTrace = false;
    updateGeometry();
    update();
}

QString TraceWaterfallView::attemptToneName(AttemptTone tone)
{
    switch (tone) {
    case AttemptTone::Success:
        return tr("success");
    case AttemptTone::Failure:
        return tr("failure");
    case AttemptTone::RateLimited:
        return tr("rate limited");
    case AttemptTone::Unusable:
        return tr("unusable");
    case AttemptTone::RequestFault:
        return tr("request fault");
    case AttemptTone::Cancelled:
        return tr("cancelled");
    case AttemptTone::Running:
        return tr("running");
    }
    return {};
}

QString TraceWaterfallView::formatMicros(qint64 micros)
{
    const QLocale locale;
    if (micros == 0)
        return QStringLiteral("0");
    if (micros < 1000)
        return tr("%1 µs").arg(locale.toString(micros));
    if (micros < 10'000)
        return tr("%1 ms").arg(locale.toString(double(micros) / 1000.0, 'f', 1));
    if (micros < 1'000'000)
        return tr("%1 ms").arg(locale.toString(qint64(std::llround(double(micros) / 1000.0))));
    return tr("%1 s").arg(locale.toString(double(micros) / 1e6, 'f', micros < 10'000'000 ? 2 : 1));
}

QString TraceWaterfallView::spanCaption(const telemetry::Span &span)
{
    const QString duration =
        span.durationMicros < 0 ? tr("running") : formatMicros(span.durationMicros);
    switch (span.kind) {
    case telemetry::SpanKind::Attempt: {
        QStringList parts;
        if (span.httpStatus > 0)
            parts.append(tr("HTTP %1").arg(span.httpStatus));
        if (!span.errorClass.isEmpty())
            parts.append(span.errorClass);
        else if (!span.outcome.isEmpty() && span.outcome != QLatin1String("success"))
            parts.append(span.outcome);
        parts.append(duration);
        return parts.join(QStringLiteral(" · "));
    }
    case telemetry::SpanKind::Wait:
        return span.detail.isEmpty() ? tr("%1 %2").arg(span.name, duration)
                                     : tr("%1 %2 — %3").arg(span.name, duration, span.detail);
    case telemetry::SpanKind::Event:
        return span.detail.isEmpty()
                   ? formatMicros(span.startMicros)
                   : tr("%1 — %2").arg(formatMicros(span.startMicros), span.detail);
    case telemetry::SpanKind::Step:
        break;
    }
    return duration;
}

QRectF TraceWaterfallView::plotRect() const
{
    return QRectF(kLabelWidth, kAxisHeight, std::max(1, width() - kLabelWidth - kRightMargin),
                  double(m_trace.spans.size()) * kRowHeight + kStreamRowHeight);
}

QRectF TraceWaterfallView::rowRect(int index) const
{
    return QRectF(0, kAxisHeight + index * kRowHeight, width(), kRowHeight);
}

WaterfallLayout TraceWaterfallView::layout() const
{
    return WaterfallLayout(m_trace, plotRect().width());
}

int TraceWaterfallView::contentHeight() const
{
    return kAxisHeight + int(m_trace.spans.size()) * kRowHeight + kStreamRowHeight + kLegendHeight +
           4;
}

QSize TraceWaterfallView::sizeHint() const
{
    return QSize(640, contentHeight());
}

QSize TraceWaterfallView::minimumSizeHint() const
{
    return QSize(kLabelWidth + 200, contentHeight());
}

QString TraceWaterfallView::toolTipAt(const QPointF &position) const
{
    if (!m_hasTrace)
        return {};
    const int index = int(std::floor((position.y() - kAxisHeight) / kRowHeight));
    if (index >= 0 && index < m_trace.spans.size()) {
        const telemetry::Span &span = m_trace.spans.at(index);
        QString text = QStringLiteral("<b>%1</b>").arg(span.name.toHtmlEscaped());
        text += QStringLiteral("<br>") + tr("at %1").arg(formatMicros(span.startMicros));
        if (span.durationMicros > 0)
            text += QStringLiteral(", ") + tr("for %1").arg(formatMicros(span.durationMicros));
        else if (span.durationMicros < 0)
            text += QStringLiteral(", ") + tr("still running");
        if (span.kind == telemetry::SpanKind::Attempt) {
            text += QStringLiteral("<br>") + tr("%1 as %2: %3")
                                                 .arg(span.provider.toHtmlEscaped(),
                                                      span.upstreamModel.toHtmlEscaped(),
                                                      attemptToneName(attemptToneOf(span)));
            if (span.bytes > 0)
                text += QStringLiteral("<br>") +
                        tr("%1 bytes received").arg(QLocale().toString(span.bytes));
        }
        if (!span.detail.isEmpty())
            text += QStringLiteral("<br>") + span.detail.toHtmlEscaped();
        return text;
    }
    if (index == m_trace.spans.size() && position.y() < plotRect().bottom()) {
        const ChunkGapStats gaps = ChunkGapStats::of(m_trace.chunks);
        QString text = tr("%n chunk(s) streamed, %1 bytes", nullptr, int(m_trace.chunkCount))
                           .arg(QLocale().toString(m_trace.chunkBytes));
        if (m_trace.chunkCount > m_trace.chunks.size())
            text += QStringLiteral("<br>") +
                    tr("The first %n arrivals are drawn; later ones are only counted.", nullptr,
                       int(m_trace.chunks.size()));
        if (gaps.gapCount > 0)
            text += QStringLiteral("<br>") +
                    tr("Gap between chunks: median %1, max %2")
                        .arg(formatMicros(gaps.medianMicros), formatMicros(gaps.maxMicros));
        return text;
    }
    return {};
}

bool TraceWaterfallView::event(QEvent *event)
{
    if (showToolTipAt(this, event, [this](const QPoint &at) { return toolTipAt(at); }))
        return true;
    return QWidget::event(event);
}

void TraceWaterfallView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    if (!m_hasTrace)
        return;

    const QRectF plot = plotRect();
    const WaterfallLayout geometry = layout();
    const QFontMetricsF metrics(font());
    QFont small = font();
    small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.86));
    const QFontMetricsF smallMetrics(small);

    // The axis: round milliseconds across the top, faint lines down through every row.
    painter.setFont(small);
    for (const qint64 tick :
         geometry.ticksMicros(smallMetrics.horizontalAdvance(QStringLiteral("0000 ms")) + 24)) {
        const double x = plot.left() + geometry.xOf(tick);
        painter.setPen(kGridColor);
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
        painter.setPen(kQuietText);
        const QString label = formatMicros(tick);
        const double labelWidth = smallMetrics.horizontalAdvance(label);
        const double left = std::min(x - labelWidth / 2, plot.right() - labelWidth);
        painter.drawText(QRectF(std::max(plot.left(), left), 0, labelWidth + 2, kAxisHeight - 4),
                         Qt::AlignLeft | Qt::AlignVCenter, label);
    }

    for (const WaterfallLayout::Row &row : geometry.rows()) {
        const telemetry::Span &span = m_trace.spans.at(row.spanIndex);
        const QRectF line = rowRect(row.spanIndex);
        const double centerY = line.center().y();

        painter.setFont(font());
        painter.setPen(span.kind == telemetry::SpanKind::Event ? kQuietText : kTextColor);
        painter.drawText(QRectF(8, line.top(), kLabelWidth - 16, line.height()),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         metrics.elidedText(spanLabel(span), Qt::ElideRight, kLabelWidth - 16));

        const double x = plot.left() + row.x;
        const QRectF bar(x, centerY - kBarHeight / 2.0, std::max(2.0, row.width), kBarHeight);
        double captionLeft = bar.right() + 6;
        QColor captionColor = kQuietText;
        switch (span.kind) {
        case telemetry::SpanKind::Step:
            painter.setPen(Qt::NoPen);
            painter.setBrush(kStepColor);
            painter.drawRoundedRect(bar, 3, 3);
            break;
        case telemetry::SpanKind::Attempt: {
            const QColor color = attemptToneColor(row.tone);
            QLinearGradient fill(bar.topLeft(), bar.topRight());
            fill.setColorAt(0, color);
            // An open attempt fades out at the time so far: it has no end yet.
            fill.setColorAt(1, row.open ? QColor(color.red(), color.green(), color.blue(), 60)
                                        : color);
            painter.setPen(Qt::NoPen);
            painter.setBrush(fill);
            painter.drawRoundedRect(bar, 3, 3);
            captionColor = row.tone == AttemptTone::Success ? kQuietText : color.darker(130);
            break;
        }
        case telemetry::SpanKind::Wait: {
            // A gap, not work: an outline with a light hatch, so the eye reads it as time waited.
            painter.setPen(QPen(kWaitColor, 1, Qt::DashLine));
            painter.setBrush(QBrush(QColor(0xf5, 0x9e, 0x0b, 90), Qt::BDiagPattern));
            painter.drawRect(bar.adjusted(0.5, 0.5, -0.5, -0.5));
            captionColor = kWaitColor;
            break;
        }
        case telemetry::SpanKind::Event:
            painter.setPen(Qt::NoPen);
            painter.setBrush(span.name == QLatin1String("first byte") ? kChunkColor : kEventColor);
            drawDiamond(painter, QPointF(x, centerY), 5);
            captionLeft = x + 9;
            break;
        }

        // The caption beside the bar, or before it when the bar reaches the right edge.
        painter.setFont(small);
        const QString caption = spanCaption(span);
        const double captionWidth = smallMetrics.horizontalAdvance(caption);
        QRectF captionRect(captionLeft, line.top(), plot.right() - captionLeft, line.height());
        if (captionRect.width() < std::min(captionWidth, 160.0)) {
            const double start = span.kind == telemetry::SpanKind::Event ? x - 9 : bar.left() - 6;
            const double room = start - plot.left();
            captionRect = QRectF(plot.left(), line.top(), room, line.height());
            painter.setPen(captionColor);
            painter.drawText(captionRect, Qt::AlignRight | Qt::AlignVCenter,
                             smallMetrics.elidedText(caption, Qt::ElideLeft, room));
        } else {
            painter.setPen(captionColor);
            painter.drawText(captionRect, Qt::AlignLeft | Qt::AlignVCenter,
                             smallMetrics.elidedText(caption, Qt::ElideRight, captionRect.width()));
        }
    }

    // The stream: one tick per chunk, taller for a bigger chunk.
    const QRectF stream(0, kAxisHeight + m_trace.spans.size() * kRowHeight, width(),
                        kStreamRowHeight);
    painter.setPen(QPen(kGridColor, 1));
    painter.drawLine(QPointF(8, stream.top() + 1), QPointF(plot.right(), stream.top() + 1));
    painter.setFont(font());
    painter.setPen(kTextColor);
    const QString streamLabel =
        m_trace.chunkCount > 0
            ? tr("stream · %n chunk(s)", nullptr, int(m_trace.chunkCount))
            : (m_trace.streamed ? tr("stream · no chunks yet") : tr("not streamed"));
    painter.drawText(QRectF(8, stream.top(), kLabelWidth - 16, stream.height()),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(streamLabel, Qt::ElideRight, kLabelWidth - 16));
    qint64 biggest = 1;
    for (const telemetry::ChunkMark &chunk : m_trace.chunks)
        biggest = std::max<qint64>(biggest, chunk.bytes);
    const double baseline = stream.bottom() - 6;
    const double tallest = stream.height() - 12;
    painter.setPen(QPen(kChunkColor, 1.2));
    for (size_t i = 0; i < m_trace.chunks.size(); ++i) {
        const double x = plot.left() + geometry.chunkXs().at(qsizetype(i));
        const double height =
            4 + (tallest - 4) * std::sqrt(double(m_trace.chunks[i].bytes) / double(biggest));
        painter.drawLine(QPointF(x, baseline), QPointF(x, baseline - height));
    }

    paintLegend(painter, QRectF(8, stream.bottom() + 2, width() - 8 - kRightMargin, kLegendHeight));
}

void TraceWaterfallView::paintLegend(QPainter &painter, const QRectF &area) const
{
    QFont small = font();
    small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.86));
    painter.setFont(small);
    const QFontMetricsF metrics(small);
    double x = area.left();
    const double centerY = area.center().y();
    const auto swatch = [&](const QString &name, auto &&drawMark) {
        drawMark(QRectF(x, centerY - 5, 12, 10));
        x += 16;
        painter.setPen(kQuietText);
        const double width = metrics.horizontalAdvance(name);
        painter.drawText(QRectF(x, area.top(), width + 2, area.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, name);
        x += width + 14;
    };
    // Only the outcomes this request had, then the marks every waterfall uses.
    QList<AttemptTone> tones;
    for (const telemetry::Span &span : m_trace.spans) {
        if (span.kind == telemetry::SpanKind::Attempt && !tones.contains(attemptToneOf(span)))
            tones.append(attemptToneOf(span));
    }
    std::sort(tones.begin(), tones.end());
    for (const AttemptTone tone : std::as_const(tones)) {
        swatch(attemptToneName(tone), [&](const QRectF &mark) {
            painter.setPen(Qt::NoPen);
            painter.setBrush(attemptToneColor(tone));
            painter.drawRoundedRect(mark, 2, 2);
        });
    }
    swatch(tr("wait"), [&](const QRectF &mark) {
        painter.setPen(QPen(kWaitColor, 1, Qt::DashLine));
        painter.setBrush(QBrush(QColor(0xf5, 0x9e, 0x0b, 90), Qt::BDiagPattern));
        painter.drawRect(mark.adjusted(0.5, 0.5, -0.5, -0.5));
    });
    swatch(tr("event"), [&](const QRectF &mark) {
        painter.setPen(Qt::NoPen);
        painter.setBrush(kEventColor);
        drawDiamond(painter, mark.center(), 5);
    });
    swatch(tr("chunk"), [&](const QRectF &mark) {
        painter.setPen(QPen(kChunkColor, 1.2));
        for (const double offset : {2.0, 6.0, 10.0})
            painter.drawLine(QPointF(mark.left() + offset, mark.bottom()),
                             QPointF(mark.left() + offset, mark.top() + offset / 3));
    });

    // The gaps between chunks as a small histogram, fastest bin first, right-aligned.
    const ChunkGapStats gaps = ChunkGapStats::of(m_trace.chunks);
    if (gaps.gapCount == 0)
        return;
    const int bins = ChunkGapStats::kBinCount;
    const double barWidth = 7;
    const double histogramWidth = bins * (barWidth + 2);
    const QString caption = tr("gaps: median %1 · max %2")
                                .arg(formatMicros(gaps.medianMicros), formatMicros(gaps.maxMicros));
    const double captionWidth = metrics.horizontalAdvance(caption);
    const double histogramLeft = area.right() - histogramWidth;
    if (histogramLeft - captionWidth - 8 < x)
        return; // too narrow: the stream row's tool tip still says it
    painter.setPen(kQuietText);
    painter.drawText(
        QRectF(histogramLeft - captionWidth - 8, area.top(), captionWidth + 2, area.height()),
        Qt::AlignLeft | Qt::AlignVCenter, caption);
    const int most = *std::max_element(gaps.histogram.begin(), gaps.histogram.end());
    painter.setPen(Qt::NoPen);
    for (int bin = 0; bin < bins; ++bin) {
        const double height = 2 + 16.0 * gaps.histogram[size_t(bin)] / std::max(1, most);
        painter.setBrush(gaps.histogram[size_t(bin)] > 0 ? kChunkColor : kStepColor);
        painter.drawRect(
            QRectF(histogramLeft + bin * (barWidth + 2), centerY + 9 - height, barWidth, height));
    }
}

} // namespace switchyard::ui
