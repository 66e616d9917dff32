// Probes (hypervisor/debug/probe_points.c, ept_bp.c): hidden breakpoints
// whose hit is recorded and lets the CPU go on. The instruction lengths
// are the SDM's (Vol. 2B NOP: 0F 1F /0; ENDBR64 F3 0F 1E FA), the argument
// registers the System V ABI's.
#include <array>
#include <cstdint>
#include <map>

#include "guest_pages.hpp"
#include "hooks_fixture.hpp"

extern "C" {
#include "probe_fetch.h"
#include "probe_points.h"
#include <vtice/records.h>
#include <vtice/vmcall.h>
}

using namespace vtice::fake;

namespace {

constexpr uint64_t kBpExit = 3 | (6u << 8) | (1u << 31);	// #BP, software exception, valid

class ProbePoints : public HooksFixture {
protected:
	const uint64_t fn = kKernelBase + 9 * kPage + 0x124;
	GuestPages pages;	// what root reads through the guest's page tables
	vt_ram_range guest_ram{0, 64ull << 20};

	// Guest page tables for vt_own_mem: gva -> pa, one 4 KiB page.
	void map_page(uint64_t gva, uint64_t pa)
	{
		if (!hv.mem.map) {
			hv.mem.ram = &guest_ram;
			hv.mem.nr_ram = 1;
			hv.mem.map = GuestPages::map_fn;
			hv.mem.ctx = &pages;
			cpu().vmcs[GUEST_CR3] = pages.new_table();
		}
		pages.map(cpu().vmcs[GUEST_CR3], 4, gva, pa);
	}

	void put_code(uint64_t gva, std::vector<uint8_t> bytes)
	{
		std::memcpy(&ram[gva - kKernelBase], bytes.data(), bytes.size());
	}

	// VTICE_VMCALL_PROBES as the module's kernel side issues it: RAX status.
	uint64_t vmcall(uint64_t op, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0)
	{
		regs.rdx = op;
		regs.r8 = a;
		regs.r9 = b;
		regs.r10 = c;
		EXPECT_TRUE(vt_probe_on_vmcall(&vcpu, &exit, VTICE_VMCALL_PROBES));
		return regs.rax;
	}

	// program: 0, or N to run fetch program N - 1 (load_program) at each hit.
	void arm(uint64_t gva, uint64_t program = 0)
	{
		ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
		ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, gva, gpa_of(gva), program), VTICE_VMCALL_OK);
	}

	// A fetch op as PROBE_FETCH carries it (ioctl.h, struct vtice_fetch_op).
	static uint64_t op(uint8_t code, uint8_t arg = 0, int32_t imm = 0, int16_t base = 0)
	{
		vtice_fetch_op o{code, arg, base, imm};
		uint64_t raw;
		std::memcpy(&raw, &o, sizeof(raw));
		return raw;
	}

	// Every op of program number, the rest END, as the module sends them.
	void load_program(uint64_t number, const std::vector<uint64_t> &ops)
	{
		for (uint64_t i = 0; i < VTICE_FETCH_OPS_MAX; i++)
			ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_FETCH, number, i, i < ops.size() ? ops[i] : 0),
				  VTICE_VMCALL_OK);
	}

	// Two probes on NOPs: fn runs program 0, RDX (arg 2) then `at_fn`;
	// the other, fn + 0x40 (returned), program 1, ESI (arg 1, an int: junk
	// above it) then `at_other` at width S32.
	uint64_t arm_two_tallies(uint32_t at_fn, uint32_t at_other)
	{
		const uint64_t other = fn + 0x40;
		put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
		put_code(other, {0x0f, 0x1f, 0x44, 0x00, 0x00});
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
		load_program(0, {op(VTICE_FETCH_ARG, 2), op(at_fn)});
		load_program(1, {op(VTICE_FETCH_ARG, 1), op(at_other, VTICE_FETCH_INDEX_ARG(0, VTICE_FETCH_INDEX_S32))});
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), VTICE_VMCALL_OK);
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, other, gpa_of(other), 2), VTICE_VMCALL_OK);
		return other;
	}

	// Each probe hit once for each pair of RDX and RSI.
	void hit_both(uint64_t other, const std::vector<std::pair<uint64_t, uint64_t>> &rdx_rsi)
	{
		for (const auto &[rdx, rsi] : rdx_rsi) {
			regs.rdx = rdx;
			regs.rsi = rsi;
			EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
			EXPECT_EQ(hit(other), VT_HOOK_HANDLED);
		}
	}

	vt_hook_result hit(uint64_t rip)
	{
		cpu().vmcs[GUEST_RIP] = rip;
		cpu().vmcs[VM_EXIT_INTR_INFO] = kBpExit;
		return vt_hooks_on_breakpoint(&vcpu, &exit, &stop);
	}

	std::vector<vtice_record> records()
	{
		std::vector<vtice_record> out;
		for (uint64_t i = 0; i < vcpu.ring.hdr->head; i++)
			out.push_back(vcpu.ring.records[i & (vcpu.ring.nr_records - 1)]);
		return out;
	}

	void TearDown() override
	{
		if (hooks_up) {
			vmcall(VTICE_VMCALL_PROBE_STACK, 0);	// global state, as the filter
			vmcall(VTICE_VMCALL_PROBE_CLEAR);
			vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 0);
		}
		HooksFixture::TearDown();
	}
};

TEST_F(ProbePoints, ANopUnderTheProbeIsSkippedInRootWithItsArgumentsRecorded)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});	// ftrace's 5-byte NOP
	arm(fn);
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0xcc) << "the execute view holds the int3";
	EXPECT_EQ(ram[fn - kKernelBase], 0x0f) << "the kernel's own byte is unchanged";
	regs.rdi = 11, regs.rsi = 22, regs.rdx = 33, regs.rcx = 44, regs.r8 = 55, regs.r9 = 66;
	cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] = GUEST_INTR_STATE_STI;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], fn + 5) << "past the NOP: one exit for the hit";
	EXPECT_EQ(cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO], 0u) << "the NOP ends the STI shadow";
	EXPECT_FALSE(mtf_armed());
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u) << "PROBE_HIT and three argument records (the task is unknown here)";
	EXPECT_EQ(recs[0].type, VTICE_REC_PROBE_HIT);
	EXPECT_EQ(recs[0].flags, 3u);
	EXPECT_EQ(recs[0].u.syscall.nr, fn);
	EXPECT_EQ(recs[0].u.syscall.arg, 11u);
	EXPECT_EQ(recs[1].flags, VTICE_SYSCALL_DATA_ARGS12);
	EXPECT_EQ(recs[1].u.raw[0], 22u);
	EXPECT_EQ(recs[1].u.raw[1], 33u);
	EXPECT_EQ(recs[2].flags, VTICE_SYSCALL_DATA_ARGS34);
	EXPECT_EQ(recs[2].u.raw[0], 44u) << "RCX, the fourth argument of a call (not R10)";
	EXPECT_EQ(recs[2].u.raw[1], 55u);
	EXPECT_EQ(recs[3].u.raw[0], 66u);
	struct vt_hooks_stats s;
	vt_hooks_get_stats(&s);
	EXPECT_EQ(s.probe_hits, 1u);
	EXPECT_EQ(s.probe_skips, 1u);
	EXPECT_EQ(s.bp_hits, 0u) << "not the debugger's breakpoint";
}

// A probe added to copy the stack (kstack in its fn: probe), a hit copies
// it from RSP up as a profile sample does (profile_test), RBP and RSP
// beside it; a probe added without the flag copies none beside it.
TEST_F(ProbePoints, AHitArmedWithAStackCopiesItFromRspUp)
{
	constexpr uint64_t kStack = 0xffffc90000104000ull, kStackPa = 0x400000;
	start();
	map_page(kStack, kStackPa);	// the page above it is unmapped
	for (uint64_t i = 0; i < 512; i++) {
		uint64_t word = 0x5100000000000000ull | i;
		pages.put(kStackPa + i * 8, &word, 8);
	}
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 100), (uint64_t)VTICE_VMCALL_EINVAL) << "not whole records";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, VTICE_PROFILE_STACK_MAX + 16), (uint64_t)VTICE_VMCALL_EINVAL);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 1024), VTICE_VMCALL_OK);
	const uint64_t other = fn + 0x40;
	put_code(other, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	arm(fn, VTICE_VMCALL_PROBE_COPIES_STACK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, other, gpa_of(other), 0), VTICE_VMCALL_OK);
	regs.rbp = 0xbbbb;
	cpu().vmcs[GUEST_RSP] = kStack + 0xe00;	// 512 bytes below the unmapped page
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], fn + 5) << "the stack does not change how the hit goes on";
	auto recs = records();
	ASSERT_EQ(recs.size(), 1u + 3 + 1 + 512 / 16) << "head, arguments, REGS, the mapped 512 bytes";
	EXPECT_EQ(recs[0].flags, recs.size() - 1);
	EXPECT_EQ(recs[4].type, VTICE_REC_SYSCALL_DATA);
	EXPECT_EQ(recs[4].flags, VTICE_SYSCALL_DATA_REGS);
	EXPECT_EQ(recs[4].u.raw[0], 0xbbbbu);
	EXPECT_EQ(recs[4].u.raw[1], kStack + 0xe00) << "RSP at the entry";
	for (size_t i = 0; i < 512 / 16; i++) {
		const vtice_record &r = recs[5 + i];
		EXPECT_EQ(r.flags, VTICE_SYSCALL_DATA_STACK) << i;
		EXPECT_EQ(r.u.raw[0], 0x5100000000000000ull | (0xe00 / 8 + 2 * i)) << i;
		EXPECT_EQ(r.u.raw[1], 0x5100000000000000ull | (0xe00 / 8 + 2 * i + 1)) << i;
		EXPECT_EQ(r.tsc, recs[0].tsc) << "stamped as its head";
	}
	EXPECT_EQ(hit(other), VT_HOOK_HANDLED);
	EXPECT_EQ(records().size(), recs.size() + 4) << "the other probe: head and arguments only";
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);	// the page is still mapped
	EXPECT_EQ(records().size(), recs.size() + 8) << "STACK 0: no stack, whatever ADD said";
}

