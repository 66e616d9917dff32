// kstack's text for `probe` through the debug stub: each hit's copied stack
// unwound with the session's ORC tables (the kernel's, as `bt` uses them)
// and the loaded modules' own, and named with the session's symbols. The
// modules are found by walking the kernel's list of modules through the
// stub (module_orc.hpp) when the run starts, and again when a stack ends in
// text none of them holds (a module loaded since); a module's tables,
// kilobytes over a serial line, are read the first time a stack ends in its
// text. Used while the machine is stopped for a drain (the stub source
// feeds the records before it resumes).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernel_btf.hpp"
#include "module_orc.hpp"
#include "profile_report.hpp"
#include "session.hpp"
#include "symbols/orc.hpp"

namespace vtice::console {

class StubStacks {
public:
	// Warns (once) when the session has no ORC tables or the modules cannot be found.
	StubStacks(dbg::Session &session, KernelBtf &btf);

	// Leaf first, a frame a line.
	std::string text(const trace::ProfileSample &s);

private:
	symbols::MemoryReader reader();
	void walk_module_list(KernelBtf &btf);
	Result<ModuleList> modules_in_memory(KernelBtf &btf);
	ListedModule *module_of(std::uint64_t address);
	bool load_module_of(std::uint64_t address);

	dbg::Session &session_;
	KernelBtf *btf_ = nullptr;	// null: the list cannot be walked (again)
	FrameNamer namer_;
	std::optional<symbols::OrcTables> tables_;
	std::vector<ListedModule> modules_;
	std::vector<symbols::OrcTable> loaded_;
	std::set<std::pair<std::string, std::uint64_t>> asked_;	// (name, text) of the modules asked for their tables
	std::set<std::uint64_t> walked_for_;	// pages of frames the list was walked again for
	std::set<std::string> warned_;
};

}  // namespace vtice::console
