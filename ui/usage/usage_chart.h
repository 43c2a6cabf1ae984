#pragma once

#include "ui/usage/usage_series.h"

#include <QChartView>

QT_BEGIN_NAMESPACE
class QBarCategoryAxis;
class QStackedBarSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace switchyard::ui {

// Spend or tokens over a range as stacked bars, one colour per tenant or model (the largest few,
// then "other" in grey), one bar per hour or day. Replaced whole with each report: a usage report
// is a new picture, not a live stream.
class UsageChart : public QChartView {
    Q_OBJECT
public:
    enum class Measure { Spend, Tokens };

    explicit UsageChart(Measure measure, QWidget *parent = nullptr);

    // `noneLabel` names requests without a tenant (or model); `otherLabel` the rest.
    void setData(const UsageChartData &data, const QString &noneLabel, const QString &otherLabel);

    int seriesCount() const;
    double axisMaximum() const;
    QStringList legendNames() const;

private:
    Measure m_measure;
    QStackedBarSeries *m_bars = nullptr;
    QBarCategoryAxis *m_bucketAxis = nullptr;
    QValueAxis *m_valueAxis = nullptr;
};

} // namespace switchyard::ui