// Armed to copy a string (str(arg1) in a fn: probe: the fetch program
// ARG 1, STRING), a hit copies the bytes
// its argument points to, up to and with the NUL, 16 a record; a string
// that runs into an unmapped page ends there; an unmapped one gives none.
TEST_F(ProbePoints, AHitArmedWithAStringCopiesItUpToItsNul)
{
	constexpr uint64_t kUser = 0x7ffd00001000ull, kUserPa = 0x500000;
	start();
	map_page(kUser, kUserPa);	// the page above it is unmapped
	const char path[] = "/proc/version";
	pages.put(kUserPa + 0x100, path, sizeof(path));
	const char tail[] = "0123456789abcdefghij";	// the page's last 20 bytes, no NUL
	pages.put(kUserPa + 0x1000 - 20, tail, 20);
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), VTICE_FETCH_PROGRAMS_MAX + 1),
		  (uint64_t)VTICE_VMCALL_EINVAL) << "programs 1..8";
	load_program(0, {op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_STRING)});	// str(arg1)
	arm(fn, 1);
	auto strings_of = [](const std::vector<vtice_record> &recs, size_t from) {
		std::string bytes;
		for (size_t i = from; i < recs.size(); i++)
			if (recs[i].flags == VTICE_SYSCALL_DATA_STRING)
				bytes.append(reinterpret_cast<const char *>(recs[i].u.raw), 16);
		return bytes;
	};
	regs.rsi = kUser + 0x100;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 1) << "head, arguments, one STRING record (14 bytes with the NUL)";
	EXPECT_EQ(recs[0].flags, 4u);
	EXPECT_EQ(recs[4].type, VTICE_REC_SYSCALL_DATA);
	EXPECT_EQ(std::string(strings_of(recs, 0).c_str()), path);
	EXPECT_EQ(strings_of(recs, 0).size(), 16u);

	regs.rsi = kUser + 0x1000 - 20;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto cut = records();
	ASSERT_EQ(cut.size(), recs.size() + 4 + 2) << "20 mapped bytes: two records, no NUL";
	EXPECT_EQ(strings_of(cut, recs.size()).substr(0, 20), tail);

	regs.rsi = 0x7ffd00005000ull;	// nothing mapped there
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(records().size(), cut.size() + 4) << "an unmapped string: no STRING record, the hit still counts";
}

// A fetch program reads through pointers as the guest's page tables map
// them (args->how->flags, ((struct file *)arg0)->f_path.dentry->d_name.name):
// each VALUE record carries its slot; a chain whose read faults gives 0
// marked unreadable, and the next ARG starts a readable chain again.
TEST_F(ProbePoints, AFetchProgramReadsThroughPointersAndMarksAFaultedRead)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000;
	start();
	map_page(kData, kDataPa);
	const uint64_t inner = kData + 0x800;
	const uint32_t flags = 0x8241;
	const char name[] = "hostname";
	pages.put(kDataPa + 0x10, &inner, 8);		// outer->next at +0x10
	pages.put(kDataPa + 0x800 + 0x8, &flags, 4);	// next->flags at +8
	const uint64_t name_at = kData + 0x900;
	pages.put(kDataPa + 0x800 + 0x20, &name_at, 8);	// next->name at +0x20
	pages.put(kDataPa + 0x900, name, sizeof(name));
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(3, {
		op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_ADD, 0, 0x10), op(VTICE_FETCH_LOAD, 8),
		op(VTICE_FETCH_ADD, 0, 8), op(VTICE_FETCH_LOAD, 4), op(VTICE_FETCH_VALUE, 2),
		op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 0),
		op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_ADD, 0, 0x10), op(VTICE_FETCH_LOAD, 8),
		op(VTICE_FETCH_ADD, 0, 0x20), op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_STRING),
	});
	arm(fn, 4);
	regs.rdi = kData;
	regs.rsi = 0xffff888000400000ull;	// unmapped
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 2 + 1) << "head, arguments, two VALUE records, one STRING record";
	EXPECT_EQ(recs[0].flags, 6u);
	EXPECT_EQ(recs[4].flags, VTICE_SYSCALL_DATA_VALUE);
	EXPECT_EQ(recs[4].u.raw[0], flags) << "four bytes, zero-extended";
	EXPECT_EQ(recs[4].u.raw[1], 2u) << "slot 2, readable";
	EXPECT_EQ(recs[5].u.raw[0], 0u);
	EXPECT_EQ(recs[5].u.raw[1], 0u | VTICE_PROBE_VALUE_UNREADABLE) << "slot 0, its read faulted";
	EXPECT_EQ(recs[6].flags, VTICE_SYSCALL_DATA_STRING);
	EXPECT_STREQ(reinterpret_cast<const char *>(recs[6].u.raw), name);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_FETCH, 3, 0, op(VTICE_FETCH_ARG, 2)), (uint64_t)VTICE_VMCALL_EINVAL)
		<< "an armed probe's program does not change under its hits";
}

// At a probe on a function's RET, RETVAL starts a chain at RAX, the value
// the function returns (fn:getname_flags:return { str(retval->name) }).
TEST_F(ProbePoints, AFetchProgramReadsThroughTheReturnValue)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000;
	start();
	map_page(kData, kDataPa);
	const uint64_t name_at = kData + 0x40;
	const char name[] = "/proc/version";
	const uint32_t refcnt = 1;
	pages.put(kDataPa, &name_at, 8);	// filename->name at 0
	pages.put(kDataPa + 0x10, &refcnt, 4);	// filename->refcnt at 16
	pages.put(kDataPa + 0x40, name, sizeof(name));
	put_code(fn, {0xc3});	// ret
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {
		op(VTICE_FETCH_RETVAL), op(VTICE_FETCH_ADD, 0, 0x10), op(VTICE_FETCH_LOAD, 4), op(VTICE_FETCH_VALUE, 0),
		op(VTICE_FETCH_RETVAL), op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_STRING),
	});
	arm(fn, 1);
	regs.rax = kData;
	regs.rdi = 0xffff888000400000ull;	// unmapped: the chain starts at RAX, not at an argument
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 1 + 1) << "head, arguments, one VALUE record, one STRING record";
	EXPECT_EQ(recs[4].flags, VTICE_SYSCALL_DATA_VALUE);
	EXPECT_EQ(recs[4].u.raw[0], refcnt);
	EXPECT_EQ(recs[4].u.raw[1], 0u) << "slot 0, readable";
	EXPECT_EQ(recs[5].flags, VTICE_SYSCALL_DATA_STRING);
	EXPECT_STREQ(reinterpret_cast<const char *>(recs[5].u.raw), name);

	regs.rax = static_cast<uint64_t>(-2);	// ERR_PTR(-ENOENT): nothing there
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto err = records();
	ASSERT_EQ(err.size(), recs.size() + 4 + 1) << "the value marked unreadable, no string";
	EXPECT_EQ(err.back().u.raw[1], 0u | VTICE_PROBE_VALUE_UNREADABLE);
}

// CURTASK starts a chain at the task the filter read (curtask->pid,
// curtask->real_parent->tgid): the task root found through the per-CPU
// current pointer at the hit; unreadable when root could not find one.
TEST_F(ProbePoints, AFetchProgramReadsThroughTheCurrentTask)
{
	constexpr uint64_t kPerCpu = 0xffff888000010008ull, kTask = 0xffff888000020000ull;
	constexpr uint64_t kParent = 0xffff888000020800ull;
	constexpr uint32_t kPid = 0x10, kTgid = 0x14, kComm = 0x20, kParentOff = 0x40;
	start();
	map_page(kPerCpu & ~0xfffull, 0x700000);
	map_page(kTask, 0x701000);	// the task and its parent share the page
	pages.put(0x700000 + (kPerCpu & 0xfff), &kTask, 8);
	const uint32_t pid = 4242, tgid = 4240, parent_tgid = 77;
	pages.put(0x701000 + kPid, &pid, 4);
	pages.put(0x701000 + kTgid, &tgid, 4);
	pages.put(0x701000 + kComm, "vtcur", 6);
	pages.put(0x701000 + kParentOff, &kParent, 8);
	pages.put(0x701800 + kTgid, &parent_tgid, 4);
	hv.task_layout = {kPid, kTgid, kComm, 0, 0, true};
	vcpu.sys.current_task = kPerCpu;
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {
		op(VTICE_FETCH_CURTASK), op(VTICE_FETCH_ADD, 0, kPid), op(VTICE_FETCH_LOAD, 4), op(VTICE_FETCH_VALUE, 0),
		op(VTICE_FETCH_CURTASK), op(VTICE_FETCH_ADD, 0, kParentOff), op(VTICE_FETCH_LOAD, 8),
		op(VTICE_FETCH_ADD, 0, kTgid), op(VTICE_FETCH_LOAD, 4), op(VTICE_FETCH_VALUE, 1),
	});
	arm(fn, 1);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	std::map<uint64_t, uint64_t> values;	// slot -> value, readable ones
	for (const auto &r : records())
		if (r.type == VTICE_REC_SYSCALL_DATA && r.flags == VTICE_SYSCALL_DATA_VALUE &&
		    !(r.u.raw[1] & VTICE_PROBE_VALUE_UNREADABLE))
			values[r.u.raw[1]] = r.u.raw[0];
	EXPECT_EQ(values, (std::map<uint64_t, uint64_t>{{0, pid}, {1, parent_tgid}}));

	struct vt_fetch_program prog = {};
	prog.ops[0] = op(VTICE_FETCH_CURTASK);
	prog.ops[1] = op(VTICE_FETCH_LOAD, 8);
	prog.ops[2] = op(VTICE_FETCH_VALUE, 0);
	std::vector<vtice_record> recs(VTICE_PROBE_GROUP_MAX);
	vt_fetch_end end{};
	ASSERT_EQ(vt_fetch_run(&vcpu, &regs, 0, &prog, recs.data(), 1, &end), 2u);
	EXPECT_EQ(recs[1].u.raw[1], 0u | VTICE_PROBE_VALUE_UNREADABLE) << "no task known: nothing read";
}

