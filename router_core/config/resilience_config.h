#pragma once

namespace switchyard::config {

// Breakers, retries, admission, probes and the degradation ladder, as parsed from the file.
// Filled by checkResilienceSections (resilience_section.cpp).
struct ResilienceConfig {};

} // namespace switchyard::config
