#pragma once

#include <QChartView>
#include <QList>
#include <QPointF>

QT_BEGIN_NAMESPACE
class QAreaSeries;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace switchyard::ui {

// A small live line of requests per second over the last minute. Samples are timestamped by the
// caller so the buffer logic does not depend on the wall clock; the buffer is bounded both by
// age and by count, so a stalled clock or a flood of snapshots cannot grow it.
class RequestRateChart : public QChartView {
    Q_OBJECT
public:
    static constexpr double windowSeconds = 60.0;
    // Ten snapshots per second (the most the engine sends) for sixty seconds, plus the one
    // sample kept from just before the window.
    static constexpr qsizetype maxSamples = 601;

    explicit RequestRateChart(QWidget *parent = nullptr);

    // Appends one sample taken at `secondsSinceStart` (monotonic) and redraws.
    void addSample(double secondsSinceStart, double requestsPerSecond);

    qsizetype sampleCount() const { return m_samples.size(); }
    double axisMaximum() const;

private:
    QList<QPointF> m_samples; // x: seconds since start, y: requests per second
    QLineSeries *m_line = nullptr;
    QAreaSeries *m_area = nullptr;
    QValueAxis *m_timeAxis = nullptr;
    QValueAxis *m_rateAxis = nullptr;
};

} // namespace switchyard::ui
