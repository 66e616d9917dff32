// The debugger's Unwinder over symbols/' ORC tables and unwind step: walks
// frames, stops at the user-mode boundary, and reports where ORC gave up so
// the Session can continue with a marked stack scan.
#pragma once

#include <memory>

#include "module_source.hpp"
#include "session.hpp"
#include "symbols/orc.hpp"
#include "unwind.hpp"

namespace vtice::dbg {

class OrcUnwinder final : public Unwinder {
public:
	explicit OrcUnwinder(symbols::OrcTable table) : table_(std::move(table)) {}
	Result<std::vector<Frame>> unwind(const UnwindRegs &regs, const MemoryReader &read,
					  std::size_t max_frames) const override;
	std::string name() const override { return "orc"; }
	const symbols::OrcTable &table() const { return table_; }
	// Unwinds through module text too from now on.
	void set_modules(std::shared_ptr<ModuleSource> modules) { modules_ = std::move(modules); }
	ModuleSource *modules() const { return modules_.get(); }
	// The table for code at ip: the kernel's when it covers ip (or no
	// modules are known), else the module's holding ip (null: none does).
	Result<const symbols::OrcTable *> table_for(std::uint64_t ip) const;

private:
	// The table for the frame at r: the kernel's, or a module's.
	Result<const symbols::OrcTable *> table_at(const symbols::UnwindRegs &r) const;

	symbols::OrcTable table_;
	std::shared_ptr<ModuleSource> modules_;
};

// Reads the ORC tables of the running kernel (located through the session's
// symbols) from guest memory.
Result<std::unique_ptr<OrcUnwinder>> load_orc_from_guest(Session &session);
// Reads them from the vmlinux the symbols came from: no guest memory read,
// which matters over a slow serial line. Only without a KASLR slide.
Result<std::unique_ptr<OrcUnwinder>> load_orc_from_image(Session &session, const std::string &path);

}  // namespace vtice::dbg
