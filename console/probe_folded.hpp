// vtice probe --folded FILE: the maps keyed by a kstack as FlameGraph's
// folded lines ("key;root;...;leaf value"), as vtice profile writes its
// samples: flamegraph.pl draws `profile:hz:99 { @[kstack] = count(); }`.
#pragma once

#include <cstdio>

#include "checker.hpp"
#include "maps.hpp"

namespace vtice::console {

// Whether a map can be folded: one kstack among its keys and a number as
// its value (not a string or a histogram).
bool foldable(const probes::MapInfo &info);

// Its entries, one line each: its other keys first (in order), then the
// stack from its root to its leaf, then the value. Entries whose value is
// not above 0 are left out (a flame graph has no width for them); nothing
// for a map that is not foldable.
void write_folded_map(std::FILE *out, const probes::MapInfo &info, const probes::MapEntries &entries);

}  // namespace vtice::console
