// kstack through the debug stub (stub_stacks.hpp).
#include "stub_stacks.hpp"

#include "messages.hpp"
#include "profile_stacks.hpp"
#include "stub_modules.hpp"

namespace vtice::console {

StubStacks::StubStacks(dbg::Session &session)
	: orc_(dynamic_cast<const dbg::OrcUnwinder *>(session.unwinder())),
	  namer_(session.symbolizer())
{
	if (!orc_)
		eprintf("vtice probe: warning: the session has no ORC tables (attached with --no-orc, or they could not "
			"be read); each kstack is its hit's function alone\n");
}

std::string StubStacks::text(const trace::ProfileSample &s)
{
	OrcLookup lookup;
	if (orc_)
		lookup = [this](std::uint64_t ip) { return table_for(ip); };
	return kstack_text(namer_, s, unwind_sample(lookup, s, kMaxSampleFrames));
}

const symbols::OrcTable *StubStacks::table_for(std::uint64_t ip)
{
	auto table = orc_->table_for(ip);
	if (auto *modules = dynamic_cast<StubModules *>(orc_->modules()))
		for (const std::string &note : modules->take_notes())
			warn(note);
	if (!table) {
		warn(table.error().message + "; a frame in that text ends its kstack");
		return nullptr;
	}
	return *table;
}

void StubStacks::warn(const std::string &why)
{
	if (warned_.insert(why).second)
		eprintf("vtice probe: warning: %s\n", why.c_str());
}

}  // namespace vtice::console