// REG starts a chain at a general register as the hit found it (an addr:
// probe inside a function, where the arguments have moved): RSP is the
// guest's, from the VMCS.
TEST_F(ProbePoints, AFetchProgramReadsThroughARegister)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000;
	start();
	map_page(kData, kDataPa);
	const uint64_t flags = 0x8241, below = 0x1234;
	pages.put(kDataPa + 0x100, &flags, 8);
	pages.put(kDataPa + 0x800 + 0x18, &below, 8);
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {
		op(VTICE_FETCH_REG, VTICE_FETCH_R12), op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 0),
		op(VTICE_FETCH_REG, VTICE_FETCH_RSP), op(VTICE_FETCH_ADD, 0, 0x18), op(VTICE_FETCH_LOAD, 8),
		op(VTICE_FETCH_VALUE, 1),
	});
	arm(fn, 1);
	regs.r12 = kData + 0x100;
	regs.rsp = 0xdead;	// root_entry.S's slot, not the guest's RSP
	cpu().vmcs[GUEST_RSP] = kData + 0x800;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 2);
	EXPECT_EQ(recs[4].u.raw[0], flags);
	EXPECT_EQ(recs[5].u.raw[0], below) << "through the guest's RSP";
	EXPECT_EQ(recs[5].u.raw[1], 1u);
}

// INDEX adds a register times an element's size (a[arg2], p[reg("rcx")]),
// the register cut to the index's width first: a 32-bit int argument's
// upper half is whatever the caller left there.
TEST_F(ProbePoints, AFetchProgramIndexesByARegisterCutToItsWidth)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000;
	start();
	map_page(kData, kDataPa);
	for (uint64_t i = 0; i < 8; i++) {
		const uint64_t element = 0x1000 + i;
		pages.put(kDataPa + 0x400 + i * 16 + 8, &element, 8);	// a[i].second of a 16-byte struct
	}
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	const uint64_t base = op(VTICE_FETCH_ARG, 0), at_second = op(VTICE_FETCH_ADD, 0, 0x400 + 8);
	load_program(0, {
		base, op(VTICE_FETCH_INDEX, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_RDX, VTICE_FETCH_INDEX_S32), 16), at_second,
		op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 0),
		base, op(VTICE_FETCH_INDEX, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_R12, VTICE_FETCH_INDEX_64), 16), at_second,
		op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 1),
		base, op(VTICE_FETCH_INDEX, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_RCX, VTICE_FETCH_INDEX_U8), 16), at_second,
		op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 2),
		base, op(VTICE_FETCH_INDEX, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_RSI, VTICE_FETCH_INDEX_S32), 16), at_second,
		op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 3),
	});
	arm(fn, 1);
	regs.rdi = kData;
	regs.rdx = 0xdeadbeef00000005ull;	// int 5, garbage above
	regs.r12 = 7;
	regs.rcx = 0x302;			// unsigned char 2
	regs.rsi = 0xffffffffull;		// int -1: a[-1] is 16 bytes before a[0]
	const uint64_t before = 0xbef0e0ull;
	pages.put(kDataPa + 0x400 - 16 + 8, &before, 8);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 4);
	EXPECT_EQ(recs[4].u.raw[0], 0x1005u) << "bits 32-63 of RDX cut off";
	EXPECT_EQ(recs[5].u.raw[0], 0x1007u);
	EXPECT_EQ(recs[6].u.raw[0], 0x1002u) << "the low byte of RCX";
	EXPECT_EQ(recs[7].u.raw[0], before) << "a negative int index counts back";
}

// KEEP records the hit only when the accumulator, cut to its width,
// compares to the constant: a predicate root evaluates (/arg2 > 4096/,
// /args->dfd == -100/), so a hit that fails it costs no record.
TEST_F(ProbePoints, AFetchProgramsKeepDropsTheHitsItsComparisonRefuses)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {
		op(VTICE_FETCH_ARG, 2), op(VTICE_FETCH_KEEP, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_GT, VTICE_FETCH_INDEX_64), 4096),
		op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_KEEP, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_EQ, VTICE_FETCH_INDEX_S32), -100),
		op(VTICE_FETCH_ARG, 2), op(VTICE_FETCH_VALUE, 0),
	});
	arm(fn, 1);
	struct Case {
		uint64_t rdi, rdx;
		bool recorded;
	} cases[] = {
		{0xffffff9cull, 8192, true},		// int -100 in EDI, count 8192
		{0x12345678ffffff9cull, 8192, true},	// junk above EDI: cut off
		{0xffffff9cull, 4096, false},		// 4096 > 4096 fails
		{0xffffff9cull, ~0ull, false},		// -1 as a signed count
		{3, 8192, false},			// dfd 3
	};
	for (const auto &c : cases) {
		regs.rdi = c.rdi;
		regs.rdx = c.rdx;
		auto before = records().size();
		EXPECT_EQ(hit(fn), VT_HOOK_HANDLED) << "recorded or not, the CPU goes on";
		auto recs = records();
		if (c.recorded) {
			ASSERT_EQ(recs.size(), before + 4 + 1) << c.rdi << " " << c.rdx;
			EXPECT_EQ(recs.back().u.raw[0], c.rdx) << "the reads after the KEEPs ran";
		} else {
			EXPECT_EQ(recs.size(), before) << c.rdi << " " << c.rdx;
		}
	}
}

// COUNT (ioctl.h): the hits that get that far are counted at their
// address, in ADD's order, and nothing reaches the ring; KEEP still drops
// those whose comparison fails: not counted there, but passed over
// (PROBE_PASSED, since load).
TEST_F(ProbePoints, CountCountsTheHitsThatPassAtTheirAddressAndRecordsNone)
{
	start();
	const uint64_t other = fn + 0x40;
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	put_code(other, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {op(VTICE_FETCH_COUNT)});	// COUNT alone: no accumulator needed
	load_program(1, {op(VTICE_FETCH_ARG, 2),
			 op(VTICE_FETCH_KEEP, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_GT, VTICE_FETCH_INDEX_64), 4096),
			 op(VTICE_FETCH_COUNT)});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), VTICE_VMCALL_OK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, other, gpa_of(other), 2), VTICE_VMCALL_OK);
	vmcall(VTICE_VMCALL_PROBE_QUERY);
	const uint64_t recorded_before = regs.rdx;	// since load: the other tests' too
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_PASSED), VTICE_VMCALL_OK);
	const uint64_t passed_before = regs.rdx;
	for (uint64_t rdx : {10u, 5000u, 8192u}) {
		regs.rdx = rdx;
		EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
		EXPECT_EQ(hit(other), VT_HOOK_HANDLED);
	}
	EXPECT_TRUE(records().empty()) << "counted, not recorded";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u) << "fn's three hits";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 2u) << "the two above 4096";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 2), (uint64_t)VTICE_VMCALL_EINVAL) << "no third address";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_QUERY), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, recorded_before) << "none recorded";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_PASSED), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, passed_before + 1) << "the one hit at or below 4096 that KEEP dropped";
}

// SUM (ioctl.h): like COUNT, the hits are counted at their address and
// none recorded, and the accumulator, cut to SUM's width, is added to the
// address's sum; a faulting read adds 0 but the hit still counts.
TEST_F(ProbePoints, SumAddsTheCutValueAtItsAddressAndCountsTheHits)
{
	start();
	const uint64_t other = arm_two_tallies(VTICE_FETCH_SUM, VTICE_FETCH_SUM);
	hit_both(other, {{10, 0xdead0000fffffff6ull}, {5000, 7}, {~0ull, 3}});
	EXPECT_TRUE(records().empty()) << "summed, not recorded";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 10u + 5000u - 1u) << "64 bits wide: ~0 is -1";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 0ull) << "-10 + 7 + 3: the junk above ESI cut off";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 2), (uint64_t)VTICE_VMCALL_EINVAL) << "no third address";

	struct vt_fetch_program prog = {};
	prog.ops[0] = op(VTICE_FETCH_ARG, 0);
	prog.ops[1] = op(VTICE_FETCH_LOAD, 8);
	prog.ops[2] = op(VTICE_FETCH_SUM);
	regs.rdi = 0x1000;	// unmapped
	std::vector<vtice_record> recs(VTICE_PROBE_GROUP_MAX);
	vt_fetch_end end{0, 99};
	EXPECT_EQ(vt_fetch_run(&vcpu, &regs, 0, &prog, recs.data(), 1, &end), VT_FETCH_COUNTED);
	EXPECT_EQ(end.op, (u32)VTICE_FETCH_SUM);
	EXPECT_EQ(end.value, 0u) << "a read that faulted adds nothing";
}

// MIN and MAX (ioctl.h): counted like SUM, and the address keeps the least
// or the greatest accumulator, cut to the op's width and compared as a
// signed number; before any hit it holds INT64_MAX or INT64_MIN.
TEST_F(ProbePoints, MinAndMaxKeepTheLeastAndGreatestSignedValue)
{
	start();
	const uint64_t other = arm_two_tallies(VTICE_FETCH_MIN, VTICE_FETCH_MAX);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, (uint64_t)INT64_MAX) << "no hit yet";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, (uint64_t)INT64_MIN) << "no hit yet";
	hit_both(other, {{4096, 0xdead0000fffffff6ull}, {~0ull, 7}, {10, 0x1234000000000003ull}});
	EXPECT_TRUE(records().empty()) << "kept, not recorded";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, ~0ull) << "64 bits wide: ~0 is -1, below 10 and 4096";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_SUM, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 7u) << "-10, 7 and 3 once the junk above ESI is cut off";
}

// hist() in root: each counted hit adds 1 to its operand's power-of-two
// bucket at its address, as bpftrace draws them (ioctl.h): below 0, 0,
// then [1, 2), [2, 4), ..., [2^62, 2^63). The expected buckets are worked
// out by hand from that rule.
TEST_F(ProbePoints, HistCountsEachHitInItsPowerOfTwoBucket)
{
	start();
	const uint64_t other = arm_two_tallies(VTICE_FETCH_HIST, VTICE_FETCH_HIST);
	hit_both(other, {{0, 0xdead0000fffffff6ull}, {1, 0}, {3, 1}, {4096, 0x12340000ffffffffull},
			 {4097, 7}, {~0ull, 8}, {INT64_MAX, 0x80000000ull}});
	EXPECT_TRUE(records().empty()) << "counted, not recorded";
	auto bucket = [&](uint64_t index, uint64_t b) {
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_HIST, index, b), VTICE_VMCALL_OK) << index << ", bucket " << b;
		return regs.rdx;
	};
	// RDX, 64 bits wide: 0, 1, 3, 4096, 4097, -1 and 2^63 - 1.
	std::map<uint64_t, uint64_t> at_fn = {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {14, 2}, {64, 1}};
	// ESI, an int: -10, 0, 1, -1, 7, 8 and INT32_MIN.
	std::map<uint64_t, uint64_t> at_other = {{0, 3}, {1, 1}, {2, 1}, {4, 1}, {5, 1}};
	for (uint64_t b = 0; b < VTICE_FETCH_HIST_BUCKETS; b++) {
		EXPECT_EQ(bucket(0, b), at_fn.count(b) ? at_fn[b] : 0) << "fn's bucket " << b;
		EXPECT_EQ(bucket(1, b), at_other.count(b) ? at_other[b] : 0) << "other's bucket " << b;
	}
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 7u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_HIST, 0, VTICE_FETCH_HIST_BUCKETS), (uint64_t)VTICE_VMCALL_EINVAL)
		<< "no 66th bucket";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_HIST, 2, 0), (uint64_t)VTICE_VMCALL_EINVAL) << "no third address";
}

