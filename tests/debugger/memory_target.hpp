// A stopped target that is only memory and a few registers, for engine
// tests that read kernel objects (typed expressions). Unmapped bytes are an
// error, as on a real stub.
#pragma once

#include <cstring>
#include <map>

#include "single_thread_target.hpp"

namespace vtice::dbg::test {

class MemoryTarget final : public fake::SingleThreadTarget {
public:
	MemoryTarget() : SingleThreadTarget({{"rip", 64}, {"rsp", 64}, {"rdi", 64}, {"gs_base", 64}, {"k_gs_base", 64}})
	{
		registers_.raw.assign(layout_.g_size, 0);
	}

	void map(std::uint64_t address, const std::vector<std::uint8_t> &bytes)
	{
		for (std::size_t i = 0; i < bytes.size(); i++)
			memory_[address + i] = bytes[i];
	}
	void set(const std::string &reg, std::uint64_t value) { registers_.set(*layout_.find(reg), value); }

	std::string describe() const override { return "memory"; }
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
	Result<StopEvent> query_stop() override { return StopEvent{}; }

private:
	static Result<void> refuse() { return make_error("not in a memory-only target"); }

	RegisterValues registers_;
	std::map<std::uint64_t, std::uint8_t> memory_;
};

}  // namespace vtice::dbg::test
