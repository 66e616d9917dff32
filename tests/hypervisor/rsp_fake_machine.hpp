// A fake stopped machine behind struct vt_dbg_target_ops, for the RSP
// engine's unit tests, its fuzz target and rsp_sim (real gdb as client).
// Two CPUs; kernel text at kTextBase is 64 KiB of 1-byte NOPs, so a step
// moves RIP by one and gdb's own disassembler agrees; kDataBase is 4 KiB
// of data; everything else is unmapped.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

extern "C" {
#include "../../hypervisor/debug/rsp_engine.h"
}
#include <vtice/ioctl.h>
#include <vtice/vmcall.h>

namespace vtice::fake {

class FakeMachine {
public:
	static constexpr uint64_t kTextBase = 0xffffffff81000000ull;
	static constexpr uint64_t kTextSize = 0x10000;
	static constexpr uint64_t kDataBase = 0xffff888000100000ull;
	static constexpr uint64_t kDataSize = 0x1000;
	static constexpr uint32_t kCpus = 2;

	std::vector<uint8_t> text = std::vector<uint8_t>(kTextSize, 0x90);
	std::vector<uint8_t> data = std::vector<uint8_t>(kDataSize, 0);
	vt_dbg_regs regs[kCpus]{};
	bool online[kCpus] = {true, true};
	std::set<std::tuple<int, uint64_t, uint64_t>> points;	// type, addr, len
	std::vector<vt_dbg_run> last_run;
	int resumes = 0, remove_all_calls = 0;
	bool refuse_step = false;
	std::string last_monitor;
	// The branch tracer: what Qbtrace turned on, and the records a test put in.
	bool tracing[kCpus] = {false, false};
	bool no_tracer = false;
	std::vector<vtice_record> trace[kCpus];
	uint64_t first_ip[kCpus]{}, last_ip[kCpus]{};
	// The probes: each op the engine asked for (cpu, op, a, b, c), what the
	// next ones answer, the hit count, and each CPU's ring of unread records.
	std::vector<std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t>> probe_ops;
	int probe_error = 0;
	uint64_t probe_hits = 0, probe_passed_over = 0, probes_removed = 0;
	std::vector<uint64_t> probe_counts;	// per address, COUNT's hits
	std::vector<uint64_t> probe_sums;	// per address, SUM's sums (as many as probe_counts)
	std::vector<uint64_t> probe_unreadable;	// per address, reads its counted hits found unmapped
	std::vector<std::array<uint64_t, VTICE_FETCH_HIST_BUCKETS>> probe_hists;	// per address, HIST's buckets
	std::vector<std::array<vtice_probe_key, VTICE_FETCH_KEYED_SLOTS>> probe_keys;	// per address, KEYED's slots
	std::deque<vtice_record> ring[kCpus];
	uint64_t ring_lost[kCpus]{};
	// The syscall trap: what the last QVtice:syscalls asked for, what it answers.
	struct SyscallTrap {
		bool on = false;
		uint32_t pid = 0;
		std::string comm;
		uint64_t strings_lo = 0, strings_hi = 0;
		std::vector<uint64_t> numbers;	// the set's words, when it chose syscalls; empty: all
		bool operator==(const SyscallTrap &) const = default;
	} syscall_trap;
	int syscall_error = 0;
	uint64_t syscalls_seen = 0, syscalls_recorded = 0;
	// The profiler: what the last QVtice:profile asked for, what it answers.
	struct Profiler {
		bool on = false;
		uint32_t hz = 0, stack_bytes = 0, pid = 0;
		std::string comm;
		bool operator==(const Profiler &) const = default;
	} profiler;
	int profile_error = 0;
	uint64_t profile_samples = 0;

	void add_branch(uint32_t cpu, uint64_t from, uint64_t to, uint32_t flags = 0)
	{
		vtice_record r{};
		r.type = VTICE_REC_BRANCH;
		r.cpu = (u16)cpu;
		r.flags = flags;
		r.tsc = trace[cpu].size() + 1;
		r.u.branch.from = from;
		r.u.branch.to = to;
		trace[cpu].push_back(r);
	}

