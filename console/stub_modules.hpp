// The loaded modules' ORC tables and symbols through a debug session (the
// vtice stub, QEMU's gdbstub, kgdb), for `bt`, for naming addresses and for
// a probe's kstack: the modules are found by walking the kernel's list of
// modules in its memory (module_orc.hpp) the first time an address in the
// modules' area needs them, and again for text none of them holds (a
// module loaded since); a module's tables and symbols, kilobytes each over
// a serial line, are read the first time they are needed, and kept while
// the module stays as listed: the first use at each stop reads its struct
// module again (its name, text and ORC tables: a module unloaded and a
// rebuild of it loaded where it was differ there), and a change walks the
// list again and forgets what was read of the old load.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel_btf.hpp"
#include "module_orc.hpp"
#include "module_symbols.hpp"
#include "orc_unwinder.hpp"
#include "session.hpp"

namespace vtice::console {

class StubModules final : public dbg::ModuleSource {
public:
	// kernel: the running kernel's ORC table, whose flags encoding the
	// modules' share (null: no ORC, names only); btf: where struct
	// module's layout comes from; log: progress of reading every
	// module's symbols. What was read of a module is kept until a walk of
	// the list finds it gone or changed.
	StubModules(dbg::Session &session, KernelBtf btf, const symbols::OrcTable *kernel, dbg::Output &log);

	Result<const symbols::OrcTable *> table_for(std::uint64_t ip) override;
	std::optional<SymbolHit> symbolize(std::uint64_t address) override;
	std::optional<std::uint64_t> lookup(std::string_view name) override;
	// The symbol of that name in module (its symbols read if they were
	// not; the list walked again if the module is not in it), a text
	// symbol first; or why none.
	Result<std::uint64_t> lookup_in(std::string_view module, std::string_view name);
	// The module whose symbols have a function of that name (read as
	// lookup() reads them), or why none has; module, when the program
	// names it (fn:msr:msr_read), if it has one.
	Result<std::string> module_of_function(std::string_view name, std::string_view module = {});
	// The functions (text symbols that are C names) of every listed module
	// wanted names, as MODULE:NAME, each such module's symbols read if
	// they were not (log says which, of how many), for patterns; or why
	// the list cannot be walked.
	Result<std::vector<std::string>> function_names(const std::function<bool(std::string_view module)> &wanted);
	// Every module symbol read so far, as a symbol table's entries.
	std::vector<dbg::SymbolList::Entry> symbols_read() const;
	// What the walks and reads left out ("NAME: why"), each once, since the last call.
	std::vector<std::string> take_notes();

private:
	using Key = ListedModule;	// one load of a module, as the list shows it

	Result<void> walk_module_list();
	Result<void> walk_again();
	void forget_unlisted();
	const ListedModule *module_of(std::uint64_t ip) const;
	// Whether m is still loaded as listed: read again once a stop.
	bool still_listed(const ListedModule &m);
	// The listed module with that name (the list walked again when it
	// changed since listed, or is not listed), null when none.
	Result<const ListedModule *> current_module(std::string_view name);
	// The module whose text holds ip (the list walked again once for its
	// page), null when none does.
	Result<const ListedModule *> find_module(std::uint64_t ip);
	const std::vector<ModuleSymbol> &symbols_of(const ListedModule &m);
	// Each listed module's symbols read if they were not (of those wanted
	// names: all when none is given), a progress line a module ("WHY: NAME
	// (2 of 3)").
	void read_every_module(const std::string &why, const std::function<bool(std::string_view)> &wanted = {});
	// The symbol of that name among the symbols read, and whose it is.
	std::optional<std::pair<std::uint64_t, Key>> lookup_read(std::string_view name) const;
	void note(std::string why);

	dbg::Session &session_;
	KernelBtf btf_;
	const symbols::OrcTable *kernel_;
	std::optional<Error> list_error_;	// the list cannot be walked: the same answer every time
	std::vector<ListedModule> modules_;
	std::optional<std::pair<ModuleOrcLayout, ModuleListLayout>> layouts_;
	std::uint64_t confirmed_at_ = 0;	// the session's stop count when confirmed_ was
	std::set<Key> confirmed_;	// the modules read again (or listed) at that stop
	std::map<Key, symbols::OrcTable> loaded_;	// a map: the tables handed out stay where they are
	std::map<Key, Error> failed_;	// the modules whose tables could not be read
	std::optional<Result<ModuleKallsymsLayout>> kallsyms_layout_;
	std::map<Key, std::vector<ModuleSymbol>> symbols_;	// none: they could not be read
	std::set<std::uint64_t> walked_for_;	// pages of text the list was walked again for
	std::set<std::string, std::less<>> looked_for_;	// names every module's symbols were read for
	dbg::Output &log_;
	std::set<std::string> noted_;
	std::vector<std::string> notes_;
};

// Gives the session (its names) and its ORC unwinder (if it has one) the
// modules found through it; log: where loading the kernel's types reports.
void use_modules_through(dbg::Session &session, dbg::Output &log);

}  // namespace vtice::console
