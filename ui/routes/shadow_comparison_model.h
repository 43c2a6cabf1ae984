#pragma once

#include "telemetry/request_record.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QString>
#include <deque>
#include <optional>

namespace switchyard::ui {

// One side of one route's shadow comparison, as the console has seen its records finish.
struct ShadowSide {
    qint64 requests = 0;
    qint64 errors = 0; // status 400 and above
    qint64 tokens = 0; // input and output, as recorded (estimates included)
    double costUsd = 0.0;
    std::deque<qint64> latenciesMs; // of the last ShadowComparisonModel::kLatencySamples
    QString provider;               // of the last record

    double errorRate() const { return requests ? double(errors) / double(requests) : 0.0; }
    qint64 medianLatencyMs() const; // -1 before any request
    double tokensPerRequest() const { return requests ? double(tokens) / double(requests) : 0.0; }
    double costPerRequestUsd() const { return requests ? costUsd / double(requests) : 0.0; }
};

// A route's mirrored live requests and their shadow calls.
struct ShadowTally {
    ShadowSide live;   // live requests that were mirrored (their record names a shadow call)
    ShadowSide shadow; // the shadow calls, but those let go so that live requests had room
};

// Live against shadow for one route at a time (docs/routing.md, "Shadow traffic"): a row per
// measure (requests, error rate, median latency, tokens and cost per request), a column per side
// and the shadow's difference from live. Fed the finished records the console receives; a route
// is offered once a shadow call of it has finished. Only live requests that were mirrored are
// counted, so both sides describe the same requests. Cells change in place; only choosing
// another route resets the model. Each side keeps the latencies of its last kLatencySamples
// requests for the median, so memory stays bounded.
class ShadowComparisonModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { MeasureColumn, LiveColumn, ShadowColumn, DifferenceColumn, ColumnCount };
    Q_ENUM(Column)
    enum Measure {
        RequestsMeasure,
        ErrorRateMeasure,
        MedianLatencyMeasure,
        TokensPerRequestMeasure,
        CostPerRequestMeasure,
        MeasureCount
    };
    Q_ENUM(Measure)
    static constexpr int kLatencySamples = 512;

    explicit ShadowComparisonModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Finished records, oldest first, as a trace feed carries them. The first route seen with a
    // shadow call is shown until another is chosen.
    void addRecords(const QList<telemetry::RequestRecord> &records);
    // Routes with a finished shadow call, in the order the first one finished.
    const QList<QString> &routes() const { return m_routes; }
    const QString &route() const { return m_route; }
    void setRoute(const QString &route);
    // The route's tally; nullptr when it has none.
    const ShadowTally *tally(const QString &route) const;
    void retranslate();

Q_SIGNALS:
    void routesChanged();

private:
    static void count(ShadowSide &side, const telemetry::RequestRecord &record);
    QString measureName(int measure) const;
    QString value(const ShadowSide &side, int measure) const;
    QString difference(int measure) const;
    // Positive: the shadow does worse than live on a measure where less is better.
    std::optional<double> change(int measure) const;

    QHash<QString, ShadowTally> m_tallies;
    QList<QString> m_routes;
    QString m_route;
};

} // namespace switchyard::ui
