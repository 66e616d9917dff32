// A debug target that is memory alone (a GuestMemory), counting the reads:
// the session the console's readers of kernel structures go through.
#pragma once

#include "kernel_memory_support.hpp"
#include "target.hpp"

namespace vtice::test {

// A target that is memory alone, counting the reads.
class MemoryTarget final : public dbg::Target {
public:
	explicit MemoryTarget(const GuestMemory &mem) : mem_(mem) {}
	std::size_t reads = 0;
	bool runs = false;	// resumed, it stops again at once: the kernel ran between two stops

	std::string describe() const override { return "memory"; }
	const dbg::RegisterLayout &layout() const override { return layout_; }
	const dbg::TargetFeatures &features() const override { return features_; }
	Result<dbg::RegisterValues> read_registers() override { return make_error("no registers"); }
	Result<std::uint64_t> read_register(const dbg::RegisterInfo &) override { return make_error("no registers"); }
	Result<void> write_register(const dbg::RegisterInfo &, std::uint64_t) override { return make_error("read-only"); }
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override
	{
		reads++;
		std::vector<std::uint8_t> out(length);
		if (!mem_.reader()(address, out))
			return make_error("unmapped");
		return out;
	}
	Result<void> write_memory(std::uint64_t, const std::vector<std::uint8_t> &) override
	{
		return make_error("read-only");
	}
	Result<void> set_physical_mode(bool) override { return make_error("no"); }
	Result<void> insert_breakpoint(dbg::BreakKind, std::uint64_t, unsigned) override { return make_error("no"); }
	Result<void> remove_breakpoint(dbg::BreakKind, std::uint64_t, unsigned) override { return make_error("no"); }
	Result<void> resume(dbg::ResumeAction) override { return runs ? Result<void>() : make_error("no"); }
	Result<std::optional<dbg::StopEvent>> wait_stop(int) override
	{
		return runs ? std::optional(dbg::StopEvent{dbg::StopReason::Signal, 5}) : std::optional<dbg::StopEvent>();
	}
	Result<void> interrupt() override { return {}; }
	Result<dbg::StopEvent> query_stop() override { return dbg::StopEvent{}; }
	Result<std::vector<int>> threads() override { return std::vector<int>{1}; }
	Result<void> select_thread(int) override { return {}; }
	int selected_thread() const override { return 1; }
	Result<std::string> monitor(const std::string &) override { return make_error("no"); }
	Result<void> detach() override { return {}; }

private:
	const GuestMemory &mem_;
	dbg::RegisterLayout layout_;
	dbg::TargetFeatures features_;
};

}  // namespace vtice::test
