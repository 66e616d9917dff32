// The modules' ORC tables and symbols through a debug session (stub_modules.hpp).
#include "stub_modules.hpp"

#include <algorithm>

#include "kallsyms_modules.hpp"

namespace vtice::console {

namespace {

// Where x86-64 loads modules: MODULES_VADDR (above the kernel image's 512
// MiB or, with KASLR, 1 GiB) to MODULES_END (arch/x86/include/asm/pgtable_64_types.h).
// Only an address there sends the console to the kernel's list of modules.
bool in_module_area(std::uint64_t address)
{
	return address >= 0xffffffffa0000000ull && address < 0xffffffffff000000ull;
}

}  // namespace

StubModules::StubModules(dbg::Session &session, KernelBtf btf, const symbols::OrcTable *kernel, dbg::Output &log)
	: session_(session), btf_(std::move(btf)), kernel_(kernel), log_(log)
{
}

// The list as it is now.
Result<void> StubModules::walk_module_list()
{
	auto head = session_.symbols() ? session_.symbols()->lookup("modules") : std::nullopt;
	if (!head)
		return make_error("the session's symbols have no 'modules' (the kernel's list of modules)");
	if (!layouts_) {
		auto types = btf_.types();
		if (!types)
			return types.error();
		auto orc = module_orc_layout(**types);
		if (!orc)
			return orc.error();
		auto list = module_list_layout(**types);
		if (!list)
			return list.error();
		layouts_.emplace(*orc, *list);
	}
	ModuleList listed = list_modules(layouts_->first, layouts_->second, session_.memory_reader(), *head);
	for (std::string &why : listed.skipped)
		note(std::move(why));
	modules_ = std::move(listed.modules);
	confirmed_at_ = session_.stop_count();
	confirmed_ = std::set<Key>(modules_.begin(), modules_.end());
	forget_unlisted();
	return {};
}

// What was read of modules unloaded (or reloaded changed) since: their
// text may hold another's now. A name looked for in vain may be in a
// module loaded since.
void StubModules::forget_unlisted()
{
	std::set<Key> listed(modules_.begin(), modules_.end());
	auto unlisted = [&listed](const auto &entry) { return !listed.count(entry.first); };
	std::size_t forgotten = std::erase_if(symbols_, unlisted) + std::erase_if(failed_, unlisted) +
				std::erase_if(loaded_, unlisted);
	if (forgotten)
		looked_for_.clear();
}

// The list walked again; a list that cannot be walked is said from then on.
Result<void> StubModules::walk_again()
{
	if (list_error_)
		return *list_error_;
	if (auto walked = walk_module_list(); !walked) {
		list_error_ = make_error("the kernel's list of modules could not be walked: " + walked.error().message);
		return *list_error_;
	}
	return {};
}

const ListedModule *StubModules::module_of(std::uint64_t ip) const
{
	for (const ListedModule &m : modules_)
		if (m.text_lo <= ip && ip < m.text_hi)
			return &m;
	return nullptr;
}

// A module's struct module read again costs a few reads; the list, a few
// for each module. Between stops the kernel ran: it may have unloaded the
// module and loaded another, or a rebuild of it, where it was.
bool StubModules::still_listed(const ListedModule &m)
{
	if (confirmed_at_ != session_.stop_count()) {
		confirmed_at_ = session_.stop_count();
		confirmed_.clear();
	}
	if (confirmed_.count(m))
		return true;
	if (!layouts_)
		return false;
	auto again = read_listed_module(layouts_->first, layouts_->second, session_.memory_reader(), m.address);
	if (!again || *again != m)
		return false;
	confirmed_.insert(m);
	return true;
}

Result<const ListedModule *> StubModules::current_module(std::string_view name)
{
	auto listed = [this, name]() -> const ListedModule * {
		auto m = std::find_if(modules_.begin(), modules_.end(),
				      [name](const ListedModule &l) { return l.name == name; });
		return m == modules_.end() ? nullptr : &*m;
	};
	if (const ListedModule *m = listed(); m && still_listed(*m))
		return m;
	if (auto walked = walk_again(); !walked)
		return walked.error();
	return listed();
}

Result<const ListedModule *> StubModules::find_module(std::uint64_t ip)
{
	if (list_error_)
		return *list_error_;
	const ListedModule *m = module_of(ip);
	if (m && still_listed(*m))
		return m;
	if (m || walked_for_.insert(ip >> 12).second) {
		if (auto walked = walk_again(); !walked)
			return walked.error();
		m = module_of(ip);
	}
	return m;
}

Result<const symbols::OrcTable *> StubModules::table_for(std::uint64_t ip)
{
	if (!kernel_ || !in_module_area(ip))
		return nullptr;
	auto m = find_module(ip);
	if (!m || !*m)
		return m ? nullptr : Result<const symbols::OrcTable *>(m.error());
	const Key &key = **m;
	if (auto known = loaded_.find(key); known != loaded_.end())
		return &known->second;
	if (auto failed = failed_.find(key); failed != failed_.end())
		return failed->second;
	auto table = load_listed_module(key, session_.memory_reader(), *kernel_);
	if (!table)
		return failed_.emplace(key, make_error(key.name + "'s ORC tables: " + table.error().message))
			.first->second;
	return &loaded_.emplace(key, std::move(*table)).first->second;
}

std::optional<SymbolHit> StubModules::symbolize(std::uint64_t address)
{
	if (!in_module_area(address))
		return std::nullopt;
	auto m = find_module(address);
	if (!m || !*m)
		return std::nullopt;
	return module_symbol_at(symbols_of(**m), address);
}

const std::vector<ModuleSymbol> &StubModules::symbols_of(const ListedModule &m)
{
	if (auto known = symbols_.find(m); known != symbols_.end())
		return known->second;
	std::vector<ModuleSymbol> &symbols = symbols_[m];
	if (!kallsyms_layout_) {
		auto types = btf_.types();
		kallsyms_layout_ = types ? module_kallsyms_layout(**types) : Result<ModuleKallsymsLayout>(types.error());
	}
	auto read = *kallsyms_layout_ ? read_module_symbols(**kallsyms_layout_, session_.memory_reader(), m.address)
				      : Result<std::vector<ModuleSymbol>>(kallsyms_layout_->error());
	if (read)
		symbols = std::move(*read);
	else
		note(m.name + "'s symbols: " + read.error().message + "; its addresses are not named");
	return symbols;
}

std::vector<dbg::SymbolList::Entry> StubModules::symbols_read() const
{
	std::vector<dbg::SymbolList::Entry> out;
	for (const auto &[key, symbols] : symbols_)
		for (const ModuleSymbol &s : symbols)
			out.push_back({s.address, s.name, s.type});
	return out;
}

namespace {

// The symbol of that name in symbols (of module key), a text symbol over
// what found holds.
template <typename Found>
void find_symbol(const std::vector<ModuleSymbol> &symbols, std::string_view name, std::optional<Found> &found,
		 const auto &...key)
{
	for (const ModuleSymbol &s : symbols)
		if (s.name == name && (!found || s.type == 't' || s.type == 'T'))
			found.emplace(s.address, key...);
}

}  // namespace

std::optional<std::pair<std::uint64_t, StubModules::Key>> StubModules::lookup_read(std::string_view name) const
{
	std::optional<std::pair<std::uint64_t, Key>> found;
	for (const auto &[key, symbols] : symbols_)
		find_symbol(symbols, name, found, key);
	return found;
}

std::optional<std::uint64_t> StubModules::lookup(std::string_view name)
{
	auto known = lookup_read(name);
	if (known && !still_listed(known->second)) {
		if (!walk_again())
			return std::nullopt;
		known = lookup_read(name);
	}
	if (known)
		return known->first;
	if (!looked_for_.emplace(name).second || !walk_again())
		return std::nullopt;
	read_every_module("looking for " + std::string(name) + " in the modules' symbols");
	known = lookup_read(name);
	return known ? std::optional(known->first) : std::nullopt;
}

void StubModules::read_every_module(const std::string &why, const std::function<bool(std::string_view)> &wanted)
{
	std::vector<const ListedModule *> reads;
	for (const ListedModule &m : modules_)
		if (!wanted || wanted(m.name))
			reads.push_back(&m);
	for (std::size_t i = 0; i < reads.size(); i++) {
		log_.progress(why + ": " + reads[i]->name + " (" + std::to_string(i + 1) + " of " +
			      std::to_string(reads.size()) + ")");
		symbols_of(*reads[i]);
	}
}

Result<std::vector<std::string>> StubModules::function_names(const std::function<bool(std::string_view)> &wanted)
{
	if (auto walked = walk_again(); !walked)
		return walked.error();
	read_every_module("reading the modules' symbols for the patterns", wanted);
	std::vector<std::string> names;
	for (const ListedModule &m : modules_)
		if (wanted(m.name))
			for (const ModuleSymbol &s : symbols_of(m))
				if ((s.type == 't' || s.type == 'T') && is_c_identifier(s.name))
					names.push_back(m.name + ":" + s.name);
	return names;
}

Result<std::uint64_t> StubModules::lookup_in(std::string_view module, std::string_view name)
{
	auto m = current_module(module);
	if (!m)
		return m.error();
	if (!*m)
		return make_error("no module " + std::string(module) + " in the kernel's list of modules");
	std::optional<std::uint64_t> found;
	find_symbol(symbols_of(**m), name, found);
	if (!found)
		return make_error("no symbol " + std::string(name) + " in module " + std::string(module) + "'s symbols");
	return *found;
}

Result<std::string> StubModules::module_of_function(std::string_view name, std::string_view module)
{
	if (!module.empty()) {
		auto in = lookup_in(module, name);
		return in ? Result<std::string>(std::string(module)) : in.error();
	}
	auto address = lookup(name);
	if (!address)
		return make_error("no function " + std::string(name) + " in the loaded modules' symbols");
	auto m = find_module(*address);
	if (!m)
		return m.error();
	if (!*m)
		return make_error(std::string(name) + " is not in a module's text");
	return (*m)->name;
}

void StubModules::note(std::string why)
{
	if (noted_.insert(why).second)
		notes_.push_back(std::move(why));
}

std::vector<std::string> StubModules::take_notes()
{
	return std::exchange(notes_, {});
}

void use_modules_through(dbg::Session &session, dbg::Output &log)
{
	auto *orc = dynamic_cast<dbg::OrcUnwinder *>(session.unwinder());
	KernelBtf btf(KernelBtf::Borrow([&session, &log] { return session.kernel_types().get(session, log); }));
	auto modules = std::make_shared<StubModules>(session, std::move(btf), orc ? &orc->table() : nullptr, log);
	session.set_modules(modules);
	if (orc)
		orc->set_modules(modules);
}

}  // namespace vtice::console