// DISARM's CLEAR keeps what root counted readable (VTICE_VMCALL_PROBE_KEEP_COUNTS)
// so the console reads the tables after the last hit: the breakpoints go, a
// hit from a CPU's cached view counts nothing more, and the next full CLEAR
// (ARM's first step) drops the tables.
TEST_F(ProbePoints, AClearThatKeepsTheCountsLeavesThemReadableAndCountsNoMoreHits)
{
	start();
	const uint64_t other = arm_two_tallies(VTICE_FETCH_HIST, VTICE_FETCH_HIST);
	hit_both(other, {{1, 0}, {3, 1}, {4096, 2}});
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR, 2), (uint64_t)VTICE_VMCALL_EINVAL) << "an unknown flag";
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR, VTICE_VMCALL_PROBE_KEEP_COUNTS), VTICE_VMCALL_OK);
	EXPECT_EQ(leaf(gpa_of(fn)), identity(gpa_of(fn))) << "the breakpoints are gone";
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED) << "an int3 from a cached view, retried";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u) << "the three hits before the clear, none after";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_HIST, 0, 14), VTICE_VMCALL_OK);	// 4096: [4K, 8K), after <0, 0, [1]...
	EXPECT_EQ(regs.rdx, 1u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 3u);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR), VTICE_VMCALL_OK);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), (uint64_t)VTICE_VMCALL_EINVAL) << "a full clear drops them";
}

// lhist() in root: LHIST counts each hit in its operand's linear bucket,
// base B and width W (ioctl.h): below B, then [B, B + W), ... 63 of them,
// then the rest. The expected buckets are worked out by hand from that rule.
TEST_F(ProbePoints, LhistCountsEachHitInItsLinearBucket)
{
	start();
	const uint64_t other = fn + 0x40;
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	put_code(other, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {op(VTICE_FETCH_ARG, 2), op(VTICE_FETCH_LHIST, 0, 100, -10)});
	load_program(1, {op(VTICE_FETCH_ARG, 1),
			 op(VTICE_FETCH_LHIST, VTICE_FETCH_INDEX_ARG(0, VTICE_FETCH_INDEX_S32), 4096, 0)});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), VTICE_VMCALL_OK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, other, gpa_of(other), 2), VTICE_VMCALL_OK);
	// RDX, 64 bits wide, base -10, width 100: -11, -10, 89, 90, 6190, 6290, INT64_MAX, INT64_MIN.
	// ESI, an int, base 0, width 4096: -10, 4095, 4096, 65536, 0, 0, 0, 0.
	hit_both(other, {{~10ull, 0xdead0000fffffff6ull}, {~9ull, 4095}, {89, 4096}, {90, 0x1234000000010000ull},
			 {6190, 0}, {6290, 0}, {INT64_MAX, 0}, {1ull << 63, 0}});
	EXPECT_TRUE(records().empty()) << "counted, not recorded";
	auto bucket = [&](uint64_t index, uint64_t b) {
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_HIST, index, b), VTICE_VMCALL_OK) << index << ", bucket " << b;
		return regs.rdx;
	};
	std::map<uint64_t, uint64_t> at_fn = {{0, 2}, {1, 2}, {2, 1}, {63, 1}, {64, 2}};
	std::map<uint64_t, uint64_t> at_other = {{0, 1}, {1, 5}, {2, 1}, {17, 1}};
	for (uint64_t b = 0; b < VTICE_FETCH_HIST_BUCKETS; b++) {
		EXPECT_EQ(bucket(0, b), at_fn.count(b) ? at_fn[b] : 0) << "fn's bucket " << b;
		EXPECT_EQ(bucket(1, b), at_other.count(b) ? at_other[b] : 0) << "other's bucket " << b;
	}
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 8u);
}

// A KEYED slot's count and key words as VTICE_VMCALL_PROBE_KEY reads them.
struct KeySlot {
	uint64_t count, key0, key1;
	bool operator==(const KeySlot &) const = default;
};

// keyed count in root (@[arg1] = count()): each hit counts under its key,
// the argument cut to an int, in the first slot with that key or the
// first free one; with all 32 slots holding other keys a hit is recorded
// instead (nothing lost), and not counted.
TEST_F(ProbePoints, KeyedCountsEachKeyInASlotAndRecordsAHitThatFindsNone)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {op(VTICE_FETCH_ARG, 1),
			 op(VTICE_FETCH_KEYED, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_KEY_VALUE, VTICE_FETCH_INDEX_S32))});
	arm(fn, 1);
	for (uint64_t i = 0; i < VTICE_FETCH_KEYED_SLOTS - 1; i++) {
		regs.rsi = i | 0xdead000000000000ull;	// junk above ESI
		EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	}
	regs.rsi = 0xffffffffull;	// -1 as an int: the 32nd key
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	regs.rsi = 5;	// again
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty()) << "all counted";
	regs.rsi = 100;	// a 33rd key: no slot
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto slot = [&](uint64_t s) {
		KeySlot k{};
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, s), VTICE_VMCALL_OK);
		k.count = regs.rdx;
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, s | 1 << 8), VTICE_VMCALL_OK);
		k.key0 = regs.rdx;
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, s | 2 << 8), VTICE_VMCALL_OK);
		k.key1 = regs.rdx;
		return k;
	};
	for (uint64_t s = 0; s < VTICE_FETCH_KEYED_SLOTS - 1; s++)
		EXPECT_EQ(slot(s), (KeySlot{s == 5 ? 2u : 1u, s, 0})) << "slot " << s;
	EXPECT_EQ(slot(VTICE_FETCH_KEYED_SLOTS - 1), (KeySlot{1, ~0ull, 0}));
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, uint64_t{VTICE_FETCH_KEYED_SLOTS} + 1) << "the recorded hit is not counted";
	auto recs = records();
	ASSERT_FALSE(recs.empty()) << "the 33rd key's hit is recorded";
	EXPECT_EQ(recs[0].type, VTICE_REC_PROBE_HIT);
	EXPECT_EQ(recs[1].u.raw[0], 100u) << "its arg1, for the console to count";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, VTICE_FETCH_KEYED_SLOTS), (uint64_t)VTICE_VMCALL_EINVAL);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, 4u << 8), (uint64_t)VTICE_VMCALL_EINVAL) << "no fifth part";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 1, 0), (uint64_t)VTICE_VMCALL_EINVAL) << "no second address";
}

// keyed count by a read through an argument (@[((struct file *)arg0)->f_flags]
// = count()): the console's program records the read (VALUE) before KEYED
// counts under it. A hit whose key finds no slot is recorded with that
// VALUE record, the key the console then counts it under; a counted hit
// writes nothing.
TEST_F(ProbePoints, KeyedByAReadRecordsItsValueWhenItFindsNoSlot)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000, kFlagsAt = 0x10;
	start();
	map_page(kData, kDataPa);
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_ADD, 0, kFlagsAt), op(VTICE_FETCH_LOAD, 4),
			 op(VTICE_FETCH_VALUE, 0),
			 op(VTICE_FETCH_KEYED, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_KEY_VALUE, VTICE_FETCH_INDEX_U32))});
	arm(fn, 1);
	auto hit_with_flags = [&](uint32_t flags) {
		pages.put(kDataPa + kFlagsAt, &flags, sizeof(flags));
		regs.rdi = kData;
		return hit(fn);
	};
	for (uint32_t key = 0; key < VTICE_FETCH_KEYED_SLOTS; key++)
		EXPECT_EQ(hit_with_flags(0x8000 + key), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty()) << "32 keys, all counted in root";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, 7u | 1u << 8), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 0x8007u) << "slot 7's key is the flags read at its hit";
	EXPECT_EQ(hit_with_flags(0x4242), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 1) << "head, arguments and the key's VALUE record";
	EXPECT_EQ(recs[0].type, VTICE_REC_PROBE_HIT);
	EXPECT_EQ(recs[4].flags, VTICE_SYSCALL_DATA_VALUE);
	EXPECT_EQ(recs[4].u.raw[0], 0x4242u) << "the 33rd key, read at the hit";
	EXPECT_EQ(recs[4].u.raw[1], 0u) << "slot 0, readable";
}

// @[comm] = count() in root: KEYED alone keys by the task's comm, its
// bytes past the NUL zeroed (one comm, one key, whatever the kernel left
// there); a hit whose task root cannot read is recorded.
TEST_F(ProbePoints, KeyedByCommCountsTheTasksNameAndRecordsAnUnknownTask)
{
	constexpr uint64_t kPerCpu = 0xffff888000010008ull, kTask = 0xffff888000020000ull;
	constexpr uint32_t kPid = 0x10, kTgid = 0x14, kComm = 0x20;
	start();
	map_page(kPerCpu & ~0xfffull, 0x700000);
	map_page(kTask, 0x701000);
	pages.put(0x700000 + (kPerCpu & 0xfff), &kTask, 8);
	pages.put(0x701000 + kComm, "vtcur\0junk", 10);
	hv.task_layout = {kPid, kTgid, kComm, 0, 0, true};
	vcpu.sys.current_task = kPerCpu;
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	load_program(0, {op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_COMM)});
	arm(fn, 1);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty());
	uint64_t want[2] = {};
	std::memcpy(want, "vtcur", 5);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 2u);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, 1 << 8), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, want[0]) << "\"vtcur\", nothing of the junk after its NUL";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, 2 << 8), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 0u);
	vcpu.sys.current_task = 0;	// no task known
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_FALSE(records().empty()) << "recorded: the console finds its comm or counts it unknown";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_COUNT, 0), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 2u);
}

