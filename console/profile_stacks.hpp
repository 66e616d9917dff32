// A profile sample's kernel call stack: the RIP the CPU was at, then the
// return addresses the kernel's ORC tables find in the stack bytes the
// hypervisor copied. The tables are the running kernel's, read from
// /proc/kcore where /proc/kallsyms places them, and its modules'
// (module_orc.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel_btf.hpp"
#include "module_orc.hpp"
#include "profile_samples.hpp"
#include "symbol_source.hpp"
#include "trace/kcore.hpp"
#include "symbols/orc.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

struct SampleStack {
	std::vector<std::uint64_t> frames;	// leaf first; every frame but the leaf is a return address
	bool truncated = false;	// the walk left the copied bytes (or ORC gave up) before the stack's end
};

// How deep vtice profile and kstack walk a sample's stack.
inline constexpr std::size_t kMaxSampleFrames = 128;

// The table whose text holds ip, or null.
using OrcLookup = std::function<const symbols::OrcTable *(std::uint64_t ip)>;

// Walks at most max_frames frames. Without tables (table_for empty), the
// leaf alone; a frame in text no table covers ends the walk (truncated).
SampleStack unwind_sample(const OrcLookup &table_for, const trace::ProfileSample &sample, std::size_t max_frames);
// The same over a set of tables (orc null: none).
SampleStack unwind_sample(const symbols::OrcTables *orc, const trace::ProfileSample &sample, std::size_t max_frames);

// The running kernel's ORC tables and its modules'.
class RunningOrc {
public:
	// The kernel's: their bounds from symbols, their bytes from kcore_path.
	// The modules' need the kernel's BTF; without it, or without a module's
	// tables, that module's frames end their stacks, and warnings() says why.
	static Result<std::unique_ptr<RunningOrc>> load(const dbg::SymbolSource &symbols, const std::string &kcore_path,
							KernelBtf &btf);

	const symbols::OrcTables &tables() const { return tables_; }
	// A module came or went: the modules' tables are read again.
	void reload_modules();
	const std::vector<std::string> &warnings() const { return warnings_; }

private:
	RunningOrc(dbg::Kcore kcore, symbols::OrcTable kernel) : kcore_(std::move(kcore)), tables_(std::move(kernel)) {}
	symbols::MemoryReader reader() const;

	dbg::Kcore kcore_;
	symbols::OrcTables tables_;
	std::optional<ModuleOrcLayout> layout_;
	std::vector<std::string> skipped_;	// the last reload's modules without tables, with why
	std::vector<std::string> warnings_;
};

}  // namespace vtice::console
