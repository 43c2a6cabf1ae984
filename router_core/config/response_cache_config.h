#pragma once

#include <QtGlobal>
#include <chrono>

namespace switchyard::config {

// `cache:` of a route rule or a model entry (docs/operations.md, "The response cache"): answers
// to requests that mean the same are kept for `ttl` and given again without calling a provider.
// Off unless a rule or a model says it.
struct ResponseCacheConfig {
    // How long an answer is given again. Five minutes covers a test loop's or an agent's
    // repeats without serving an answer long after the model or its prompt changed.
    std::chrono::milliseconds ttl{std::chrono::minutes(5)};
    // `max_bytes`: an answer (its body, or every byte of its event stream) larger than this is
    // not kept. 1 MiB holds a long streamed answer of about 5,000 token events.
    qint64 maxAnswerBytes = 1024 * 1024;
    // `sampled: true`: requests sampled at a temperature above 0 (or at the provider's default,
    // which is above 0 for every chat API) are kept too. Off: such a request asks for a fresh
    // draw each time, and the cache leaves it alone.
    bool sampled = false;
    // Where `cache:`'s value was written, 1-based; 0 for one made by a form.
    int line = 0;
    int column = 0;

    bool sameSettings(const ResponseCacheConfig &other) const
    {
        return ttl == other.ttl && maxAnswerBytes == other.maxAnswerBytes &&
               sampled == other.sampled;
    }
    friend bool operator==(const ResponseCacheConfig &, const ResponseCacheConfig &) = default;
};

// The `response_cache` section: how much one node keeps, and (in a fleet) the fleet's Redis.
// Least recently used answers go first when either bound is reached.
struct ResponseCacheLimits {
    int maxEntries = 10'000;
    // 64 MiB: a workstation's gateway keeps thousands of typical answers (a few KB each) without
    // a memory footprint anyone notices; a server raises it.
    qint64 maxBytes = 64LL * 1024 * 1024;

    friend bool operator==(const ResponseCacheLimits &, const ResponseCacheLimits &) = default;
};

} // namespace switchyard::config