// @bytes[cpu] = sum(arg2), and min() and max() by key: KEYED with an imm
// keeps the operand in the key's slot as SUM, MIN and MAX keep it at an
// address (cut to its width, signed), read as the slot's part 3.
TEST_F(ProbePoints, KeyedSumMinAndMaxKeepTheOperandInTheKeysSlot)
{
	start();
	const uint64_t at_min = fn + 0x40, at_max = fn + 0x80;
	for (uint64_t a : {fn, at_min, at_max})
		put_code(a, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	const uint8_t by_cpu = VTICE_FETCH_INDEX_ARG(VTICE_FETCH_KEY_CPU, VTICE_FETCH_INDEX_64);
	const uint8_t by_cpu_int = VTICE_FETCH_INDEX_ARG(VTICE_FETCH_KEY_CPU, VTICE_FETCH_INDEX_S32);
	load_program(0, {op(VTICE_FETCH_ARG, 2), op(VTICE_FETCH_KEYED, by_cpu, VTICE_FETCH_SUM)});
	load_program(1, {op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_KEYED, by_cpu_int, VTICE_FETCH_MIN)});
	load_program(2, {op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_KEYED, by_cpu_int, VTICE_FETCH_MAX)});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), VTICE_VMCALL_OK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, at_min, gpa_of(at_min), 2), VTICE_VMCALL_OK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, at_max, gpa_of(at_max), 3), VTICE_VMCALL_OK);
	// CPU 0: RDX 100, 4000, -1; ESI 7, -10 (junk above it), 3. CPU 1: RDX 5; ESI 0x7fffffff.
	const struct {
		uint32_t cpu;
		uint64_t rdx, rsi;
	} hits[] = {{0, 100, 7}, {0, 4000, 0xdead0000fffffff6ull}, {0, ~0ull, 3}, {1, 5, 0x7fffffff}};
	for (const auto &h : hits) {
		vcpu.cpu = h.cpu;
		regs.rdx = h.rdx;
		regs.rsi = h.rsi;
		for (uint64_t a : {fn, at_min, at_max})
			EXPECT_EQ(hit(a), VT_HOOK_HANDLED);
	}
	vcpu.cpu = 0;
	EXPECT_TRUE(records().empty()) << "kept by key, not recorded";
	auto part = [&](uint64_t index, uint64_t slot, uint64_t p) {
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, index, slot | p << 8), VTICE_VMCALL_OK);
		return regs.rdx;
	};
	// Slot 0 took CPU 0, slot 1 CPU 1, at each address.
	EXPECT_EQ(part(0, 0, 1), 0u);
	EXPECT_EQ(part(0, 1, 1), 1u);
	EXPECT_EQ(part(0, 0, 0), 3u);
	EXPECT_EQ(part(0, 0, 3), 100u + 4000u - 1u) << "CPU 0's sum, 64 bits wide: ~0 is -1";
	EXPECT_EQ(part(0, 1, 3), 5u);
	EXPECT_EQ(part(1, 0, 3), (uint64_t)-10) << "CPU 0's least int: the junk above ESI cut off";
	EXPECT_EQ(part(1, 1, 3), 0x7fffffffu) << "one hit: its value is the least";
	EXPECT_EQ(part(2, 0, 3), 7u);
	EXPECT_EQ(part(2, 1, 3), 0x7fffffffu);
	EXPECT_EQ(part(0, 2, 3), 0u) << "a free slot";
}

// @bytes[arg1] = sum(arg2) (and min, max): KEY takes the key (arg1, cut
// to an int) before the operand, and KEYED keeps the operand in that
// key's slot. A hit past the slots is recorded, the key read into the
// VALUE before KEY with it.
TEST_F(ProbePoints, KeyedByAValueKeepsAnotherValueInItsSlot)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000;
	start();
	map_page(kData, kDataPa);
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	const uint8_t s32 = VTICE_FETCH_INDEX_ARG(0, VTICE_FETCH_INDEX_S32);
	load_program(0, {op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_LOAD, 4), op(VTICE_FETCH_VALUE, 0),
			 op(VTICE_FETCH_KEY, s32), op(VTICE_FETCH_ARG, 2),
			 op(VTICE_FETCH_KEYED, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_KEY_VALUE, VTICE_FETCH_INDEX_64),
			    VTICE_FETCH_SUM)});
	arm(fn, 1);
	auto hit_with = [&](uint32_t key, uint64_t value) {
		pages.put(kDataPa, &key, sizeof(key));
		regs.rdi = kData;
		regs.rdx = value;
		return hit(fn);
	};
	EXPECT_EQ(hit_with(0xfffffffe, 100), VT_HOOK_HANDLED);
	EXPECT_EQ(hit_with(7, 5), VT_HOOK_HANDLED);
	EXPECT_EQ(hit_with(0xfffffffe, 11), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty()) << "all kept in root";
	auto part = [&](uint64_t slot, uint64_t p) {
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, 0, slot | p << 8), VTICE_VMCALL_OK);
		return regs.rdx;
	};
	EXPECT_EQ(part(0, 0), 2u);
	EXPECT_EQ(part(0, 1), (uint64_t)-2) << "the key read, cut to an int and sign-extended";
	EXPECT_EQ(part(0, 3), 111u) << "the sum of its operand, not of its key";
	EXPECT_EQ(part(1, 1), 7u);
	EXPECT_EQ(part(1, 3), 5u);
	for (uint32_t key = 100; key < 100 + VTICE_FETCH_KEYED_SLOTS - 2; key++)
		EXPECT_EQ(hit_with(key, 1), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty()) << "32 keys in 32 slots";
	EXPECT_EQ(hit_with(4242, 9), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 4u + 1) << "a 33rd key: head, arguments and the key's VALUE record";
	EXPECT_EQ(recs[4].u.raw[0], 4242u);
	EXPECT_EQ(recs[1].u.raw[1], 9u) << "the operand, arg2, in the arguments' record";
}

// Two words of key: @[arg0, arg1] = count() (two KEYs, KEYED by them) and
// @[cpu, arg1] = sum(arg2) (the CPU first, then KEY's); each slot holds
// both words, and a hit under another pair takes another slot.
TEST_F(ProbePoints, KeyedByTwoWordsHoldsBothInItsSlot)
{
	start();
	const uint64_t at_sum = fn + 0x40;
	for (uint64_t a : {fn, at_sum})
		put_code(a, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	const uint8_t s32 = VTICE_FETCH_INDEX_ARG(0, VTICE_FETCH_INDEX_S32);
	load_program(0, {op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_KEY), op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_KEY, s32),
			 op(VTICE_FETCH_KEYED)});
	load_program(1, {op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_KEY, s32), op(VTICE_FETCH_ARG, 2),
			 op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_CPU, VTICE_FETCH_SUM)});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), VTICE_VMCALL_OK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, at_sum, gpa_of(at_sum), 2), VTICE_VMCALL_OK);
	const struct {
		uint32_t cpu;
		uint64_t rdi, rsi, rdx;
	} hits[] = {{0, 10, 0xdead0000fffffffeull, 100}, {1, 10, 0xfffffffe, 7}, {0, 10, 3, 1}, {0, 11, 3, 2}};
	for (const auto &h : hits) {
		vcpu.cpu = h.cpu;
		regs.rdi = h.rdi;
		regs.rsi = h.rsi;
		regs.rdx = h.rdx;
		for (uint64_t a : {fn, at_sum})
			EXPECT_EQ(hit(a), VT_HOOK_HANDLED);
	}
	vcpu.cpu = 0;
	EXPECT_TRUE(records().empty());
	auto slot = [&](uint64_t index, uint64_t s) {
		std::array<uint64_t, 4> parts{};
		for (uint64_t p = 0; p < 4; p++) {
			EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_KEY, index, s | p << 8), VTICE_VMCALL_OK);
			parts[p] = regs.rdx;
		}
		return parts;
	};
	// (arg0, arg1 as an int): (10, -2) twice, (10, 3), (11, 3).
	EXPECT_EQ(slot(0, 0), (std::array<uint64_t, 4>{2, 10, (uint64_t)-2, 0}));
	EXPECT_EQ(slot(0, 1), (std::array<uint64_t, 4>{1, 10, 3, 0}));
	EXPECT_EQ(slot(0, 2), (std::array<uint64_t, 4>{1, 11, 3, 0}));
	// (cpu, arg1 as an int), sum of arg2: (0, -2) 100, (1, -2) 7, (0, 3) 1 + 2.
	EXPECT_EQ(slot(1, 0), (std::array<uint64_t, 4>{1, 0, (uint64_t)-2, 100}));
	EXPECT_EQ(slot(1, 1), (std::array<uint64_t, 4>{1, 1, (uint64_t)-2, 7}));
	EXPECT_EQ(slot(1, 2), (std::array<uint64_t, 4>{2, 0, 3, 3}));
}

// The console counts each read a hit's values found unmapped (they give
// 0: "unreadable_reads"); for the hits root counts and the console never
// sees, root counts them per address: each read once, whether a KEEP, a
// VALUE, a KEY or the tally used it, and none for a hit a KEEP passed over
// or that is recorded after all (its VALUE records carry the marks).
TEST_F(ProbePoints, RootCountsTheUnmappedReadsOfTheHitsItCountsOnceEach)
{
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000, kUnmapped = 0x1000;
	start();
	map_page(kData, kDataPa);
	const uint64_t at_two = fn + 0x40, at_keep = fn + 0x80;
	for (uint64_t a : {fn, at_two, at_keep})
		put_code(a, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	// @[*arg0] = count(): the read is the VALUE and the key.
	load_program(0, {op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 0),
			 op(VTICE_FETCH_KEYED)});
	// @[*arg0] = sum(*arg1): two reads, a KEY's and the operand.
	load_program(1, {op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_KEY),
			 op(VTICE_FETCH_ARG, 1), op(VTICE_FETCH_LOAD, 8),
			 op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_VALUE, VTICE_FETCH_SUM)});
	// /*arg0 == 0/ { @ = sum(arg2); }: the predicate's read.
	load_program(2, {op(VTICE_FETCH_ARG, 0), op(VTICE_FETCH_LOAD, 8),
			 op(VTICE_FETCH_KEEP, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_EQ, VTICE_FETCH_INDEX_64), 0),
			 op(VTICE_FETCH_ARG, 2), op(VTICE_FETCH_SUM)});
	uint64_t program = 1;
	for (uint64_t a : {fn, at_two, at_keep})
		ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, a, gpa_of(a), program++), VTICE_VMCALL_OK);
	const uint64_t five = 5;
	pages.put(kDataPa, &five, sizeof(five));
	auto hit_all = [&](uint64_t rdi, uint64_t rsi) {
		regs.rdi = rdi;
		regs.rsi = rsi;
		regs.rdx = 1;
		for (uint64_t a : {fn, at_two, at_keep})
			EXPECT_EQ(hit(a), VT_HOOK_HANDLED);
	};
	hit_all(kUnmapped, kUnmapped);	// every read faults
	hit_all(kData, kUnmapped);	// *arg0 reads 5: the predicate fails, arg1's read faults
	hit_all(kData, kData);		// nothing faults
	EXPECT_TRUE(records().empty());
	auto total = [&](uint64_t op_, uint64_t index) {
		EXPECT_EQ(vmcall(op_, index), VTICE_VMCALL_OK);
		return regs.rdx;
	};
	EXPECT_EQ(total(VTICE_VMCALL_PROBE_COUNT, 0), 3u);
	EXPECT_EQ(total(VTICE_VMCALL_PROBE_UNREADABLE, 0), 1u) << "one read, used twice, counted once";
	EXPECT_EQ(total(VTICE_VMCALL_PROBE_UNREADABLE, 1), 2u + 1u) << "both reads, then arg1's";
	EXPECT_EQ(total(VTICE_VMCALL_PROBE_COUNT, 2), 1u) << "the faulted read is 0: the predicate held once";
	EXPECT_EQ(total(VTICE_VMCALL_PROBE_UNREADABLE, 2), 1u) << "the predicate's read, not the passed over hits'";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_UNREADABLE, 3), (uint64_t)VTICE_VMCALL_EINVAL) << "no fourth address";
}

