#pragma once

namespace switchyard::config {

// How to speak to an anthropic or mapped provider, as parsed from its entry in the file.
// Filled by checkProviderAdapter (adapter_section.cpp).
struct AdapterConfig {};

} // namespace switchyard::config
