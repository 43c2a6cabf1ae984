#include "ui/overview/breaker_timeline_view.h"

#include "ui/common/widget_helpers.h"

#include <QDateTime>
#include <QLinearGradient>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

const QColor gridColor(0xee, 0xf0, 0xf3);
const QColor separatorColor(0xe5, 0xe7, 0xeb);
const QColor labelColor(0x37, 0x41, 0x51);
const QColor quietColor(0x6b, 0x72, 0x80);
const QColor markerColor(0x11, 0x18, 0x27);
const QColor droppedColor(0x94, 0xa3, 0xb8);
const QColor rampStartColor(0xcc, 0xfb, 0xf1);

// Dark enough to read as text on white; the matrix's state pills use the same hues.
QColor strongColor(LaneState state)
{
    switch (state) {
    case LaneState::Closed:
        return QColor(0x15, 0x80, 0x3d);
    case LaneState::Ramping:
        return QColor(0x0f, 0x76, 0x6e);
    case LaneState::HalfOpen:
        return QColor(0xb4, 0x53, 0x09);
    case LaneState::Open:
        return QColor(0xb9, 0x1c, 0x1c);
    }
    return {};
}

// The operator's colours: the matrix's blue for draining, its grey for disabled.
QColor operatorInk(OperatorState state)
{
    return state == OperatorState::Draining ? QColor(0x25, 0x63, 0xeb) : QColor(0x47, 0x55, 0x69);
}

QColor operatorPaper(OperatorState state)
{
    return state == OperatorState::Draining ? QColor(0xdb, 0xea, 0xfe) : QColor(0xe2, 0xe8, 0xf0);
}

// The operator's stripe: hatched, so it reads as "set by hand" and not as a breaker colour;
// disabled cross-hatched, draining single-hatched, so the two differ without their labels.
void paintOperatorStripe(QPainter &painter, const QRectF &rect, OperatorState state)
{
    painter.fillRect(rect, operatorPaper(state));
    painter.fillRect(rect, QBrush(operatorInk(state), state == OperatorState::Disabled
                                                          ? Qt::DiagCrossPattern
                                                          : Qt::BDiagPattern));
}

QString clockTime(qint64 atMs, bool withSeconds = true)
{
    return QLocale().toString(QDateTime::fromMSecsSinceEpoch(atMs).time(),
                              withSeconds ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm"));
}

QFont smallFont(const QFont &base)
{
    QFont font = base;
    if (base.pointSizeF() > 0)
        font.setPointSizeF(base.pointSizeF() * 0.85);
    else
        font.setPixelSize(int(std::lround(base.pixelSize() * 0.85)));
    return font;
}

// A transition's head: a small triangle pointing down at the band's top edge.
QPainterPath markerHead(double x, double bandTop)
{
    QPainterPath head;
    head.moveTo(x - 4.5, bandTop - 7.0);
    head.lineTo(x + 4.5, bandTop - 7.0);
    head.lineTo(x, bandTop - 1.0);
    head.closeSubpath();
    return head;
}

// An event that left the breaker where it was: a small diamond on the operator's stripe.
QPainterPath noteDiamond(const QPointF &center)
{
    QPainterPath diamond;
    diamond.moveTo(center + QPointF(0, -4.5));
    diamond.lineTo(center + QPointF(4.5, 0));
    diamond.lineTo(center + QPointF(0, 4.5));
    diamond.lineTo(center + QPointF(-4.5, 0));
    diamond.closeSubpath();
    return diamond;
}

constexpr double kMarkerReachPixels = 6.0;
constexpr double kPlotRightMargin = 10.0;

} // namespace

BreakerTimelineView::BreakerTimelineView(const BreakerTimelineModel &model, QWidget *parent)
    : QWidget(parent), m_model(model),
      // Zoomed all the way out, the kept history fills the view but for a lead-in before it,
      // where a lane that dropped older history says so.
      m_axis(qint64(double(model.limits().maxAgeMs) * (1.0 + TimelineAxis::kLeadInFraction)))
{
    setObjectName(QStringLiteral("breakerTimelineView"));
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setCursor(Qt::OpenHandCursor);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    refresh();
}

