// A profile sample's kernel call stack: the RIP the CPU was at, then the
// return addresses the kernel's ORC tables find in the stack bytes the
// hypervisor copied. The tables are the running kernel's, read from
// /proc/kcore where /proc/kallsyms places them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profile_samples.hpp"
#include "symbol_source.hpp"
#include "symbols/orc.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

struct SampleStack {
	std::vector<std::uint64_t> frames;	// leaf first; every frame but the leaf is a return address
	bool truncated = false;	// the walk left the copied bytes (or ORC gave up) before the stack's end
};

// How deep vtice profile and kstack walk a sample's stack.
inline constexpr std::size_t kMaxSampleFrames = 128;

// Walks at most max_frames frames. Without tables (orc null), the leaf alone.
SampleStack unwind_sample(const symbols::OrcTable *orc, const trace::ProfileSample &sample, std::size_t max_frames);

// The running kernel's ORC tables: their bounds from symbols, their bytes from kcore_path.
Result<std::unique_ptr<symbols::OrcTable>> load_running_orc(const dbg::SymbolSource &symbols,
							     const std::string &kcore_path);

}  // namespace vtice::console
