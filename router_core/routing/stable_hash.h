#pragma once

#include <QByteArrayView>
#include <QStringView>
#include <QtGlobal>

namespace switchyard::routing {

// Hashes that give the same answer in every process and on every machine, so a user stays on
// the same canary side and a session on the same endpoint across restarts and replicas. (qHash
// is seeded per process on purpose, which is exactly wrong here.)

// The splitmix64 finaliser: spreads FNV's weak low bits over the whole word.
constexpr quint64 mixBits(quint64 x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

constexpr quint64 kFnvOffset = 0xcbf29ce484222325ULL;
constexpr quint64 kFnvPrime = 0x100000001b3ULL;

// FNV-1a over UTF-16 code units, then mixed. `seed` separates uses: the canary of one rule does
// not pick the same users as another's.
inline quint64 stableHash(QStringView text, quint64 seed = 0)
{
    quint64 hash = kFnvOffset ^ mixBits(seed);
    for (QChar c : text) {
        hash ^= c.unicode();
        hash *= kFnvPrime;
    }
    return mixBits(hash);
}

inline quint64 stableHash(QByteArrayView bytes, quint64 seed = 0)
{
    quint64 hash = kFnvOffset ^ mixBits(seed);
    for (char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= kFnvPrime;
    }
    return mixBits(hash);
}

// A uniform number in [0, 1) from a hash: its top 53 bits as a double's mantissa.
inline double unitInterval(quint64 hash)
{
    return double(hash >> 11) * (1.0 / 9007199254740992.0);
}

// Rendezvous (highest random weight) hashing: a key goes to the endpoint with the highest
// rendezvousWeight(key, endpoint). Adding an endpoint takes over only the keys for which it
// scores highest, about 1/n of them; removing one moves only its own keys. It is consistent
// hashing without a ring to build or search.
inline quint64 rendezvousWeight(quint64 keyHash, quint64 endpointHash)
{
    return mixBits(keyHash ^ endpointHash);
}

} // namespace switchyard::routing