QString BreakerTimelineView::laneStateName(LaneState state)
{
    switch (state) {
    case LaneState::Closed:
        //: Circuit breaker state: traffic flows normally
        return tr("Closed");
    case LaneState::Ramping:
        //: Breaker closed after a recovery, taking a growing share of traffic
        return tr("Ramping");
    case LaneState::HalfOpen:
        //: Circuit breaker state: one probe call is let through
        return tr("Half-open");
    case LaneState::Open:
        //: Circuit breaker state: no traffic until the open period ends
        return tr("Open");
    }
    return {};
}

QString BreakerTimelineView::breakerStateName(BreakerState state)
{
    return laneStateName(BreakerTimelineModel::laneStateOf(state));
}

QString BreakerTimelineView::operatorStateName(OperatorState state)
{
    switch (state) {
    case OperatorState::Enabled:
        return tr("Enabled");
    case OperatorState::Disabled:
        return tr("Disabled");
    case OperatorState::Draining:
        return tr("Draining");
    }
    return {};
}

QColor BreakerTimelineView::laneStateColor(LaneState state)
{
    switch (state) {
    // Closed is the calm default and takes most of the picture: the lightest of the four.
    case LaneState::Closed:
        return QColor(0x86, 0xef, 0xac);
    case LaneState::Ramping:
        return QColor(0x2d, 0xd4, 0xbf);
    case LaneState::HalfOpen:
        return QColor(0xfb, 0xbf, 0x24);
    case LaneState::Open:
        return QColor(0xf8, 0x71, 0x71);
    }
    return {};
}

QString BreakerTimelineView::formatDuration(qint64 milliseconds)
{
    const qint64 seconds = std::max<qint64>(0, (milliseconds + 500) / 1000);
    const QLocale locale;
    if (seconds < 60)
        return tr("%1 s").arg(locale.toString(seconds));
    if (seconds < 3600) {
        if (seconds % 60 == 0)
            return tr("%1 min").arg(locale.toString(seconds / 60));
        //: A duration in minutes and seconds, e.g. "2 min 5 s"
        return tr("%1 min %2 s").arg(locale.toString(seconds / 60), locale.toString(seconds % 60));
    }
    if ((seconds % 3600) / 60 == 0)
        return tr("%1 h").arg(locale.toString(seconds / 3600));
    //: A duration in hours and minutes, e.g. "1 h 3 min"
    return tr("%1 h %2 min")
        .arg(locale.toString(seconds / 3600), locale.toString((seconds % 3600) / 60));
}

QSize BreakerTimelineView::sizeHint() const
{
    const Geometry g = geometry();
    const auto lanes = std::max<qsizetype>(m_model.lanes().size(), 3);
    return QSize(640, int(g.legendHeight + g.axisHeight + double(lanes) * 44.0));
}

QSize BreakerTimelineView::minimumSizeHint() const
{
    const Geometry g = geometry();
    return QSize(360, int(g.legendHeight + g.axisHeight + 40.0));
}

BreakerTimelineView::Geometry BreakerTimelineView::geometry() const
{
    const QFontMetricsF body(font());
    const QFontMetricsF small(smallFont(font()));
    Geometry g;
    g.legendHeight = body.height() + 12.0;
    g.axisHeight = small.height() + 10.0;
    double widest = 0.0;
    for (const TimelineLane &lane : m_model.lanes())
        widest = std::max(widest, body.horizontalAdvance(lane.providerId));
    g.labelWidth = std::clamp(widest + 20.0, 72.0, 180.0);
    const auto lanes = std::max<qsizetype>(m_model.lanes().size(), 1);
    const double available = double(height()) - g.legendHeight - g.axisHeight;
    // Lanes share the height but stay readable: never thinner than the band, stripe and label
    // need, never so tall that three providers look like bars of a chart.
    const double minimum = body.height() + small.height() + 16.0;
    g.laneHeight = std::clamp(available / double(lanes), minimum, minimum * 1.5);
    g.stripeHeight = small.height() + 1.0;
    g.bandHeight = std::max(14.0, g.laneHeight - g.stripeHeight - 16.0);
    return g;
}

