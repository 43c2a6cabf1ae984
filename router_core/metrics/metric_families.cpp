#include "metrics/metric_families.h"

#include <QLocale>
#include <algorithm>
#include <cmath>

namespace switchyard::metrics {

namespace buckets {
const std::array<double, 14> requestSeconds{0.01, 0.02, 0.04, 0.08,  0.16,  0.32,  0.64,
                                            1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92};
const std::array<double, 16> firstTokenSeconds{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                               0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0};
const std::array<double, 14> tokens{1.0,       4.0,       16.0,       64.0,      256.0,
                                    1024.0,    4096.0,    16384.0,    65536.0,   262144.0,
                                    1048576.0, 4194304.0, 16777216.0, 67108864.0};
const std::array<double, 13> gatewaySeconds{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                            0.01,    0.025,  0.05,    0.1,    0.25,  1.0};
} // namespace buckets

SeriesKey::SeriesKey(std::initializer_list<int> labelIds)
{
    Q_ASSERT(labelIds.size() <= size_t(kMaxLabels));
    std::transform(labelIds.begin(), labelIds.end(), ids.begin(),
                   [](int id) { return quint16(id); });
}

size_t qHash(const SeriesKey &key, size_t seed) noexcept
{
    return qHashBits(key.ids.data(), sizeof(key.ids), seed);
}

void Histogram::observe(double value)
{
    // Prometheus buckets are "less than or equal": a value on a bound counts in that bucket.
    const auto bucket = std::lower_bound(m_bounds.begin(), m_bounds.end(), value);
    ++m_counts[size_t(bucket - m_bounds.begin())];
    ++m_count;
    m_sum += value;
}

// ---- the text format ---------------------------------------------------------------------------

namespace {

void appendEscaped(QByteArray &out, QByteArrayView text, bool quotes)
{
    for (const char c : text) {
        if (c == '\\')
            out.append("\\\\");
        else if (c == '\n')
            out.append("\\n");
        else if (quotes && c == '"')
            out.append("\\\"");
        else
            out.append(c);
    }
}

} // namespace

QByteArray ExpositionWriter::number(double value)
{
    if (std::isinf(value))
        return value > 0 ? QByteArrayLiteral("+Inf") : QByteArrayLiteral("-Inf");
    if (std::isnan(value))
        return QByteArrayLiteral("NaN");
    // Whole numbers as integers ("67108864", not "6.7108864e+07"), the rest as the shortest
    // text that reads back as the same double.
    if (value == std::trunc(value) && std::fabs(value) < 1e15)
        return QByteArray::number(qint64(value));
    // Fixed notation where it stays short ("0.00005" rather than "5e-05"), as people write
    // bucket bounds; both read back the same.
    const char format = std::fabs(value) >= 1e-9 ? 'f' : 'g';
    return QByteArray::number(value, format, QLocale::FloatingPointShortest);
}

void ExpositionWriter::family(QByteArrayView name, QByteArrayView help, QByteArrayView type)
{
    m_text.append("# HELP ").append(name).append(' ');
    appendEscaped(m_text, help, false);
    m_text.append("\n# TYPE ").append(name).append(' ').append(type).append('\n');
}

void ExpositionWriter::sample(QByteArrayView name, QByteArrayView labels, quint64 value)
{
    m_text.append(name);
    if (!labels.isEmpty())
        m_text.append('{').append(labels).append('}');
    m_text.append(' ').append(QByteArray::number(value)).append('\n');
}

void ExpositionWriter::sample(QByteArrayView name, QByteArrayView labels, double value)
{
    m_text.append(name);
    if (!labels.isEmpty())
        m_text.append('{').append(labels).append('}');
    m_text.append(' ').append(number(value)).append('\n');
}

void ExpositionWriter::histogram(QByteArrayView name, QByteArrayView labels,
                                 const Histogram &histogram)
{
    const QByteArray bucketName = name.toByteArray() + "_bucket";
    const QByteArray separator = labels.isEmpty() ? QByteArray() : QByteArrayLiteral(",");
    quint64 cumulative = 0;
    const BucketBounds bounds = histogram.bounds();
    for (size_t index = 0; index <= bounds.size(); ++index) {
        cumulative += histogram.bucketCount(int(index));
        const QByteArray bound =
            index < bounds.size() ? number(bounds[index]) : QByteArrayLiteral("+Inf");
        sample(bucketName, labels.toByteArray() + separator + "le=\"" + bound + '"', cumulative);
    }
    sample(name.toByteArray() + "_sum", labels, histogram.sum());
    sample(name.toByteArray() + "_count", labels, histogram.count());
}

void ExpositionWriter::appendLabel(QByteArray &labels, QByteArrayView name, const QString &value)
{
    if (value.isEmpty())
        return;
    if (!labels.isEmpty())
        labels.append(',');
    labels.append(name).append("=\"");
    appendEscaped(labels, value.toUtf8(), true);
    labels.append('"');
}

QByteArray ExpositionWriter::labelsText(std::span<const LabelSpec> labels, const SeriesKey &key)
{
    QByteArray text;
    for (size_t index = 0; index < labels.size(); ++index)
        appendLabel(text, labels[index].name, labels[index].values->value(key.ids[index]));
    return text;
}

// ---- families ----------------------------------------------------------------------------------

namespace {

// Series in the order of their ids, which is config order for config names: a stable scrape.
template <typename Value>
QList<SeriesKey> sortedKeys(const QHash<SeriesKey, Value> &series)
{
    QList<SeriesKey> keys = series.keys();
    std::sort(keys.begin(), keys.end());
    return keys;
}

} // namespace

void CounterFamily::render(ExpositionWriter &writer) const
{
    writer.family(m_name, m_help, "counter");
    for (const SeriesKey &key : sortedKeys(m_series))
        writer.sample(m_name, ExpositionWriter::labelsText(m_labels, key), m_series.value(key));
}

void HistogramFamily::observe(const SeriesKey &key, double value)
{
    auto found = m_series.find(key);
    if (found == m_series.end())
        found = m_series.insert(key, Histogram(m_bounds));
    found->observe(value);
}

const Histogram *HistogramFamily::series(const SeriesKey &key) const
{
    const auto found = m_series.constFind(key);
    return found == m_series.cend() ? nullptr : &*found;
}

void HistogramFamily::render(ExpositionWriter &writer) const
{
    writer.family(m_name, m_help, "histogram");
    for (const SeriesKey &key : sortedKeys(m_series)) {
        writer.histogram(m_name, ExpositionWriter::labelsText(m_labels, key),
                         *m_series.constFind(key));
    }
}

} // namespace switchyard::metrics