	FakeMachine()
	{
		for (uint32_t c = 0; c < kCpus; c++) {
			regs[c].rip = kTextBase + 0x10 + 0x100 * c;
			regs[c].rflags = 0x246;
			regs[c].cs = 0x10;
			regs[c].ss = 0x18;
			regs[c].cr3 = 0x1234000;
			regs[c].gpr[VT_DBG_RAX] = 0x1111 * (c + 1);
			regs[c].gpr[VT_DBG_RSP] = 0xffffc90000004000ull;
		}
		for (uint32_t i = 0; i < kDataSize; i++)
			data[i] = (uint8_t)(i * 7);
	}

	uint8_t *byte(uint64_t gva)
	{
		if (gva - kTextBase < kTextSize)
			return &text[gva - kTextBase];
		if (gva - kDataBase < kDataSize)
			return &data[gva - kDataBase];
		return nullptr;
	}

	static const vt_dbg_target_ops ops;
	static FakeMachine *self(void *ctx) { return static_cast<FakeMachine *>(ctx); }
};

inline const vt_dbg_target_ops FakeMachine::ops = {
	.cpu_count = [](void *) -> u32 { return kCpus; },
	.cpu_online = [](void *ctx, u32 cpu) { return cpu < kCpus && self(ctx)->online[cpu]; },
	.read_regs = [](void *ctx, u32 cpu, vt_dbg_regs *out) {
		if (cpu >= kCpus)
			return -22;
		*out = self(ctx)->regs[cpu];
		return 0;
	},
	.write_regs = [](void *ctx, u32 cpu, const vt_dbg_regs *in) {
		if (cpu >= kCpus)
			return -22;
		self(ctx)->regs[cpu] = *in;
		return 0;
	},
	.read_mem = [](void *ctx, u32, u64 gva, void *buf, u32 len) {
		u32 n = 0;
		for (; n < len; n++) {
			uint8_t *b = self(ctx)->byte(gva + n);
			if (!b)
				break;
			static_cast<uint8_t *>(buf)[n] = *b;
		}
		return n ? (int)n : -14;
	},
	.write_mem = [](void *ctx, u32, u64 gva, const void *buf, u32 len) {
		u32 n = 0;
		for (; n < len; n++) {
			uint8_t *b = self(ctx)->byte(gva + n);
			if (!b)
				break;
			*b = static_cast<const uint8_t *>(buf)[n];
		}
		return n ? (int)n : -14;
	},
	.insert_point = [](void *ctx, u32, vt_dbg_point type, u64 addr, u64 len) {
		if (!self(ctx)->byte(addr))
			return -14;
		self(ctx)->points.insert({type, addr, len});
		return 0;
	},
	.remove_point = [](void *ctx, u32, vt_dbg_point type, u64 addr, u64 len) {
		return self(ctx)->points.erase({type, addr, len}) ? 0 : -22;
	},
	.remove_all = [](void *ctx) {
		self(ctx)->points.clear();
		self(ctx)->remove_all_calls++;
	},
	.resume = [](void *ctx, const vt_dbg_run *run, u32 count) {
		auto *m = self(ctx);
		for (u32 i = 0; i < count; i++)
			if (run[i] == VT_RUN_STEP && m->refuse_step)
				return -95;
		m->last_run.assign(run, run + count);
		m->resumes++;
		return 0;
	},
	.monitor = [](void *ctx, const char *cmd, char *out, u32 out_len) {
		self(ctx)->last_monitor = cmd;
		std::string answer = std::string(cmd) == "exits" ? "cpu 0: 42 exits\ncpu 1: 7 exits\n" :
				     std::string(cmd) == "vtice" ? "vtice hypervisor stub, ABI 1\n" : "";
		std::snprintf(out, out_len, "%s", answer.c_str());
		return 0;
	},
	.btrace_enable = [](void *ctx, u32 cpu, bool on) {
		auto *m = self(ctx);
		if (m->no_tracer)
			return -95;
		if (cpu >= kCpus)
			return -22;
		if (on)
			m->trace[cpu].clear();
		m->tracing[cpu] = on;
		return 0;
	},
	.btrace_count = [](void *ctx, u32 cpu) -> u64 { return cpu < kCpus ? self(ctx)->trace[cpu].size() : 0; },
	.btrace_record = [](void *ctx, u32 cpu, u64 index, vtice_record *out) {
		auto *m = self(ctx);
		if (cpu >= kCpus || index >= m->trace[cpu].size())
			return false;
		*out = m->trace[cpu][index];
		return true;
	},
	.btrace_span = [](void *ctx, u32 cpu, u64 *first, u64 *last) {
		*first = cpu < kCpus ? self(ctx)->first_ip[cpu] : 0;
		*last = cpu < kCpus ? self(ctx)->last_ip[cpu] : 0;
	},
	.btrace_size = [](void *ctx, u32 cpu) -> u32 { return cpu < kCpus && self(ctx)->tracing[cpu] ? 4096 : 0; },
	.probe_op = [](void *ctx, u32 cpu, u32 op, u64 a, u64 b, u64 c) {
		self(ctx)->probe_ops.emplace_back(cpu, op, a, b, c);
		return self(ctx)->probe_error;
	},
	.probe_hits = [](void *ctx, bool passed_over) -> u64 {
		return passed_over ? self(ctx)->probe_passed_over : self(ctx)->probe_hits;
	},
	.probe_removed = [](void *ctx) -> u64 { return self(ctx)->probes_removed; },
	.probe_count = [](void *ctx, u32 op, u32 index, u32 b, u64 *count) {
		auto *m = self(ctx);
		if (index >= m->probe_counts.size())
			return false;
		if (op == VTICE_VMCALL_PROBE_HIST)
			*count = index < m->probe_hists.size() && b < VTICE_FETCH_HIST_BUCKETS ? m->probe_hists[index][b] : 0;
		else if (op == VTICE_VMCALL_PROBE_KEY) {
			const vtice_probe_key *s = index < m->probe_keys.size() && (b & 0xff) < VTICE_FETCH_KEYED_SLOTS
							   ? &m->probe_keys[index][b & 0xff] : nullptr;
			u32 part = b >> 8;
			*count = !s ? 0 : part == 0 ? s->count : part == 3 ? s->value : s->key[part - 1];
		} else if (op == VTICE_VMCALL_PROBE_UNREADABLE)
			*count = m->probe_unreadable.at(index);
		else
			*count = op == VTICE_VMCALL_PROBE_SUM ? m->probe_sums.at(index) : m->probe_counts[index];
		return true;
	},
	.tsc_khz = [](void *) -> u64 { return 2400000; },
	.syscall_trap = [](void *ctx, const vt_sys_stub_arm *arm) {
		auto *m = self(ctx);
		if (!m->syscall_error && !arm)
			m->syscall_trap = {};
		else if (!m->syscall_error)
			m->syscall_trap = {true, arm->filter.pid, std::string(arm->filter.comm, strnlen(arm->filter.comm, 16)),
					   arm->strings[0], arm->strings[1],
					   arm->numbers.chosen ? std::vector<uint64_t>(arm->numbers.bits, arm->numbers.bits + 8)
							       : std::vector<uint64_t>{}};
		return m->syscall_error;
	},
	.syscall_counts = [](void *ctx, u64 *armed, u64 *seen, u64 *recorded) {
		*armed = self(ctx)->syscall_trap.on ? kCpus : 0;
		*seen = self(ctx)->syscalls_seen;
		*recorded = self(ctx)->syscalls_recorded;
	},
	.profile = [](void *ctx, bool on, u32 hz, u32 stack_bytes, u32 pid, const char comm[16]) {
		auto *m = self(ctx);
		if (!m->profile_error)
			m->profiler = {on, hz, stack_bytes, pid, std::string(comm, strnlen(comm, 16))};
		return m->profile_error;
	},
	.profile_counts = [](void *ctx, u64 *armed, u64 *samples) {
		*armed = self(ctx)->profiler.on ? kCpus : 0;
		*samples = self(ctx)->profile_samples;
	},
	.ring_unread = [](void *ctx, u32 cpu, u64 *unread, u64 *lost) {
		if (cpu >= kCpus)
			return false;
		*unread = self(ctx)->ring[cpu].size();
		*lost = self(ctx)->ring_lost[cpu];
		return true;
	},
	.ring_record = [](void *ctx, u32 cpu, u64 index, vtice_record *out) {
		auto *m = self(ctx);
		if (cpu >= kCpus || index >= m->ring[cpu].size())
			return false;
		*out = m->ring[cpu][index];
		return true;
	},
	.ring_consume = [](void *ctx, u32 cpu, u64 count) {
		auto &r = self(ctx)->ring[cpu];
		r.erase(r.begin(), r.begin() + static_cast<long>(std::min<u64>(count, r.size())));
	},
};

}  // namespace vtice::fake