// Root runs only what it checked: a program is refused at ADD unless it
// starts with ARG, RETVAL, CURTASK or REG and every op's argument, size and slot is in range, no
// slot is written twice and there is at most one string.
TEST_F(ProbePoints, RootRefusesAFetchProgramItCannotBound)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	const uint64_t arg0 = op(VTICE_FETCH_ARG, 0);
	const std::vector<std::pair<const char *, std::vector<uint64_t>>> bad = {
		{"empty", {}},
		{"not ARG first", {op(VTICE_FETCH_LOAD, 8), op(VTICE_FETCH_VALUE, 0)}},
		{"argument 6", {op(VTICE_FETCH_ARG, 6)}},
		{"RETVAL with an argument", {op(VTICE_FETCH_RETVAL, 1)}},
		{"CURTASK with an argument", {op(VTICE_FETCH_CURTASK, 2)}},
		{"register 16", {op(VTICE_FETCH_REG, VTICE_FETCH_REGS)}},
		{"a 3-byte load", {arg0, op(VTICE_FETCH_LOAD, 3)}},
		{"a 16-byte load", {arg0, op(VTICE_FETCH_LOAD, 16)}},
		{"slot 4", {arg0, op(VTICE_FETCH_VALUE, 4)}},
		{"slot 1 twice", {arg0, op(VTICE_FETCH_VALUE, 1), op(VTICE_FETCH_VALUE, 1)}},
		{"two strings", {arg0, op(VTICE_FETCH_STRING), arg0, op(VTICE_FETCH_STRING)}},
		{"an unknown op", {arg0, op(VTICE_FETCH_KEY + 1)}},
		{"KEY first", {op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEYED, 0, VTICE_FETCH_SUM)}},
		{"KEY with a comparison",
		 {arg0, op(VTICE_FETCH_KEY, VTICE_FETCH_EQ + 1), arg0, op(VTICE_FETCH_KEYED, 0, VTICE_FETCH_SUM)}},
		{"KEY width 7",
		 {arg0, op(VTICE_FETCH_KEY, VTICE_FETCH_INDEX_ARG(0, 7)), arg0, op(VTICE_FETCH_KEYED, 0, VTICE_FETCH_SUM)}},
		{"KEY with an imm", {arg0, op(VTICE_FETCH_KEY, 0, 1), arg0, op(VTICE_FETCH_KEYED, 0, VTICE_FETCH_SUM)}},
		{"KEY three times", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEY), arg0,
				     op(VTICE_FETCH_KEYED)}},
		{"two KEYs beside the pid", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEY),
					     op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_PID)}},
		{"two KEYs keeping a HIST", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEY), arg0,
					     op(VTICE_FETCH_KEYED, 0, VTICE_FETCH_HIST)}},
		{"KEY and no KEYED", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_VALUE, 0)}},
		{"KEY then SUM", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_SUM)}},
		{"KEY then a count by it", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEYED)}},
		{"KEY then KEYED by comm", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_COMM,
										 VTICE_FETCH_SUM)}},
		{"KEY then a KEYED HIST", {arg0, op(VTICE_FETCH_KEY), arg0, op(VTICE_FETCH_KEYED, 0, VTICE_FETCH_HIST)}},
		{"KEYED by the accumulator first", {op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_VALUE)}},
		{"KEYED by key 5", {arg0, op(VTICE_FETCH_KEYED, VTICE_FETCH_KEYS)}},
		{"KEYED width 7", {arg0, op(VTICE_FETCH_KEYED, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_KEY_VALUE, 7))}},
		{"an op after KEYED", {op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_COMM), op(VTICE_FETCH_COUNT)}},
		{"KEYED keeping a sum first", {op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_COMM, VTICE_FETCH_SUM)}},
		{"KEYED by the value keeping it", {arg0, op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_VALUE, VTICE_FETCH_SUM)}},
		{"KEYED keeping a HIST", {arg0, op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_PID, VTICE_FETCH_HIST)}},
		{"KEYED with a base", {arg0, op(VTICE_FETCH_KEYED, VTICE_FETCH_KEY_PID, VTICE_FETCH_SUM, 1)}},
		{"COUNT with an argument", {op(VTICE_FETCH_COUNT, 1)}},
		{"an op after COUNT", {arg0, op(VTICE_FETCH_COUNT), op(VTICE_FETCH_VALUE, 0)}},
		{"SUM first", {op(VTICE_FETCH_SUM)}},
		{"SUM with a comparison", {arg0, op(VTICE_FETCH_SUM, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_NE, 0))}},
		{"SUM width 7", {arg0, op(VTICE_FETCH_SUM, VTICE_FETCH_INDEX_ARG(0, 7))}},
		{"SUM with an imm", {arg0, op(VTICE_FETCH_SUM, 0, 1)}},
		{"an op after SUM", {arg0, op(VTICE_FETCH_SUM), op(VTICE_FETCH_VALUE, 0)}},
		{"MIN first", {op(VTICE_FETCH_MIN)}},
		{"MAX with a comparison", {arg0, op(VTICE_FETCH_MAX, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_LT, 0))}},
		{"MIN width 7", {arg0, op(VTICE_FETCH_MIN, VTICE_FETCH_INDEX_ARG(0, 7))}},
		{"MAX with an imm", {arg0, op(VTICE_FETCH_MAX, 0, 1)}},
		{"an op after MIN", {arg0, op(VTICE_FETCH_MIN), op(VTICE_FETCH_SUM)}},
		{"HIST first", {op(VTICE_FETCH_HIST)}},
		{"HIST with a comparison", {arg0, op(VTICE_FETCH_HIST, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_GE, 0))}},
		{"an op after HIST", {arg0, op(VTICE_FETCH_HIST), op(VTICE_FETCH_VALUE, 0)}},
		{"HIST with a base", {arg0, op(VTICE_FETCH_HIST, 0, 0, 1)}},
		{"LHIST first", {op(VTICE_FETCH_LHIST, 0, 10)}},
		{"LHIST 0 wide", {arg0, op(VTICE_FETCH_LHIST, 0, 0)}},
		{"LHIST -10 wide", {arg0, op(VTICE_FETCH_LHIST, 0, -10, 5)}},
		{"LHIST with a comparison", {arg0, op(VTICE_FETCH_LHIST, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_GE, 0), 10)}},
		{"LHIST width 7", {arg0, op(VTICE_FETCH_LHIST, VTICE_FETCH_INDEX_ARG(0, 7), 10)}},
		{"an op after LHIST", {arg0, op(VTICE_FETCH_LHIST, 0, 10), op(VTICE_FETCH_VALUE, 0)}},
		{"INDEX first", {op(VTICE_FETCH_INDEX, VTICE_FETCH_RDI, 8)}},
		{"INDEX width 7", {arg0, op(VTICE_FETCH_INDEX, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_RDI, 7), 8)}},
		{"INDEX by 0 bytes", {arg0, op(VTICE_FETCH_INDEX, VTICE_FETCH_RDI, 0)}},
		{"INDEX by -8 bytes", {arg0, op(VTICE_FETCH_INDEX, VTICE_FETCH_RDI, -8)}},
		{"KEEP comparison 6", {arg0, op(VTICE_FETCH_KEEP, VTICE_FETCH_CMPS)}},
		{"KEEP width 7", {arg0, op(VTICE_FETCH_KEEP, VTICE_FETCH_INDEX_ARG(VTICE_FETCH_EQ, 7))}},
		{"imm on a load", {arg0, op(VTICE_FETCH_LOAD, 8, 4)}},
		{"a base on VALUE", {arg0, op(VTICE_FETCH_VALUE, 0) | 1ull << 16}},
		{"bits after END", {arg0, op(VTICE_FETCH_END, 1)}},
	};
	for (const auto &[why, ops] : bad) {
		load_program(0, ops);
		EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), (uint64_t)VTICE_VMCALL_EINVAL) << why;
	}
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_FETCH, VTICE_FETCH_PROGRAMS_MAX, 0, arg0), (uint64_t)VTICE_VMCALL_EINVAL);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_FETCH, 0, VTICE_FETCH_OPS_MAX, arg0), (uint64_t)VTICE_VMCALL_EINVAL);
	std::vector<uint64_t> full(VTICE_FETCH_OPS_MAX, op(VTICE_FETCH_ADD, 0, 1));
	full[0] = arg0;
	full.back() = op(VTICE_FETCH_VALUE, 3);
	load_program(0, full);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 1), VTICE_VMCALL_OK) << "every op used, no END: whole";
	regs.rdi = 100;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 5u);
	EXPECT_EQ(recs[4].u.raw[0], 100u + VTICE_FETCH_OPS_MAX - 2);
}

