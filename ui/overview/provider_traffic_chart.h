#pragma once

#include <QChartView>
#include <QList>

QT_BEGIN_NAMESPACE
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace switchyard::ui {

class ProviderTrafficRates;

// Calls per second to each provider over the last five minutes, one line per provider with a
// legend, in the look of the request-rate chart. A failover drill reads straight off it: the
// tripped provider's line falls to zero, the others rise, and it climbs back along its ramp.
class ProviderTrafficChart : public QChartView {
    Q_OBJECT
public:
    explicit ProviderTrafficChart(QWidget *parent = nullptr);

    // Redraws from `rates`, its newest point at the right edge.
    void setRates(const ProviderTrafficRates &rates);

    // Distinct from the breaker colours, so a line is never read as a state.
    static QColor providerColor(int index);
    double axisMaximum() const;
    QStringList shownProviders() const;

private:
    QList<QLineSeries *> m_lines;
    QValueAxis *m_timeAxis = nullptr;
    QValueAxis *m_rateAxis = nullptr;
};

} // namespace switchyard::ui
