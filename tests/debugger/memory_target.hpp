// A stopped target that is only memory and a few registers, for engine
// tests that read kernel objects (typed expressions). Unmapped bytes are an
// error, as on a real stub.
#pragma once

#include <cstring>
#include <map>

#include "target.hpp"

namespace vtice::dbg::test {

class MemoryTarget final : public Target {
public:
	MemoryTarget()
	{
		const char *names[] = {"rip", "rsp", "rdi", "gs_base", "k_gs_base"};
		for (unsigned i = 0; i < 5; i++)
			layout_.registers.push_back({names[i], i, 64, 8 * i, "general", "int64"});
		layout_.g_size = 40;
		layout_.architecture = "i386:x86-64";
		registers_.raw.assign(layout_.g_size, 0);
	}

	void map(std::uint64_t address, const std::vector<std::uint8_t> &bytes)
	{
		for (std::size_t i = 0; i < bytes.size(); i++)
			memory_[address + i] = bytes[i];
	}
	void set(const std::string &reg, std::uint64_t value) { registers_.set(*layout_.find(reg), value); }

	std::string describe() const override { return "memory"; }
	const RegisterLayout &layout() const override { return layout_; }
	const TargetFeatures &features() const override { return features_; }
	Result<RegisterValues> read_registers() override { return registers_; }
	Result<std::uint64_t> read_register(const RegisterInfo &reg) override { return *registers_.get(reg); }
	Result<void> write_register(const RegisterInfo &reg, std::uint64_t value) override
	{
		registers_.set(reg, value);
		return {};
	}
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override
	{
		std::vector<std::uint8_t> out(length);
		for (std::size_t i = 0; i < length; i++) {
			auto it = memory_.find(address + i);
			if (it == memory_.end())
				return make_error("E14");
			out[i] = it->second;
		}
		return out;
	}
	Result<void> write_memory(std::uint64_t, const std::vector<std::uint8_t> &) override { return refuse(); }
	Result<void> set_physical_mode(bool) override { return refuse(); }
	Result<void> insert_breakpoint(BreakKind, std::uint64_t, unsigned) override { return refuse(); }
	Result<void> remove_breakpoint(BreakKind, std::uint64_t, unsigned) override { return refuse(); }
	Result<void> resume(ResumeAction) override { return refuse(); }
	Result<std::optional<StopEvent>> wait_stop(int) override { return make_error("never runs"); }
	Result<void> interrupt() override { return {}; }
	Result<StopEvent> query_stop() override { return StopEvent{}; }
	Result<std::vector<int>> threads() override { return std::vector<int>{1}; }
	Result<void> select_thread(int) override { return {}; }
	int selected_thread() const override { return 1; }
	Result<std::string> monitor(const std::string &) override { return std::string(); }
	Result<void> detach() override { return {}; }

private:
	static Result<void> refuse() { return make_error("not in a memory-only target"); }

	RegisterLayout layout_;
	TargetFeatures features_;
	RegisterValues registers_;
	std::map<std::uint64_t, std::uint8_t> memory_;
};

}  // namespace vtice::dbg::test
