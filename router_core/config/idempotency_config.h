#pragma once

#include <QtGlobal>
#include <chrono>

namespace switchyard::config {

// The `idempotency` section (docs/configuration.md): the duplicate guard on `Idempotency-Key`
// (docs/resilience.md). A request that carries the header is run once within the window; a
// duplicate gets the stored answer again.
struct IdempotencyConfig {
    bool enabled = true; // off: the header is ignored, as if it were not sent
    // How long an answer is kept and a key held: long enough for a client's own retries (the
    // OpenAI SDKs give up within about a minute), short enough that memory stays bounded.
    std::chrono::milliseconds window{std::chrono::minutes(10)};
    // A client's `x-request-id` counts as its idempotency key when it sends no Idempotency-Key.
    // Off by default: many clients send a fresh id per attempt, some reuse one per session.
    bool requestIdHeader = false;
    // An answer larger than this (its body or event stream) is not kept: its key is released.
    // A long streamed answer is about 200 bytes per token event: 1 MiB holds about 5,000.
    qint64 maxAnswerBytes = 1024 * 1024;
    // Answers kept at once on a node; beyond it the one nearest its end is dropped. With the
    // per-answer bound, at most 1 GiB in the worst case; a few MB for answers of a few KB.
    int maxAnswers = 1000;

    friend bool operator==(const IdempotencyConfig &, const IdempotencyConfig &) = default;
};

} // namespace switchyard::config
