// A dbg::Target for the SessionModel tests: four registers, a page of NOPs,
// single steps that advance rip by one, and a `continue` that runs (blocks
// in wait_stop) until a breakpoint ahead of rip or an interrupt() from
// another thread, as a real stub does.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "model.hpp"
#include "target.hpp"

namespace vtice::tui::testing {

class FakeTarget final : public dbg::Target {
public:
	static constexpr std::uint64_t kCode = 0xffffffff81000000ull;
	static constexpr std::size_t kCodeSize = 0x1000;

	FakeTarget()
	{
		const char *names[] = {"rax", "rsp", "rip", "eflags"};
		for (unsigned i = 0; i < 4; ++i)
			layout_.registers.push_back({names[i], i, i == 3 ? 32u : 64u, i * 8, "general", "int64"});
		layout_.g_size = 32;
		layout_.architecture = "i386:x86-64";
		regs_[0] = 0;
		regs_[1] = 0xffffc90000010000ull;
		regs_[2] = kCode + 0x10;
		regs_[3] = 0x246;
	}

	std::string describe() const override { return "fake target"; }
	const dbg::RegisterLayout &layout() const override { return layout_; }
	const dbg::TargetFeatures &features() const override { return features_; }

	Result<dbg::RegisterValues> read_registers() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		dbg::RegisterValues values;
		values.raw.resize(layout_.g_size);
		for (const auto &reg : layout_.registers)
			values.set(reg, regs_[reg.number]);
		return values;
	}
	Result<std::uint64_t> read_register(const dbg::RegisterInfo &reg) override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return regs_[reg.number];
	}
	Result<void> write_register(const dbg::RegisterInfo &reg, std::uint64_t value) override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		regs_[reg.number] = value;
		return {};
	}
	Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) override
	{
		if (address < kCode || address + length > kCode + kCodeSize)
			return make_error("cannot read " + std::to_string(length) + " bytes at " + hex(address));
		return std::vector<std::uint8_t>(length, 0x90);  // nop
	}
	Result<void> write_memory(std::uint64_t, const std::vector<std::uint8_t> &) override
	{
		return make_error("read-only fake");
	}
	Result<void> set_physical_mode(bool) override { return make_error("no physical mode"); }

	Result<void> insert_breakpoint(dbg::BreakKind, std::uint64_t address, unsigned) override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		breakpoints_.insert(address);
		return {};
	}
	Result<void> remove_breakpoint(dbg::BreakKind, std::uint64_t address, unsigned) override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		breakpoints_.erase(address);
		return {};
	}

	Result<void> resume(dbg::ResumeAction action) override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		running_ = true;
		if (action == dbg::ResumeAction::Step) {
			stop_locked(regs_[2] + 1, 5);
			return {};
		}
		auto next = breakpoints_.upper_bound(regs_[2]);
		if (next != breakpoints_.end())
			stop_locked(*next, 5);
		return {};  // else runs until interrupt()
	}
	Result<std::optional<dbg::StopEvent>> wait_stop(int timeout_ms) override
	{
		std::unique_lock<std::mutex> lock(mutex_);
		auto stopped = [this] { return pending_.has_value(); };
		if (timeout_ms < 0)
			cv_.wait(lock, stopped);
		else if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), stopped))
			return std::optional<dbg::StopEvent>();
		auto event = pending_;
		pending_.reset();
		return event;
	}
	Result<void> interrupt() override
	{
		std::lock_guard<std::mutex> lock(mutex_);
		++interrupts;
		if (running_)
			stop_locked(regs_[2] + 0x100, 2);
		return {};
	}
	Result<dbg::StopEvent> query_stop() override
	{
		dbg::StopEvent event;
		event.signal = 5;
		return event;
	}
	Result<std::vector<int>> threads() override { return std::vector<int>{1}; }
	Result<void> select_thread(int) override { return {}; }
	int selected_thread() const override { return 1; }
	Result<std::string> monitor(const std::string &) override { return std::string(); }
	Result<void> detach() override
	{
		detached = true;
		return {};
	}

	int interrupts = 0;  // read after the worker has finished
	bool detached = false;

private:
	void stop_locked(std::uint64_t rip, int signal)
	{
		regs_[2] = rip;
		regs_[0] += 1;  // something changes at every stop besides rip
		running_ = false;
		dbg::StopEvent event;
		event.signal = signal;
		pending_ = event;
		cv_.notify_all();
	}

	dbg::RegisterLayout layout_;
	dbg::TargetFeatures features_;
	std::mutex mutex_;
	std::condition_variable cv_;
	std::map<unsigned, std::uint64_t> regs_;
	std::set<std::uint64_t> breakpoints_;
	std::optional<dbg::StopEvent> pending_;
	bool running_ = false;
};

}  // namespace vtice::tui::testing