// The runner bounds what it writes by itself too, so a program that never
// went through the check (31 VALUE ops, 31 strings, a 16-byte load) still
// writes no more than a group's room: 4 values and one string.
TEST_F(ProbePoints, TheRunnerWritesNoMoreThanAGroupsRoomWhateverItIsGiven)
{
	start();
	struct vt_fetch_program prog;
	for (auto &o : prog.ops)
		o = op(VTICE_FETCH_VALUE, 0);
	prog.ops[0] = op(VTICE_FETCH_ARG, 0);
	std::vector<vtice_record> recs(VTICE_PROBE_GROUP_MAX + VTICE_FETCH_OPS_MAX);
	vt_fetch_end end{};
	EXPECT_EQ(vt_fetch_run(&vcpu, &regs, 0, &prog, recs.data(), 1, &end), 1u + VTICE_FETCH_VALUES_MAX);
	constexpr uint64_t kData = 0xffff888000200000ull, kDataPa = 0x600000;
	map_page(kData, kDataPa);
	const std::string long_name(200, 'x');	// no NUL within 128 bytes: a full string's 8 records
	pages.put(kDataPa, long_name.data(), long_name.size());
	for (auto &o : prog.ops)
		o = op(VTICE_FETCH_STRING);
	prog.ops[0] = op(VTICE_FETCH_ARG, 0);
	regs.rdi = kData;
	EXPECT_EQ(vt_fetch_run(&vcpu, &regs, 0, &prog, recs.data(), 1, &end), 1u + VTICE_STRING_RECORDS_MAX)
		<< "one string of 31";
	prog.ops[1] = op(VTICE_FETCH_LOAD, 16);
	EXPECT_EQ(vt_fetch_run(&vcpu, &regs, 0, &prog, recs.data(), 1, &end), 1u) << "a 16-byte load reads nothing";
}

// Armed with more registers (STACK's R9 = 1, VTICE_PROBES_MORE_REGS), a
// hit adds the GPRS records: RBX, RSP, RBP, R10-R15, RFLAGS, two a record,
// as they were at the hit (RSP and RFLAGS from the VMCS guest state).
TEST_F(ProbePoints, AHitArmedForMoreRegistersCopiesTheRest)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 0, 2), (uint64_t)VTICE_VMCALL_EINVAL) << "R9 is 0 or 1";
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 0, 1), VTICE_VMCALL_OK);
	arm(fn);
	regs.rbx = 0xb0b0;
	regs.rbp = 0xbebe;
	regs.r10 = 10, regs.r11 = 11, regs.r12 = 12, regs.r13 = 13, regs.r14 = 14, regs.r15 = 15;
	cpu().vmcs[GUEST_RSP] = 0xffffc90000107e00ull;
	cpu().vmcs[GUEST_RFLAGS] = 0x246;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	std::vector<uint64_t> got;
	for (const vtice_record &rec : records())
		if (rec.type == VTICE_REC_SYSCALL_DATA && rec.flags == VTICE_SYSCALL_DATA_GPRS) {
			got.push_back(rec.u.raw[0]);
			got.push_back(rec.u.raw[1]);
		}
	EXPECT_EQ(got, (std::vector<uint64_t>{0xb0b0, 0xffffc90000107e00ull, 0xbebe, 10, 11, 12, 13, 14, 15, 0x246}));
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 0, 0), VTICE_VMCALL_OK);
	size_t before = records().size();
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(records().size() - before, 4u) << "not armed for them: the head and the arguments alone";
}

TEST_F(ProbePoints, SkipsEveryNopFormAndEndbr)
{
	start();
	const std::vector<std::vector<uint8_t>> nops = {
		{0x90}, {0x66, 0x90}, {0x0f, 0x1f, 0x00}, {0x0f, 0x1f, 0x40, 0x00}, {0x0f, 0x1f, 0x44, 0x00, 0x00},
		{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, {0x0f, 0x1f, 0x80, 0, 0, 0, 0},
		{0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, {0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, {0xf3, 0x0f, 0x1e, 0xfa}};
	uint64_t at = fn;
	for (const auto &nop : nops) {
		put_code(at, nop);
		arm(at);
		ASSERT_EQ(hit(at), VT_HOOK_HANDLED);
		EXPECT_EQ(cpu().vmcs[GUEST_RIP], at + nop.size()) << "NOP of " << nop.size() << " bytes";
		at += 16;
	}
}

TEST_F(ProbePoints, AnyOtherInstructionRunsOnceOnTheOriginalUnderMtf)
{
	start();
	put_code(fn, {0x55});	// push rbp
	arm(fn);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], fn) << "the CPU runs the kernel's own instruction";
	EXPECT_TRUE(mtf_armed());
	EXPECT_EQ(cpu_leaf(gpa_of(fn)), identity(gpa_of(fn))) << "the original frame, for one instruction";
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0xcc) << "the other CPUs keep the probe meanwhile";
	EXPECT_EQ(mtf(), VT_HOOK_HANDLED);
	EXPECT_FALSE(mtf_armed());
	EXPECT_TRUE(on_shared_tables());
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0xcc);
	struct vt_hooks_stats s;
	vt_hooks_get_stats(&s);
	EXPECT_EQ(s.probe_steps, 1u);
}

TEST_F(ProbePoints, GuestTfTakesTheSteppedWaySoItsDebugTrapComesFromTheCpu)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	arm(fn);
	cpu().vmcs[GUEST_RFLAGS] = 0x302;	// IF | TF
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], fn);
	EXPECT_TRUE(mtf_armed());
}

TEST_F(ProbePoints, NoProbeBeforeEveryCpuTakesBreakpointExits)
{
	start();
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn)), static_cast<uint64_t>(VTICE_VMCALL_EINVAL));
	EXPECT_EQ(leaf_level(gpa_of(fn)), 2) << "nothing split: the 2 MiB identity page stays";
	EXPECT_FALSE(cpu().vmcs[EXCEPTION_BITMAP] & (1u << 3));
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), VTICE_VMCALL_OK);
	vt_hooks_on_resume(&vcpu);
	EXPECT_TRUE(cpu().vmcs[EXCEPTION_BITMAP] & (1u << 3)) << "#BP exits before any probe exists";
}

TEST_F(ProbePoints, AnInt3FromARemovedProbesCachedViewIsRetried)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	arm(fn);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR), VTICE_VMCALL_OK);
	EXPECT_EQ(leaf(gpa_of(fn)), identity(gpa_of(fn)));
	// Another CPU still ran the old execute view: never give its int3 to the kernel.
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], fn) << "retried at the same instruction";
	EXPECT_TRUE(records().empty());
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 0), VTICE_VMCALL_OK);
	// With the intercept off every CPU has flushed: a kernel int3 there is the kernel's.
	ram[fn - kKernelBase] = 0xcc;
	EXPECT_EQ(hit(fn), VT_HOOK_NOT_MINE);
}

TEST_F(ProbePoints, TheFilterKeepsOtherTasksOut)
{
	start();
	put_code(fn, {0x90});
	// comm "vtprobe": this fake vCPU has no readable task, so nothing passes.
	uint64_t comm[2] = {};
	std::memcpy(comm, "vtprobe", 7);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_FILTER, 0, comm[0], comm[1]), VTICE_VMCALL_OK);
	arm(fn);
	vmcall(VTICE_VMCALL_PROBE_PASSED);
	const uint64_t passed_before = regs.rdx;
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	EXPECT_EQ(cpu().vmcs[GUEST_RIP], fn + 1) << "the CPU goes on either way";
	EXPECT_TRUE(records().empty());
	vmcall(VTICE_VMCALL_PROBE_PASSED);
	EXPECT_EQ(regs.rdx, passed_before + 1) << "passed over, and counted so";
	// An unterminated comm is refused.
	uint64_t long_comm[2] = {~0ull, ~0ull};
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_FILTER, 0, long_comm[0], long_comm[1]),
		  static_cast<uint64_t>(VTICE_VMCALL_EINVAL));
	vmcall(VTICE_VMCALL_PROBE_FILTER, 0, 0, 0);
}

TEST_F(ProbePoints, TheDebuggersBreakpointAtTheSameAddressStopsFirst)
{
	start();
	put_code(fn, {0x90});
	arm(fn);
	ASSERT_EQ(vt_bp_insert(fn, gpa_of(fn)), 0);
	EXPECT_EQ(hit(fn), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_SWBREAK);
	// Detach removes the debugger's; the probe stays.
	vt_hooks_remove_all();
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0xcc);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
}


// Watch probes: EPT-watched ranges of the probes' own (ept_watch.c) whose
// accesses are recorded once the instruction completed (records.h: the
// PROBE_HIT group with a WATCH record), never a stop.
class WatchProbes : public ProbePoints {
protected:
	const uint64_t var = kKernelBase + 20 * kPage + 0x80;	// a kernel variable

	uint64_t watch(uint64_t gva, uint64_t len, uint64_t type, uint64_t gpa_page)
	{
		return vmcall(VTICE_VMCALL_PROBE_WATCH, gva, gpa_page, len | type << 32);
	}

	uint64_t watch(uint64_t gva, uint64_t len, uint64_t type = VTICE_PROBE_WATCH_WRITE)
	{
		return watch(gva, len, type, gpa_of(gva) & ~(kPage - 1));
	}

	// The instruction at rip accesses gva (the CPU reported the linear address).
	vt_hook_result access(uint64_t rip, uint64_t gva, uint64_t kind)
	{
		cpu().vmcs[GUEST_RIP] = rip;
		uint64_t was = leaf(gpa_of(gva)) & kEptRWX;
		return violation(gpa_of(gva), kind | (was << 3) | kQualGlaValid | kQualGlaTranslated, gva);
	}

	// ...and completes, ending at next.
	vt_hook_result complete(uint64_t next)
	{
		cpu().vmcs[GUEST_RIP] = next;
		return mtf();
	}
};

