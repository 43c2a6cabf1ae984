#pragma once

#include "metrics/label_dictionary.h"

#include <QByteArray>
#include <QHash>
#include <array>
#include <initializer_list>
#include <span>
#include <vector>

namespace switchyard::metrics {

// Upper bounds of a histogram's buckets, ascending; the +Inf bucket is implicit.
using BucketBounds = std::span<const double>;

namespace buckets {
// OpenTelemetry's advice for gen_ai.server.request.duration (seconds), used for every request
// duration so the two families compare bucket for bucket.
extern const std::array<double, 14> requestSeconds;
// OpenTelemetry's advice for gen_ai.server.time_to_first_token (seconds).
extern const std::array<double, 16> firstTokenSeconds;
// gen_ai.client.token.usage: 1, 4, 16, ... 67108864 (powers of 4).
extern const std::array<double, 14> tokens;
// The gateway's own time and the engine loop's lateness: 50 µs to 1 s, where they live.
extern const std::array<double, 13> gatewaySeconds;
} // namespace buckets

// One series: the ids of its label values, in the family's label order.
struct SeriesKey {
    static constexpr int kMaxLabels = 6;
    std::array<quint16, kMaxLabels> ids{};

    SeriesKey() = default;
    SeriesKey(std::initializer_list<int> labelIds);
    friend bool operator==(const SeriesKey &, const SeriesKey &) = default;
    friend bool operator<(const SeriesKey &left, const SeriesKey &right)
    {
        return left.ids < right.ids;
    }
};
size_t qHash(const SeriesKey &key, size_t seed = 0) noexcept;

// A label of a family: its name and the dictionary its ids come from.
struct LabelSpec {
    QByteArray name;
    const LabelDictionary *values = nullptr;
};

// Counts of observations per bucket, as a fixed array made once when the series is first seen:
// observing is a search over the bounds and three additions.
class Histogram {
public:
    Histogram() = default;
    explicit Histogram(BucketBounds bounds) : m_bounds(bounds), m_counts(bounds.size() + 1, 0) {}

    void observe(double value);
    BucketBounds bounds() const { return m_bounds; }
    // Observations in bucket `index` alone (not cumulative); index bounds().size() is +Inf.
    quint64 bucketCount(int index) const { return m_counts[size_t(index)]; }
    quint64 count() const { return m_count; }
    double sum() const { return m_sum; }

private:
    BucketBounds m_bounds;
    std::vector<quint64> m_counts;
    quint64 m_count = 0;
    double m_sum = 0.0;
};

// Writes the Prometheus text exposition format (version 0.0.4): one HELP and one TYPE per
// family, label values escaped, histograms as cumulative _bucket series with _sum and _count.
class ExpositionWriter {
public:
    void family(QByteArrayView name, QByteArrayView help, QByteArrayView type);
    // `labels` is the text between the braces, already escaped; empty for none.
    void sample(QByteArrayView name, QByteArrayView labels, quint64 value);
    void sample(QByteArrayView name, QByteArrayView labels, double value);
    void histogram(QByteArrayView name, QByteArrayView labels, const Histogram &histogram);

    // `name="value"` pairs joined by commas; labels whose value is empty are left out.
    static QByteArray labelsText(std::span<const LabelSpec> labels, const SeriesKey &key);
    static void appendLabel(QByteArray &labels, QByteArrayView name, const QString &value);
    static QByteArray number(double value);

    QByteArray take() { return std::move(m_text); }

private:
    QByteArray m_text;
};

// A counter family whose series are keyed by label ids. Adding to a series seen before takes a
// hash of a few integers and no allocation; a new label combination allocates once.
class CounterFamily {
public:
    CounterFamily(QByteArray name, QByteArray help, std::vector<LabelSpec> labels)
        : m_name(std::move(name)), m_help(std::move(help)), m_labels(std::move(labels))
    {}

    void add(const SeriesKey &key, quint64 amount = 1) { m_series[key] += amount; }
    // Makes the series exist at 0, for closed sets a dashboard should see before they happen.
    void seed(const SeriesKey &key)
    {
        if (!m_series.contains(key))
            m_series.insert(key, 0);
    }
    quint64 value(const SeriesKey &key) const { return m_series.value(key, 0); }
    void render(ExpositionWriter &writer) const;

private:
    QByteArray m_name;
    QByteArray m_help;
    std::vector<LabelSpec> m_labels;
    QHash<SeriesKey, quint64> m_series;
};

// A histogram family with the same keying as CounterFamily; every series has the same bounds.
class HistogramFamily {
public:
    HistogramFamily(QByteArray name, QByteArray help, std::vector<LabelSpec> labels,
                    BucketBounds bounds)
        : m_name(std::move(name)), m_help(std::move(help)), m_labels(std::move(labels)),
          m_bounds(bounds)
    {}

    void observe(const SeriesKey &key, double value);
    const Histogram *series(const SeriesKey &key) const;
    void render(ExpositionWriter &writer) const;

private:
    QByteArray m_name;
    QByteArray m_help;
    std::vector<LabelSpec> m_labels;
    BucketBounds m_bounds;
    QHash<SeriesKey, Histogram> m_series;
};

} // namespace switchyard::metrics
