#pragma once

#include <QStringView>

namespace switchyard::config {

// The config's one wildcard match, of the whole text: `*` any run of characters (including none,
// and `/` and `.`, which model names hold), `?` exactly one; every other character stands for
// itself, case included. Route conditions (`glob`), canned answers (`model`) and a key's
// `models` all read patterns through it. Iterative with one backtracking point: no pattern can
// make it slow.
bool globMatches(QStringView pattern, QStringView text);

} // namespace switchyard::config
