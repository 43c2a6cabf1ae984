#pragma once

#include "config/breaker_config.h"

namespace switchyard::config {

// Retries, admission and the degradation ladder. Filled by checkResilienceSections
// (resilience_section.cpp).
struct RetryConfig {};
struct AdmissionConfig {};
struct DegradationConfig {};

// Everything that keeps requests answered while providers fail.
struct ResilienceConfig {
    BreakerConfig breaker; // breaker_config.h: circuit breaker per endpoint
    ProbeConfig probes;    // breaker_config.h: active health probes
    RetryConfig retries;
    AdmissionConfig admission;
    DegradationConfig degradation;
};

} // namespace switchyard::config