QRectF BreakerTimelineView::plotRect() const
{
    const Geometry g = geometry();
    const double lanes = double(std::max<qsizetype>(m_model.lanes().size(), 1));
    return QRectF(g.labelWidth, g.legendHeight,
                  std::max(1.0, double(width()) - g.labelWidth - kPlotRightMargin),
                  g.laneHeight * lanes);
}

QRectF BreakerTimelineView::bandRect(int lane) const
{
    const Geometry g = geometry();
    const QRectF plot = plotRect();
    const double top = plot.top() + g.laneHeight * lane + 7.0;
    return QRectF(plot.left(), top, plot.width(), g.bandHeight);
}

QRectF BreakerTimelineView::operatorStripeRect(int lane) const
{
    const Geometry g = geometry();
    const QRectF band = bandRect(lane);
    return QRectF(band.left(), band.bottom() + 3.0, band.width(), g.stripeHeight);
}

int BreakerTimelineView::laneAt(double y) const
{
    const QRectF plot = plotRect();
    if (y < plot.top() || y >= plot.bottom())
        return -1;
    const int index = int((y - plot.top()) / geometry().laneHeight);
    return index < m_model.lanes().size() ? index : -1;
}

void BreakerTimelineView::refresh()
{
    const bool wasFollowing = m_axis.following();
    const qint64 oldSpan = m_axis.spanMs();
    m_axis.setWidth(plotRect().width());
    m_axis.setRange(m_model.earliestMs(), m_model.nowMs());
    afterAxisMoved(wasFollowing, oldSpan);
    update();
}

void BreakerTimelineView::followNow()
{
    const bool wasFollowing = m_axis.following();
    m_axis.follow();
    afterAxisMoved(wasFollowing, m_axis.spanMs());
    update();
}

void BreakerTimelineView::afterAxisMoved(bool wasFollowing, qint64 oldSpanMs)
{
    if (wasFollowing != m_axis.following())
        Q_EMIT followingChanged(m_axis.following());
    if (oldSpanMs != m_axis.spanMs())
        Q_EMIT spanChanged(m_axis.spanMs());
}

const LaneMarker *BreakerTimelineView::markerNear(const TimelineLane &lane, double x) const
{
    const LaneMarker *nearest = nullptr;
    double best = kMarkerReachPixels;
    for (const LaneMarker &marker : lane.markers) {
        const double distance = std::abs(plotRect().left() + m_axis.xOf(marker.atMs) - x);
        // A transition wins a tie over a note at the same instant: it is what changed.
        if (distance < best || (nearest && distance == best && marker.isTransition())) {
            best = distance;
            nearest = &marker;
        }
    }
    return nearest;
}

