#pragma once

#include <QHash>
#include <QList>
#include <QString>

namespace switchyard::metrics {

// The values one label may take, each with a small id, so recording a sample looks up a string
// the request already holds and never builds one. Only names from config or from a closed set
// are added; anything else a request carries counts as the fallback (id 0), so no client can
// grow a metric's series. Ids are never taken back: a name dropped by a config change keeps its
// series, and counters never restart under a scraper.
class LabelDictionary {
public:
    explicit LabelDictionary(QString fallback) { m_values.append(std::move(fallback)); }

    static constexpr int kFallback = 0;
    static constexpr int kMaxId = 0xffff;

    // The id of `key`, added when new; it renders as `rendered`, or as the key itself when null.
    // A value that renders empty leaves the label out of the series.
    int add(const QString &key, const QString &rendered = QString());
    // The id of `key`, or kFallback. Hashes the key; allocates nothing.
    int find(const QString &key) const { return m_ids.value(key, kFallback); }
    bool contains(const QString &key) const { return m_ids.contains(key); }
    const QString &value(int id) const { return m_values.at(id); }
    int size() const { return int(m_values.size()); }

private:
    QList<QString> m_values;
    QHash<QString, int> m_ids;
};

} // namespace switchyard::metrics
