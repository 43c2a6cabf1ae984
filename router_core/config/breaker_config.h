#pragma once

namespace switchyard::config {

// The circuit breaker per endpoint and the active health probes. Filled by checkHealthSections
// (breaker_section.cpp).
struct BreakerConfig {};
struct ProbeConfig {};

} // namespace switchyard::config
