// The loaded modules' ORC tables through a debug session (the vtice stub,
// QEMU's gdbstub, kgdb), for `bt` and for a probe's kstack: the modules are
// found by walking the kernel's list of modules in its memory
// (module_orc.hpp) the first time a stack reaches text the kernel's own
// tables do not cover, and again when a stack reaches text none of them
// holds (a module loaded since); a module's tables, kilobytes over a serial
// line, are read the first time a stack reaches its text, and kept.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel_btf.hpp"
#include "module_orc.hpp"
#include "orc_unwinder.hpp"
#include "session.hpp"

namespace vtice::console {

class StubModules final : public dbg::ModuleOrcSource {
public:
	// kernel: the running kernel's table, whose flags encoding the modules'
	// share; btf: where struct module's layout comes from.
	StubModules(dbg::Session &session, KernelBtf btf, const symbols::OrcTable &kernel);

	Result<const symbols::OrcTable *> table_for(std::uint64_t ip) override;
	// What the walks left out ("NAME: why"), each once, since the last call.
	std::vector<std::string> take_notes();

private:
	symbols::MemoryReader reader();
	Result<void> walk_module_list();
	const ListedModule *module_of(std::uint64_t ip) const;

	dbg::Session &session_;
	KernelBtf btf_;
	const symbols::OrcTable &kernel_;
	std::optional<Error> list_error_;	// the list cannot be walked: the same answer every time
	std::vector<ListedModule> modules_;
	std::deque<symbols::OrcTable> loaded_;	// a deque: the tables handed out stay where they are
	std::map<std::pair<std::string, std::uint64_t>, Error> failed_;	// (name, text) whose tables could not be read
	std::set<std::uint64_t> walked_for_;	// pages of text the list was walked again for
	std::set<std::string> noted_;
	std::vector<std::string> notes_;
};

// Gives the session's ORC unwinder (if it has one) the modules' tables
// through the session; log: where loading the kernel's types reports.
void unwind_modules_through(dbg::Session &session, dbg::Output &log);

}  // namespace vtice::console
