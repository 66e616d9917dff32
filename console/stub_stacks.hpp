// kstack's text for `probe` through the debug stub: each hit's copied stack
// unwound with the session's ORC tables (the kernel's, as `bt` uses them)
// and its loaded modules' (stub_modules.hpp: found and read through the
// stub when a stack first reaches their text, and shared with `bt`), and
// named with the session's symbols. Used while the machine is stopped for
// a drain (the stub source feeds the records before it resumes).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "orc_unwinder.hpp"
#include "profile_report.hpp"
#include "session.hpp"

namespace vtice::console {

class StubStacks {
public:
	// Warns (once) when the session has no ORC tables.
	explicit StubStacks(dbg::Session &session);

	// Leaf first, a frame a line.
	std::string text(const trace::ProfileSample &s);

private:
	const symbols::OrcTable *table_for(std::uint64_t ip);
	void warn(const std::string &why);

	const dbg::OrcUnwinder *orc_ = nullptr;
	FrameNamer namer_;
	std::set<std::string> warned_;
};

}  // namespace vtice::console