QString BreakerTimelineView::toolTipAt(const QPointF &position) const
{
    const int index = laneAt(position.y());
    const QRectF plot = plotRect();
    if (index < 0 || position.x() < plot.left() || position.x() > plot.right())
        return {};
    const TimelineLane &lane = m_model.lanes().at(index);
    const qint64 atMs = m_axis.timeAt(position.x() - plot.left());
    const QString provider = lane.providerId.toHtmlEscaped();

    if (const LaneMarker *marker = markerNear(lane, position.x())) {
        //: A tooltip heading: provider and the time of an event, e.g. "sim-swift · 12:01:03"
        const QString heading = tr("%1 · %2").arg(provider, clockTime(marker->atMs));
        QString what;
        if (marker->isTransition()) {
            //: A breaker transition, e.g. "Closed → Open"
            what = tr("%1 → %2").arg(breakerStateName(marker->from), breakerStateName(marker->to));
        } else {
            //: An event that left the breaker where it was: an operator action or probe health
            what = tr("Breaker %1, operator: %2")
                       .arg(breakerStateName(marker->to), operatorStateName(marker->operatorState));
        }
        return QStringLiteral("<b>%1</b><br>%2<br>%3")
            .arg(heading, what.toHtmlEscaped(), marker->reason.toHtmlEscaped());
    }

    if (atMs < lane.knownSinceMs) {
        if (lane.olderHistoryDropped) {
            return tr("<b>%1</b><br>Older history was dropped: the timeline keeps the last %2 and "
                      "at most %3 changes per provider.")
                .arg(provider, formatDuration(m_model.limits().maxAgeMs),
                     QLocale().toString(m_model.limits().maxChangesPerLane));
        }
        return tr("<b>%1</b><br>No history before %2, when the console first saw it.")
            .arg(provider, clockTime(lane.knownSinceMs));
    }
    if (atMs > m_model.nowMs())
        return {};

    const double y = position.y();
    const QRectF stripe = operatorStripeRect(index);
    if (y >= stripe.top() - 1.0 && y <= stripe.bottom() + 1.0) {
        for (const OperatorBand &band : lane.operatorBands(m_model.nowMs())) {
            if (atMs >= band.startMs && atMs < band.endMs) {
                const bool current = band.endMs >= m_model.nowMs();
                //: Operator state on the timeline, e.g. "Disabled by an operator"
                const QString what = band.state == OperatorState::Draining
                                         ? tr("Draining by an operator: no new requests")
                                         : tr("Disabled by an operator: no traffic");
                const QString when = current
                                         ? tr("since %1 (%2)")
                                               .arg(clockTime(band.startMs),
                                                    formatDuration(band.endMs - band.startMs))
                                         : tr("%1 – %2 (%3)")
                                               .arg(clockTime(band.startMs), clockTime(band.endMs),
                                                    formatDuration(band.endMs - band.startMs));
                return QStringLiteral("<b>%1</b><br>%2<br>%3").arg(provider, what, when);
            }
        }
    }

    for (const LaneBand &band : lane.bands(m_model.nowMs())) {
        if (atMs < band.startMs || atMs >= band.endMs)
            continue;
        const bool current = band.endMs >= m_model.nowMs();
        QString what = laneStateName(band.state);
        if (band.state == LaneState::Ramping)
            what = tr("Ramping: closed after a recovery, taking a growing share of traffic");
        const QString when =
            current ? tr("since %1 (%2)")
                          .arg(clockTime(band.startMs), formatDuration(band.endMs - band.startMs))
                    : tr("%1 – %2 (%3)")
                          .arg(clockTime(band.startMs), clockTime(band.endMs),
                               formatDuration(band.endMs - band.startMs));
        return QStringLiteral("<b>%1</b><br>%2<br>%3").arg(provider, what.toHtmlEscaped(), when);
    }
    return {};
}

bool BreakerTimelineView::event(QEvent *event)
{
    if (showToolTipAt(this, event, [this](const QPoint &at) { return toolTipAt(at); }))
        return true;
    if (event->type() == QEvent::LanguageChange || event->type() == QEvent::FontChange)
        update();
    return QWidget::event(event);
}

void BreakerTimelineView::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    m_axis.setWidth(plotRect().width());
}

void BreakerTimelineView::wheelEvent(QWheelEvent *event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0.0) {
        event->ignore();
        return;
    }
    const bool wasFollowing = m_axis.following();
    const qint64 oldSpan = m_axis.spanMs();
    m_axis.zoom(event->position().x() - plotRect().left(), steps);
    afterAxisMoved(wasFollowing, oldSpan);
    update();
    event->accept();
}

void BreakerTimelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragX = event->position().x();
        setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QWidget::mousePressEvent(event);
}

void BreakerTimelineView::mouseMoveEvent(QMouseEvent *event)
{
    m_hoverX = event->position().x();
    if (m_dragX) {
        const bool wasFollowing = m_axis.following();
        m_axis.pan(event->position().x() - *m_dragX);
        m_dragX = event->position().x();
        afterAxisMoved(wasFollowing, m_axis.spanMs());
    }
    update();
}

void BreakerTimelineView::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && m_dragX) {
        m_dragX.reset();
        setCursor(Qt::OpenHandCursor);
        event->accept();
        return;
    }
    QWidget::mouseReleaseEvent(event);
}

void BreakerTimelineView::mouseDoubleClickEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        followNow();
        event->accept();
        return;
    }
    QWidget::mouseDoubleClickEvent(event);
}

void BreakerTimelineView::leaveEvent(QEvent *event)
{
    m_hoverX.reset();
    update();
    QWidget::leaveEvent(event);
}

