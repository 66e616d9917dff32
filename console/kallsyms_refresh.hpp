// Kernel symbols that follow the modules: a run that names kernel addresses
// for a long time (vtice profile, a probe program's kstack) reads kallsyms
// again when a module comes or goes, so a module loaded mid-run is named
// from then on. The module list is looked at once a second; the reread runs
// in the background, because reading kallsyms takes the kernel a while and
// the rings must be drained meanwhile.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include "symbol_source.hpp"

namespace vtice::console {

class KallsymsRefresh {
public:
	// kallsyms: the symbols to read again; modules: the list whose names
	// are compared (/proc/modules; its other fields, use counts and
	// state, change without any text moving).
	explicit KallsymsRefresh(std::string kallsyms, std::string modules = "/proc/modules");

	// Called from a run's poll loop with the time now: the fresh symbols
	// once a reread that a change of the module list started is done;
	// null otherwise (also when the reread failed: the old names stay).
	std::unique_ptr<dbg::SymbolList> poll(std::uint64_t now_ns);

private:
	bool modules_changed();

	std::string kallsyms_, modules_, last_modules_;
	std::uint64_t last_look_ns_ = 0;
	// The symbols alone, or null: GCC 12 warns falsely (-Wfree-nonheap-object)
	// on a future that holds the Result itself.
	std::future<std::unique_ptr<dbg::SymbolList>> reread_;
};

}  // namespace vtice::console
