#include "metrics/label_dictionary.h"

namespace switchyard::metrics {

int LabelDictionary::add(const QString &key, const QString &rendered)
{
    if (const auto found = m_ids.constFind(key); found != m_ids.cend())
        return *found;
    // Series keys hold 16-bit ids; a config with more names than that counts the rest as the
    // fallback rather than mixing series.
    if (m_values.size() > kMaxId)
        return kFallback;
    const int id = int(m_values.size());
    m_values.append(rendered.isNull() ? key : rendered);
    m_ids.insert(key, id);
    return id;
}

} // namespace switchyard::metrics