void BreakerTimelineView::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), Qt::white);
    painter.setRenderHint(QPainter::Antialiasing);
    const Geometry g = geometry();
    const QRectF plot = plotRect();

    paintLegend(painter, QRectF(0, 0, width(), g.legendHeight));

    if (m_model.lanes().isEmpty()) {
        painter.setPen(quietColor);
        painter.drawText(QRectF(0, g.legendHeight, width(), height() - g.legendHeight),
                         Qt::AlignCenter | Qt::TextWordWrap,
                         tr("No providers yet. Each provider gets a lane here once the engine "
                            "reports it."));
        return;
    }

    // Grid lines under everything, at the axis ticks.
    const double tickSpacing =
        QFontMetricsF(smallFont(font())).horizontalAdvance(QStringLiteral("00:00:00")) + 24.0;
    painter.setPen(QPen(gridColor, 1.0));
    for (const qint64 tick : m_axis.ticks(tickSpacing)) {
        const double x = std::round(plot.left() + m_axis.xOf(tick)) + 0.5;
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }

    for (int index = 0; index < m_model.lanes().size(); ++index)
        paintLane(painter, index, m_model.lanes().at(index));

    paintAxis(painter);

    if (m_hoverX && *m_hoverX >= plot.left() && *m_hoverX <= plot.right() && !m_dragX) {
        painter.setPen(QPen(QColor(0x9c, 0xa3, 0xaf), 1.0, Qt::DashLine));
        const double x = std::round(*m_hoverX) + 0.5;
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    }
}