TEST_F(WatchProbes, AWriteIsRecordedAfterItsInstructionAndTheCpuGoesOn)
{
	start();
	ASSERT_EQ(watch(var, 8), VTICE_VMCALL_OK);
	EXPECT_EQ(leaf(gpa_of(var)) & kEptRWX, kEptR | kEptX) << "the page lost write, nothing else";
	const uint64_t insn = kKernelBase + 3 * kPage + 0x10;
	regs.rdi = 7;
	EXPECT_EQ(access(insn, var + 4, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_TRUE(mtf_armed()) << "the write completes under MTF";
	EXPECT_EQ(complete(insn + 4), VT_HOOK_HANDLED) << "a probe never stops the machine";
	EXPECT_FALSE(mtf_armed());
	EXPECT_EQ(leaf(gpa_of(var)) & kEptRWX, kEptR | kEptX) << "protected again";
	auto recs = records();
	ASSERT_EQ(recs.size(), 5u) << "PROBE_HIT, three argument records, WATCH";
	EXPECT_EQ(recs[0].type, VTICE_REC_PROBE_HIT);
	EXPECT_EQ(recs[0].flags, 4u | VTICE_PROBE_HIT_WRITE);
	EXPECT_EQ(recs[0].u.syscall.nr, insn + 4) << "RIP after the access, as a data breakpoint's";
	EXPECT_EQ(recs[0].u.syscall.arg, 7u);
	EXPECT_EQ(recs[4].flags, VTICE_SYSCALL_DATA_WATCH);
	EXPECT_EQ(recs[4].u.raw[0], insn) << "the accessing instruction";
	EXPECT_EQ(recs[4].u.raw[1], var + 4);
}

// A range added to copy the stack (kstack in its watch: probe): its hits
// carry REGS and the stack; a range beside it added without the flag, none.
TEST_F(WatchProbes, OnlyARangeAddedToCopyTheStackCopiesIt)
{
	constexpr uint64_t kStack = 0xffffc90000104000ull, kStackPa = 0x400000;
	start();
	map_page(kStack, kStackPa);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_STACK, 64), VTICE_VMCALL_OK);
	ASSERT_EQ(watch(var, 8, VTICE_PROBE_WATCH_WRITE | VTICE_VMCALL_PROBE_COPIES_STACK >> 32), VTICE_VMCALL_OK);
	ASSERT_EQ(watch(var + 0x100, 8), VTICE_VMCALL_OK);
	cpu().vmcs[GUEST_RSP] = kStack + 0x800;
	const uint64_t insn = kKernelBase + 3 * kPage + 0x10;
	ASSERT_EQ(access(insn, var, kQualWrite), VT_HOOK_HANDLED);
	ASSERT_EQ(complete(insn + 4), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 5u + 1 + 64 / 16) << "PROBE_HIT, arguments, WATCH, REGS, 64 bytes of stack";
	EXPECT_EQ(recs[5].flags, VTICE_SYSCALL_DATA_REGS);
	EXPECT_EQ(recs[6].flags, VTICE_SYSCALL_DATA_STACK);
	ASSERT_EQ(access(insn, var + 0x100, kQualWrite), VT_HOOK_HANDLED);
	ASSERT_EQ(complete(insn + 4), VT_HOOK_HANDLED);
	EXPECT_EQ(records().size(), recs.size() + 5) << "the other range: no stack";
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR), VTICE_VMCALL_OK);
	ASSERT_EQ(watch(var, 8), VTICE_VMCALL_OK);
	ASSERT_EQ(access(insn, var, kQualWrite), VT_HOOK_HANDLED);
	ASSERT_EQ(complete(insn + 4), VT_HOOK_HANDLED);
	EXPECT_EQ(records().size(), recs.size() + 10) << "CLEAR forgot which range copied it";
}

TEST_F(WatchProbes, OtherBytesOfThePageAndReadsOfAWriteWatchAreNotRecorded)
{
	start();
	ASSERT_EQ(watch(var, 8), VTICE_VMCALL_OK);
	const uint64_t insn = kKernelBase + 3 * kPage;
	EXPECT_EQ(access(insn, var + 0x100, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(complete(insn + 2), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty()) << "the page's other bytes complete silently";
	ASSERT_EQ(watch(var + 0x200, 4, VTICE_PROBE_WATCH_READ), VTICE_VMCALL_OK);
	EXPECT_EQ(leaf(gpa_of(var)) & (kEptR | kEptW), 0u) << "a read watch takes read (and write) away";
	EXPECT_EQ(access(insn, var, kQualRead), VT_HOOK_HANDLED);
	EXPECT_EQ(complete(insn + 2), VT_HOOK_HANDLED);
	EXPECT_TRUE(records().empty()) << "a read of the write-watched bytes";
	EXPECT_EQ(access(insn, var + 0x1fe, kQualRead), VT_HOOK_HANDLED);
	EXPECT_EQ(complete(insn + 2), VT_HOOK_HANDLED);
	auto recs = records();
	ASSERT_EQ(recs.size(), 5u) << "an 8-byte read from 2 bytes below touches the read watch";
	EXPECT_EQ(recs[0].flags, 4u | VTICE_PROBE_HIT_READ);
	EXPECT_EQ(recs[4].u.raw[1], var + 0x200) << "the first watched byte touched";
}

TEST_F(WatchProbes, TheDebuggersWatchOnTheSameBytesStillStopsAndDetachLeavesTheProbe)
{
	start();
	ASSERT_EQ(watch(var, 8), VTICE_VMCALL_OK);
	ASSERT_EQ(vt_watch_insert(VT_POINT_WRITE, var, 8, 0), 0);
	const uint64_t insn = kKernelBase + 3 * kPage;
	EXPECT_EQ(access(insn, var, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(complete(insn + 3), VT_HOOK_STOP);
	EXPECT_EQ(stop.reason, VT_STOP_WATCH);
	EXPECT_EQ(records().size(), 5u) << "and the probe recorded it";
	vt_hooks_remove_all();	// the debugger detaches
	EXPECT_EQ(leaf(gpa_of(var)) & kEptRWX, kEptR | kEptX) << "the probe's protection stays";
	EXPECT_EQ(access(insn, var, kQualWrite), VT_HOOK_HANDLED);
	EXPECT_EQ(complete(insn + 3), VT_HOOK_HANDLED);
	EXPECT_EQ(records().size(), 10u);
}

TEST_F(WatchProbes, ClearGivesThePagesBackAndAStaleViolationIsRetried)
{
	start();
	ASSERT_EQ(watch(var, 8), VTICE_VMCALL_OK);
	ASSERT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR), VTICE_VMCALL_OK);
	EXPECT_EQ(leaf(gpa_of(var)), identity(gpa_of(var)));
	// Another CPU still caching the write-protected entry faults once more.
	size_t before = invepts();
	EXPECT_EQ(access(kKernelBase, var, kQualWrite), VT_HOOK_HANDLED) << "never handed to the exit's fallback";
	EXPECT_EQ(invepts(), before + 1) << "the stale entry is flushed, the write retried";
	EXPECT_FALSE(mtf_armed());
	EXPECT_TRUE(records().empty());
}

TEST_F(WatchProbes, RefusesWhatRootCannotWatch)
{
	start();
	const uint64_t einval = VTICE_VMCALL_EINVAL;
	EXPECT_EQ(watch(var, 0), einval) << "no bytes";
	EXPECT_EQ(watch(var, VTICE_PROBE_WATCH_LEN_MAX + 1), einval);
	EXPECT_EQ(watch(var, 8, 0), einval) << "type 0";
	EXPECT_EQ(watch(var, 8, 4), einval) << "type 4";
	const uint64_t page_end = (var & ~(kPage - 1)) + kPage;
	EXPECT_EQ(watch(page_end - 4, 8), einval) << "the range must stay in the page given";
	EXPECT_EQ(watch(var, 8, VTICE_PROBE_WATCH_WRITE, gpa_of(var)), einval) << "a frame, not a byte";
	EXPECT_EQ(leaf(gpa_of(var)) & kEptRWX, kEptRWX) << "nothing left behind";
}

}  // namespace

// One owner at a time (probe_points.h): the debugger's probes through the
// stub and the kernel side's through VTICE_IOC_PROBES never mix.
// A module's memory freed next (the kernel side's module notifier,
// PROBE_LEAVE): the stub's probe there goes, as the kernel side's do, its
// count kept and the removal counted; a range without one, or a second
// word for the same range, removes nothing; the stub cannot say it.
TEST_F(ProbePoints, AModulesGoingRemovesTheProbesWhoeverArmedThem)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_INTERCEPT, 1, 0, 0, nullptr), 0);
	ASSERT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 0, nullptr), 0);
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED);
	const uint64_t before = vt_probe_removed();
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_LEAVE, fn + 1, 0x1000), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 0u) << "the range starts past the probe";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_LEAVE, fn - 0x1000, 0x1000), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 0u) << "the range ends at the probe";
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0xcc);
	EXPECT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_LEAVE, fn, 1, 0, nullptr), -VT_EINVAL) << "the kernel's word";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_LEAVE, fn, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 1u);
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0x0f) << "the breakpoint is gone";
	EXPECT_EQ(vt_probe_removed(), before + 1);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_LEAVE, fn, 1), VTICE_VMCALL_OK);
	EXPECT_EQ(regs.rdx, 0u) << "nothing armed is left there";
	EXPECT_EQ(vt_probe_removed(), before + 1);
	u64 count = 0;
	EXPECT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_COUNT, 0, 0, 0, &count), 0) << "what it counted stays";
	vt_probe_stub_release();
	EXPECT_FALSE(vt_hooks_intercepting(VT_INTERCEPT_PROBES));
}

TEST_F(ProbePoints, TheStubAndTheKernelSideNeverArmOverEachOther)
{
	start();
	put_code(fn, {0x0f, 0x1f, 0x44, 0x00, 0x00});
	ASSERT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_INTERCEPT, 1, 0, 0, nullptr), 0);
	ASSERT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_ADD, fn, gpa_of(fn), 0, nullptr), 0);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_CLEAR), (uint64_t)VTICE_VMCALL_EBUSY) << "the stub's";
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1), (uint64_t)VTICE_VMCALL_EBUSY);
	EXPECT_EQ(vmcall(VTICE_VMCALL_PROBE_QUERY), VTICE_VMCALL_OK) << "counting is anyone's";
	EXPECT_EQ(hit(fn), VT_HOOK_HANDLED) << "the stub's probe records";
	EXPECT_EQ(records().size(), 4u);
	vt_probe_stub_release();	// the debugger detached
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0x0f) << "its breakpoint is gone with it";
	EXPECT_FALSE(vt_hooks_intercepting(VT_INTERCEPT_PROBES));
	arm(fn);	// the kernel side may now
	EXPECT_EQ(vt_probe_stub_op(VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0, nullptr), -VT_EBUSY);
	vt_probe_stub_release();
	EXPECT_EQ(mapped_frame(gpa_of(fn))[0x124], 0xcc) << "a detach leaves the kernel side's probes";
}
