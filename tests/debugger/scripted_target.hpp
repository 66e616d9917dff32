// A dbg::Target whose run follows a script: each continue delivers the next
// scripted crossing that an inserted breakpoint or watchpoint catches (the
// rest are run past, as hardware would), then an interrupt once the script
// is used up. A step advances rip by one (unless idle_steps says it runs
// nothing, as QEMU's can). Registers: rax, rdi, rsp, rip,
// eflags; the code page reads as NOPs. Single-threaded: the tests drive the
// Session and the command table directly.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "single_thread_target.hpp"

namespace vtice::dbg::fake {

class ScriptedTarget final : public SingleThreadTarget {
public:
	static constexpr std::uint64_t kCode = 0xffffffff81000000ull;
	static constexpr std::uint64_t kCodeSize = 0x1000;
	static constexpr std::uint64_t kInterruptPc = kCode + 0x800;

	// One crossing: pc and rdi at the moment, and for a memory access its
	// kind and address.
	struct Crossing {
		std::uint64_t pc = 0;
		std::uint64_t rdi = 0;
		std::optional<BreakKind> access;
		std::uint64_t address = 0;
	};

	ScriptedTarget() : SingleThreadTarget({{"rax", 64}, {"rdi", 64}, {"rsp", 64}, {"rip", 64}, {"eflags", 32}})
	{
		regs_[2] = 0xffffc90000010000ull;
		regs_[3] = kCode;
		regs_[4] = 0x246;
	}

	std::deque<Crossing> script;
	// The stack address in resume(Continue), one per continue, to show that
	// a command list's continue does not nest a call per hit.
	std::vector<std::uintptr_t> continue_frames;

	std::string describe() const override { return "scripted target"; }

	Result<RegisterValues> read_registers() override
	{
		RegisterValues values;
		values.raw.resize(layout_.g_size);
		for (const auto &reg : layout_.registers)
			values.set(reg, regs_[reg.number]);
		return values;
	}
	Result<std::uint64_t> read_register(const RegisterInfo &reg) override { return regs_[reg.number]; }
	Result<void> write_register(const RegisterInfo &reg, std::uint64_t value) override
	{
		regs_[reg.number] = value;
		return {};
	}
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override
	{
		if (address < kCode || address + length > kCode + kCodeSize)
			return make_error("cannot read " + std::to_string(length) + " bytes");
		return std::vector<std::uint8_t>(length, 0x90);
	}
	Result<void> write_memory(std::uint64_t, const std::vector<std::uint8_t> &) override
	{
		return make_error("read-only");
	}
	Result<void> set_physical_mode(bool) override { return make_error("no physical mode"); }

	Result<void> insert_breakpoint(BreakKind type, std::uint64_t address, unsigned kind) override
	{
		inserted_.insert({type, address, kind});
		return {};
	}
	Result<void> remove_breakpoint(BreakKind type, std::uint64_t address, unsigned kind) override
	{
		inserted_.erase({type, address, kind});
		return {};
	}

	Result<void> resume(ResumeAction action) override
	{
		if (action == ResumeAction::Step) {
			steps++;
			if (idle_steps > 0)
				idle_steps--;	/* QEMU's answer with an interrupt pending: nothing ran */
			else
				regs_[3]++;
			pending_ = StopEvent{.signal = 5};
			return {};
		}
		continue_frames.push_back(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)));
		while (!script.empty() && !catches(script.front()))
			script.pop_front();
		if (script.empty()) {
			regs_[3] = kInterruptPc;
			pending_ = StopEvent{.signal = 2};
			return {};
		}
		pending_ = stop_at(script.front());
		script.pop_front();
		return {};
	}
	Result<std::optional<StopEvent>> wait_stop(int) override
	{
		auto event = pending_;
		pending_.reset();
		return event;
	}
	Result<StopEvent> query_stop() override { return StopEvent{.signal = 5}; }
	Result<void> detach() override
	{
		detaches++;
		return {};
	}

	int detaches = 0;
	int steps = 0;		// step requests seen
	int idle_steps = 0;	// the next this many steps run nothing
	std::size_t inserted_count() const { return inserted_.size(); }

private:
	bool catches(const Crossing &c) const
	{
		if (!c.access)
			return inserted_.count({BreakKind::Software, c.pc, 1}) || inserted_.count({BreakKind::Hardware, c.pc, 1});
		for (const auto &[type, address, length] : inserted_)
			if (type == *c.access && c.address >= address && c.address < address + length)
				return true;
		return false;
	}

	StopEvent stop_at(const Crossing &c)
	{
		regs_[1] = c.rdi;
		regs_[3] = c.pc;
		StopEvent event{.signal = 5};
		if (c.access) {
			event.reason = StopReason::Watchpoint;
			event.watch_kind = c.access;
			event.watch_address = c.address;
		}
		return event;
	}

	std::uint64_t regs_[5] = {};
	std::set<std::tuple<BreakKind, std::uint64_t, unsigned>> inserted_;
	std::optional<StopEvent> pending_;
};

}  // namespace vtice::dbg::fake
