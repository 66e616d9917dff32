// kstack through the debug stub (stub_stacks.hpp).
#include "stub_stacks.hpp"

#include <algorithm>

#include "messages.hpp"
#include "orc_unwinder.hpp"
#include "profile_stacks.hpp"

namespace vtice::console {

StubStacks::StubStacks(dbg::Session &session, KernelBtf &btf)
	: session_(session), namer_([&session](std::uint64_t a) { return session.symbols()->symbolize(a); })
{
	const auto *orc = dynamic_cast<const dbg::OrcUnwinder *>(session.unwinder());
	if (!orc) {
		eprintf("vtice probe: warning: the session has no ORC tables (attached with --no-orc, or they could not "
			"be read); each kstack is its hit's function alone\n");
		return;
	}
	tables_.emplace(orc->table());
	btf_ = &btf;
	walk_module_list(btf);
}

std::string StubStacks::text(const trace::ProfileSample &s)
{
	SampleStack stack = unwind_sample(tables_ ? &*tables_ : nullptr, s, kMaxSampleFrames);
	while (stack.truncated && !stack.frames.empty() && load_module_of(stack.frames.back()))
		stack = unwind_sample(&*tables_, s, kMaxSampleFrames);
	return kstack_text(namer_, s, stack);
}

symbols::MemoryReader StubStacks::reader()
{
	return [this](std::uint64_t address, std::span<std::uint8_t> out) {
		auto bytes = session_.read_memory(address, out.size());
		if (!bytes || bytes->size() != out.size())
			return false;
		std::copy(bytes->begin(), bytes->end(), out.begin());
		return true;
	};
}

// The list as it is now; the modules already asked for their tables are not asked again.
void StubStacks::walk_module_list(KernelBtf &btf)
{
	auto listed = modules_in_memory(btf);
	if (!listed) {
		eprintf("vtice probe: warning: %s; a frame in a module's text ends its kstack\n",
			listed.error().to_string().c_str());
		btf_ = nullptr;	// the same answer every time
		return;
	}
	for (const std::string &why : listed->skipped)
		if (warned_.insert(why).second)
			eprintf("vtice probe: warning: %s\n", why.c_str());
	modules_ = std::move(listed->modules);
}

Result<ModuleList> StubStacks::modules_in_memory(KernelBtf &btf)
{
	auto head = session_.symbols()->lookup("modules");
	if (!head)
		return make_error("the session's symbols have no 'modules' (the kernel's list of modules)");
	auto types = btf.types();
	if (!types)
		return types.error();
	auto orc = module_orc_layout(**types);
	if (!orc)
		return orc.error();
	auto list = module_list_layout(**types);
	if (!list)
		return list.error();
	return list_modules(*orc, *list, reader(), *head);
}

ListedModule *StubStacks::module_of(std::uint64_t address)
{
	for (ListedModule &m : modules_)
		if (m.text_lo <= address && address < m.text_hi)
			return &m;
	return nullptr;
}

// The tables of the module whose text holds address, read now; false when
// the kernel's own text holds it (its tables had no entry there), when no
// module does (the list walked again once for its page), or when that
// module's tables were asked for before.
bool StubStacks::load_module_of(std::uint64_t address)
{
	if (tables_->kernel().covers(address))
		return false;
	ListedModule *m = module_of(address);
	if (!m && btf_ && walked_for_.insert(address >> 12).second) {
		walk_module_list(*btf_);
		m = module_of(address);
	}
	if (!m || !asked_.insert({m->name, m->text_lo}).second)
		return false;
	auto table = load_listed_module(*m, reader(), tables_->kernel());
	if (!table) {
		eprintf("vtice probe: warning: %s: %s; its frames end their kstacks\n", m->name.c_str(),
			table.error().to_string().c_str());
		return false;
	}
	loaded_.push_back(std::move(*table));
	tables_->set_modules(loaded_);
	return true;
}

}  // namespace vtice::console
