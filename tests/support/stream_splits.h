#pragma once

#include <QByteArray>
#include <QList>
#include <QRandomGenerator>

namespace switchyard::testing {

// Every way the stream tests cut a byte stream before parsing it, as reads from a socket would:
// whole, in two at every byte, and in many pieces at random places (seeded, so a failure can be
// replayed). Each split is the ascending positions where a piece ends; the last piece runs to
// the end.
inline QList<QList<qsizetype>> streamSplits(const QByteArray &wire)
{
    QList<QList<qsizetype>> splits{QList<qsizetype>()};
    for (qsizetype cut = 1; cut < wire.size(); ++cut)
        splits.append(QList<qsizetype>{cut});
    QRandomGenerator random(20240601);
    for (int run = 0; run < 40; ++run) {
        QList<qsizetype> cuts;
        qsizetype at = 0;
        while (true) {
            at += 1 + random.bounded(17);
            if (at >= wire.size())
                break;
            cuts.append(at);
        }
        splits.append(cuts);
    }
    return splits;
}

} // namespace switchyard::testing
