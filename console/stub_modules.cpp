// The modules' ORC tables through a debug session (stub_modules.hpp).
#include "stub_modules.hpp"

#include <algorithm>

namespace vtice::console {

StubModules::StubModules(dbg::Session &session, KernelBtf btf, const symbols::OrcTable &kernel)
	: session_(session), btf_(std::move(btf)), kernel_(kernel)
{
}

symbols::MemoryReader StubModules::reader()
{
	return [this](std::uint64_t address, std::span<std::uint8_t> out) {
		auto bytes = session_.read_memory(address, out.size());
		if (!bytes || bytes->size() != out.size())
			return false;
		std::copy(bytes->begin(), bytes->end(), out.begin());
		return true;
	};
}

// The list as it is now.
Result<void> StubModules::walk_module_list()
{
	auto head = session_.symbols() ? session_.symbols()->lookup("modules") : std::nullopt;
	if (!head)
		return make_error("the session's symbols have no 'modules' (the kernel's list of modules)");
	auto types = btf_.types();
	if (!types)
		return types.error();
	auto orc = module_orc_layout(**types);
	if (!orc)
		return orc.error();
	auto list = module_list_layout(**types);
	if (!list)
		return list.error();
	ModuleList listed = list_modules(*orc, *list, reader(), *head);
	for (std::string &why : listed.skipped)
		if (noted_.insert(why).second)
			notes_.push_back(std::move(why));
	modules_ = std::move(listed.modules);
	return {};
}

const ListedModule *StubModules::module_of(std::uint64_t ip) const
{
	for (const ListedModule &m : modules_)
		if (m.text_lo <= ip && ip < m.text_hi)
			return &m;
	return nullptr;
}

Result<const symbols::OrcTable *> StubModules::table_for(std::uint64_t ip)
{
	for (const symbols::OrcTable &table : loaded_)
		if (table.covers(ip))
			return &table;
	if (list_error_)
		return *list_error_;
	const ListedModule *m = module_of(ip);
	if (!m && walked_for_.insert(ip >> 12).second) {
		if (auto walked = walk_module_list(); !walked) {
			list_error_ = make_error("the kernel's list of modules could not be walked: " +
						 walked.error().message);
			return *list_error_;
		}
		m = module_of(ip);
	}
	if (!m)
		return nullptr;
	auto key = std::make_pair(m->name, m->text_lo);
	if (auto failed = failed_.find(key); failed != failed_.end())
		return failed->second;
	auto table = load_listed_module(*m, reader(), kernel_);
	if (!table)
		return failed_.emplace(key, make_error(m->name + "'s ORC tables: " + table.error().message))
			.first->second;
	loaded_.push_back(std::move(*table));
	return &loaded_.back();
}

std::vector<std::string> StubModules::take_notes()
{
	return std::exchange(notes_, {});
}

void unwind_modules_through(dbg::Session &session, dbg::Output &log)
{
	auto *orc = dynamic_cast<dbg::OrcUnwinder *>(session.unwinder());
	if (!orc)
		return;
	KernelBtf btf(KernelBtf::Borrow([&session, &log] { return session.kernel_types().get(session, log); }));
	orc->set_modules(std::make_shared<StubModules>(session, std::move(btf), orc->table()));
}

}  // namespace vtice::console
