#include "config/glob_pattern.h"

namespace switchyard::config {

bool globMatches(QStringView pattern, QStringView text)
{
    // The classic two-pointer match: on a mismatch, go back to the last `*` and let it take one
    // more character. Linear in practice, no allocation.
    qsizetype p = 0;
    qsizetype t = 0;
    qsizetype starAt = -1;
    qsizetype textAtStar = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == u'?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == u'*') {
            starAt = p++;
            textAtStar = t;
        } else if (starAt >= 0) {
            p = starAt + 1;
            t = ++textAtStar;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == u'*')
        ++p;
    return p == pattern.size();
}

} // namespace switchyard::config
