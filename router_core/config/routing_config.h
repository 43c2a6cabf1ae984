#pragma once

namespace switchyard::config {

// Tiers, rules, the gearbox, scoring weights and the fallback chain, as parsed from the file.
// Filled by checkRoutingSections (routing_section.cpp).
struct RoutingConfig {};

} // namespace switchyard::config