void BreakerTimelineView::paintLegend(QPainter &painter, const QRectF &area) const
{
    const QFontMetricsF metrics(font());
    const double swatchWidth = 14.0;
    const double swatchHeight = 10.0;
    const double centerY = area.center().y();
    double x = area.left() + geometry().labelWidth;
    const double right = area.right() - kPlotRightMargin;
    painter.setFont(font());

    const auto item = [&](const QString &text, auto &&paintSwatch) {
        const double needed = swatchWidth + 6.0 + metrics.horizontalAdvance(text);
        if (x + needed > right)
            return false; // a narrow card shows fewer entries rather than clipped ones
        const QRectF swatch(x, centerY - swatchHeight / 2.0, swatchWidth, swatchHeight);
        paintSwatch(swatch);
        painter.setPen(quietColor);
        painter.drawText(QRectF(swatch.right() + 6.0, area.top(), needed, area.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, text);
        x += needed + 16.0;
        return true;
    };
    for (const LaneState state :
         {LaneState::Closed, LaneState::Ramping, LaneState::HalfOpen, LaneState::Open}) {
        const bool shown = item(laneStateName(state), [&](const QRectF &swatch) {
            painter.setPen(Qt::NoPen);
            painter.setBrush(laneStateColor(state));
            painter.drawRoundedRect(swatch, 2.0, 2.0);
        });
        if (!shown)
            return;
    }
    x += 8.0;
    for (const OperatorState state : {OperatorState::Disabled, OperatorState::Draining}) {
        const bool shown = item(operatorStateName(state), [&](const QRectF &swatch) {
            paintOperatorStripe(painter, swatch, state);
        });
        if (!shown)
            return;
    }
    x += 8.0;
    const bool transitionShown = item(tr("Transition"), [&](const QRectF &swatch) {
        const double middle = swatch.center().x();
        painter.setPen(QPen(markerColor, 1.5));
        painter.drawLine(QPointF(middle, swatch.top()), QPointF(middle, swatch.bottom() + 2.0));
        painter.setPen(Qt::NoPen);
        painter.setBrush(markerColor);
        painter.drawPath(markerHead(middle, swatch.top()));
    });
    if (!transitionShown)
        return;
    item(tr("Operator or probe"), [&](const QRectF &swatch) {
        painter.setPen(QPen(Qt::white, 1.0));
        painter.setBrush(operatorInk(OperatorState::Disabled));
        painter.drawPath(noteDiamond(swatch.center()));
    });
}

void BreakerTimelineView::paintLane(QPainter &painter, int index, const TimelineLane &lane) const
{
    const Geometry g = geometry();
    const QRectF plot = plotRect();
    const QRectF band = bandRect(index);
    const QRectF stripe = operatorStripeRect(index);
    const qint64 nowMs = m_model.nowMs();
    const auto xOf = [&](qint64 atMs) {
        return std::clamp(plot.left() + m_axis.xOf(atMs), plot.left() - 2.0, plot.right() + 2.0);
    };

    // The provider's name, level with its band.
    painter.setPen(labelColor);
    painter.setFont(font());
    const QFontMetricsF metrics(font());
    painter.drawText(QRectF(4.0, band.top() - 4.0, g.labelWidth - 14.0, band.height() + 8.0),
                     Qt::AlignLeft | Qt::AlignVCenter,
                     metrics.elidedText(lane.providerId, Qt::ElideRight, g.labelWidth - 14.0));

    // A hairline between lanes.
    painter.setPen(QPen(separatorColor, 1.0));
    const double bottom = std::round(plot.top() + g.laneHeight * (index + 1)) - 0.5;
    if (index + 1 < m_model.lanes().size())
        painter.drawLine(QPointF(0, bottom), QPointF(plot.right(), bottom));

    painter.save();
    painter.setClipRect(plot);

    // Before the lane's history: hatched and labelled where it was dropped, a faint dotted line
    // where the console simply had not seen the provider yet.
    const double knownX = xOf(lane.knownSinceMs);
    if (knownX > plot.left()) {
        const QRectF before(plot.left(), band.top(), knownX - plot.left(),
                            stripe.bottom() - band.top());
        if (lane.olderHistoryDropped) {
            painter.fillRect(before, QColor(0xf8, 0xfa, 0xfc));
            painter.fillRect(before, QBrush(QColor(0xcb, 0xd5, 0xe1), Qt::FDiagPattern));
            painter.setPen(QPen(droppedColor, 1.0, Qt::DashLine));
            painter.drawLine(QPointF(knownX, before.top()), QPointF(knownX, before.bottom()));
            const QString text = tr("older history dropped");
            QFont italic = smallFont(font());
            italic.setItalic(true);
            const QFontMetricsF small(italic);
            const double textWidth = small.horizontalAdvance(text) + 10.0;
            if (textWidth <= before.width()) {
                painter.setFont(italic);
                const QRectF label(before.right() - textWidth - 4.0,
                                   band.center().y() - small.height() / 2.0 - 1.0, textWidth,
                                   small.height() + 2.0);
                painter.setPen(Qt::NoPen);
                painter.setBrush(QColor(255, 255, 255, 230));
                painter.drawRoundedRect(label, 3.0, 3.0);
                painter.setPen(QColor(0x64, 0x74, 0x8b));
                painter.drawText(label, Qt::AlignCenter, text);
            }
        } else {
            painter.setPen(QPen(QColor(0xd1, 0xd5, 0xdb), 1.0, Qt::DotLine));
            painter.drawLine(QPointF(plot.left(), band.center().y()),
                             QPointF(knownX, band.center().y()));
        }
    }

    // The breaker's bands.
    painter.setPen(Qt::NoPen);
    for (const LaneBand &part : lane.bands(nowMs)) {
        if (part.endMs < m_axis.startMs() || part.startMs > m_axis.endMs())
            continue;
        const double left = xOf(part.startMs);
        const double right = xOf(part.endMs);
        const QRectF rect(left, band.top(), std::max(1.0, right - left), band.height());
        if (part.state == LaneState::Ramping) {
            // The share grows across the ramp: pale at its start, full closed-green at its end.
            QLinearGradient ramp(QPointF(plot.left() + m_axis.xOf(part.startMs), 0),
                                 QPointF(plot.left() + m_axis.xOf(part.endMs), 0));
            ramp.setColorAt(0.0, rampStartColor);
            ramp.setColorAt(1.0, laneStateColor(LaneState::Ramping));
            painter.fillRect(rect, ramp);
        } else {
            painter.fillRect(rect, laneStateColor(part.state));
        }
    }

    // The operator's overlay, under the band: it never covers the breaker's colours.
    const QFont small = smallFont(font());
    const QFontMetricsF smallMetrics(small);
    for (const OperatorBand &part : lane.operatorBands(nowMs)) {
        if (part.endMs < m_axis.startMs() || part.startMs > m_axis.endMs())
            continue;
        const double left = xOf(part.startMs);
        const double right = xOf(part.endMs);
        const QRectF rect(left, stripe.top(), std::max(1.0, right - left), stripe.height());
        paintOperatorStripe(painter, rect, part.state);
        const QString text = operatorStateName(part.state);
        const double textWidth = smallMetrics.horizontalAdvance(text) + 8.0;
        // Past the diamond of the event that began the stretch.
        if (textWidth + 10.0 <= rect.width()) {
            const QRectF label(std::max(rect.left(), plot.left()) + 7.0, rect.top(), textWidth,
                               rect.height());
            painter.setPen(Qt::NoPen);
            painter.setBrush(operatorPaper(part.state));
            painter.drawRect(label);
            painter.setFont(small);
            painter.setPen(operatorInk(part.state));
            painter.drawText(label, Qt::AlignCenter, text);
        }
    }

    // Markers: a tick through the band for each transition, a small diamond on the stripe for
    // an event that left the breaker where it was.
    for (const LaneMarker &marker : lane.markers) {
        if (marker.atMs < m_axis.startMs() || marker.atMs > m_axis.endMs())
            continue;
        const double x = std::round(plot.left() + m_axis.xOf(marker.atMs)) + 0.5;
        if (marker.isTransition()) {
            painter.setPen(QPen(markerColor, 1.5));
            painter.drawLine(QPointF(x, band.top() - 1.0), QPointF(x, band.bottom() + 1.0));
            painter.setPen(Qt::NoPen);
            painter.setBrush(strongColor(BreakerTimelineModel::laneStateOf(marker.to)));
            painter.drawPath(markerHead(x, band.top()));
        } else {
            painter.setPen(QPen(Qt::white, 1.0));
            painter.setBrush(operatorInk(marker.operatorState));
            painter.drawPath(noteDiamond(QPointF(x, stripe.center().y())));
        }
    }
    painter.restore();
}

void BreakerTimelineView::paintAxis(QPainter &painter) const
{
    const QRectF plot = plotRect();
    const QFont small = smallFont(font());
    const QFontMetricsF metrics(small);
    painter.setFont(small);
    painter.setPen(QPen(separatorColor, 1.0));
    const double axisY = std::round(plot.bottom()) + 0.5;
    painter.drawLine(QPointF(plot.left(), axisY), QPointF(plot.right(), axisY));

    const double tickSpacing = metrics.horizontalAdvance(QStringLiteral("00:00:00")) + 24.0;
    const bool withSeconds = m_axis.tickStepMs(tickSpacing) < 60'000;
    painter.setPen(quietColor);
    for (const qint64 tick : m_axis.ticks(tickSpacing)) {
        const double x = plot.left() + m_axis.xOf(tick);
        const QString text = clockTime(tick, withSeconds);
        const double textWidth = metrics.horizontalAdvance(text);
        if (x - textWidth / 2.0 < plot.left() - 4.0 || x + textWidth / 2.0 > width())
            continue;
        painter.drawLine(QPointF(x, axisY), QPointF(x, axisY + 3.0));
        painter.drawText(
            QRectF(x - textWidth / 2.0 - 2.0, axisY + 3.0, textWidth + 4.0, metrics.height() + 2.0),
            Qt::AlignCenter, text);
    }

    if (m_hoverX && *m_hoverX >= plot.left() && *m_hoverX <= plot.right() && !m_dragX) {
        const QString text = clockTime(m_axis.timeAt(*m_hoverX - plot.left()));
        const double textWidth = metrics.horizontalAdvance(text) + 10.0;
        const double left =
            std::clamp(*m_hoverX - textWidth / 2.0, plot.left(), double(width()) - textWidth - 1.0);
        const QRectF pill(left, axisY + 2.0, textWidth, metrics.height() + 3.0);
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(0x1f, 0x29, 0x37));
        painter.drawRoundedRect(pill, 3.0, 3.0);
        painter.setPen(Qt::white);
        painter.drawText(pill, Qt::AlignCenter, text);
    }
}

} // namespace switchyard::ui
