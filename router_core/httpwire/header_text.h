#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace switchyard::httpwire {

// A header's name or value as a QByteArray, for the header lists every request and every
// provider's answer are kept in. Most heads repeat the same few words (Host, Content-Type,
// application/json, keep-alive): those come back as QByteArrays over static text, which copy and
// free without the heap; any other text is copied. The two heads of a plain request took 23 of
// its 94 allocations, one per name and one per value (docs/benchmarks.md).
QByteArray headerText(QByteArrayView text);

// `name` in lower case, as a provider's answer headers are kept; common names allocate nothing.
QByteArray lowerCaseHeaderName(QByteArrayView name);

} // namespace switchyard::httpwire
