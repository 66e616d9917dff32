// All-stop (hypervisor/debug/stop.c) with vCPUs on real threads, each with
// its own fake CPU and VMCS: the master NMIs the others, every CPU parks
// with its own register snapshot, the debugger reads and writes them, and
// the release gives each CPU its action (continue, step with MTF, stay).
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>

#include "fake_cpu.hpp"

extern "C" {
#include "../../hypervisor/debug/stop.h"
#include <vtice/ioctl.h>
}

using namespace vtice::fake;

namespace {

constexpr int kCpus = 2;

vt_hv g_hv;
vt_vcpu g_vcpu[kCpus];
vt_vcpu *g_vcpus[kCpus];
std::atomic<bool> g_nmi[kCpus];
std::function<void(uint32_t, const vt_dbg_stop *)> g_serve;

void serve(u32 master, const vt_dbg_stop *why) { g_serve(master, why); }

// This thread becomes CPU `cpu` in VMX non-root: a current VMCS with RIP.
void become_guest(uint32_t cpu, uint64_t rip)
{
	auto &c = vtice::fake::cpu();
	c.in_vmx = true;
	c.current_vmcs = 0x1000 + cpu;
	c.vmcs[GUEST_RIP] = rip;
	c.vmcs[GUEST_RSP] = 0xffffc90000010000ull + cpu;
	c.vmcs[GUEST_RFLAGS] = 0x246;	// IF set
	c.vmcs[GUEST_CR3] = 0x1234000 + cpu * 0x1000;
	c.vmcs[GUEST_CR4] = 0x3506f0 | X86_CR4_VMXE;
	c.vmcs[CR4_GUEST_HOST_MASK] = X86_CR4_VMXE;	// as vmcs.c sets it
	c.vmcs[CR4_READ_SHADOW] = 0x3506f0;
}

class Stop : public ::testing::Test {
protected:
	void SetUp() override
	{
		reset();
		g_hv = {};
		g_hv.caps.flags = VTICE_CAP_MTF;
		for (int i = 0; i < kCpus; i++) {
			g_vcpu[i] = {};
			g_vcpu[i].hv = &g_hv;
			g_vcpu[i].cpu = i;
			g_vcpu[i].apic_id = i;	// NMIs go by APIC ID (core/apic.c)
			g_vcpu[i].x2apic = true;
			g_vcpu[i].launched = true;
			g_vcpus[i] = &g_vcpu[i];
			g_nmi[i] = false;
		}
		nmi_hook() = [](uint32_t cpu) { g_nmi[cpu] = true; };
		tsc_khz() = 1000000;
		vt_stop_init(g_vcpus, kCpus, serve);
	}

	void TearDown() override { nmi_hook() = nullptr; }
};

// CPU 1 runs "guest code" until its NMI arrives, then takes the NMI exit.
std::thread run_cpu1(std::atomic<uint64_t> &counter, vt_guest_regs &regs, uint64_t &mtf_after)
{
	return std::thread([&] {
		become_guest(1, 0xffffffff81000100ull);
		while (!g_nmi[1])
			counter++;
		vt_exit exit{&g_vcpu[1], &regs, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
		EXPECT_TRUE(vt_stop_on_nmi(&g_vcpu[1], &exit)) << "the master's NMI, not the guest's";
		mtf_after = vtice::fake::cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL];
		for (int i = 0; i < 1000; i++)
			counter++;	// running again
	});
}

TEST_F(Stop, EveryCpuParksAndTheDebuggerSeesEachOnesRegisters)
{
	std::atomic<uint64_t> counter{0};
	vt_guest_regs regs1{};
	regs1.rax = 0x1111;
	uint64_t proc1 = 0;
	std::thread cpu1 = run_cpu1(counter, regs1, proc1);

	become_guest(0, 0xffffffff81000000ull);
	vt_guest_regs regs0{};
	regs0.rbx = 0x2222;
	vt_exit exit0{&g_vcpu[0], &regs0, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
	vt_dbg_stop why{0, VT_STOP_SWBREAK, 0};
	bool served = false;
	g_serve = [&](u32 master, const vt_dbg_stop *w) {
		served = true;
		EXPECT_EQ(master, 0u);
		EXPECT_EQ(w->reason, VT_STOP_SWBREAK);
		struct vt_stop_cpu *c0 = vt_stop_cpu(0), *c1 = vt_stop_cpu(1);
		ASSERT_TRUE(c0 && c1) << "both CPUs parked";
		EXPECT_EQ(c0->regs.rip, 0xffffffff81000000ull);
		EXPECT_EQ(c0->regs.gpr[VT_DBG_RBX], 0x2222u);
		EXPECT_EQ(c1->regs.rip, 0xffffffff81000100ull);
		EXPECT_EQ(c1->regs.gpr[VT_DBG_RAX], 0x1111u);
		EXPECT_EQ(c1->regs.gpr[VT_DBG_RSP], 0xffffc90000010001ull);
		EXPECT_EQ(c1->regs.cr4 & X86_CR4_VMXE, 0u) << "the guest's view of CR4";
		EXPECT_EQ(c1->paging.cr3, 0x1235000u);
		// Stopped means stopped: CPU 1's counter does not move.
		uint64_t before = counter;
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		EXPECT_EQ(counter.load(), before);
		// The debugger writes CPU 1's RAX and steps it; CPU 0 continues.
		c1->regs.gpr[VT_DBG_RAX] = 0x5555;
		c1->regs_dirty = true;
		enum vt_dbg_run run[kCpus] = {VT_RUN_CONTINUE, VT_RUN_STEP};
		EXPECT_EQ(vt_stop_set_run(run, kCpus), 0);
	};
	vt_stop_machine(&g_vcpu[0], &exit0, &why);
	cpu1.join();
	EXPECT_TRUE(served);
	EXPECT_TRUE(g_nmi[1]) << "the master NMIed the other CPU";
	EXPECT_EQ(regs1.rax, 0x5555u) << "CPU 1 applied the debugger's write itself";
	EXPECT_TRUE(proc1 & CPU_BASED_MONITOR_TRAP_FLAG) << "CPU 1 resumed with MTF armed";
	EXPECT_FALSE(vtice::fake::cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG)
		<< "CPU 0 continues without MTF";
	EXPECT_GE(counter.load(), 1000u);
}

// The list the OS layer passed at load (vt_mod's, which the kernel can
// write) is copied: rewriting it afterwards neither hides a CPU in VMX from
// the all-stop nor adds one of the kernel's invention.
TEST_F(Stop, RewritingTheKernelsVcpuListAfterLoadChangesNothing)
{
	std::atomic<uint64_t> counter{0};
	vt_guest_regs regs1{};
	uint64_t proc1 = 0;
	vt_vcpu bogus{};
	g_vcpus[1] = nullptr;
	g_vcpus[0] = &bogus;
	std::thread cpu1 = run_cpu1(counter, regs1, proc1);
	become_guest(0, 0xffffffff81000000ull);
	vt_guest_regs regs0{};
	vt_exit exit0{&g_vcpu[0], &regs0, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	bool both = false;
	g_serve = [&](u32, const vt_dbg_stop *) {
		struct vt_stop_cpu *c0 = vt_stop_cpu(0), *c1 = vt_stop_cpu(1);
		both = c0 && c1 && c0->vcpu == &g_vcpu[0] && c1->vcpu == &g_vcpu[1];
	};
	vt_stop_machine(&g_vcpu[0], &exit0, &why);
	cpu1.join();
	EXPECT_TRUE(both) << "both real vCPUs parked, neither replaced";
	EXPECT_TRUE(g_nmi[1]);
}

TEST_F(Stop, AStepHoldsInterruptsOffForOneInstruction)
{
	become_guest(0, 0x1000);
	g_vcpu[1].launched = false;	// CPU 1 is not in VMX: a single-CPU machine
	vt_guest_regs regs{};
	vt_exit exit{&g_vcpu[0], &regs, 0, 0};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	g_serve = [&](u32, const vt_dbg_stop *) {
		enum vt_dbg_run run[1] = {VT_RUN_STEP};
		EXPECT_EQ(vt_stop_set_run(run, 1), 0);
	};
	vt_stop_machine(&g_vcpu[0], &exit, &why);
	auto &v = vtice::fake::cpu().vmcs;
	EXPECT_TRUE(v[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
	// SDM 3C 26.3.1.5: STI blocking is legal on entry only with RFLAGS.IF = 1
	EXPECT_EQ(v[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI, GUEST_INTR_STATE_STI);
	EXPECT_TRUE(vt_stop_step_done(&g_vcpu[0])) << "the next MTF exit ends the step";
	EXPECT_FALSE(v[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG);
	EXPECT_FALSE(vt_stop_step_done(&g_vcpu[0])) << "an MTF that is not ours";
}

TEST_F(Stop, NoStiBlockingWhenInterruptsAreOff)
{
	become_guest(0, 0x1000);
	vtice::fake::cpu().vmcs[GUEST_RFLAGS] = 0x46;
	g_vcpu[1].launched = false;
	vt_guest_regs regs{};
	vt_exit exit{&g_vcpu[0], &regs, 0, 0};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	g_serve = [&](u32, const vt_dbg_stop *) {
		enum vt_dbg_run run[1] = {VT_RUN_STEP};
		vt_stop_set_run(run, 1);
	};
	vt_stop_machine(&g_vcpu[0], &exit, &why);
	EXPECT_EQ(vtice::fake::cpu().vmcs[GUEST_INTERRUPTIBILITY_INFO] & GUEST_INTR_STATE_STI, 0u);
}

TEST_F(Stop, StepIsRefusedWithoutMtfOrInterruptExiting)
{
	g_hv.caps.flags = 0;
	enum vt_dbg_run run[kCpus] = {VT_RUN_STEP, VT_RUN_STAY};
	EXPECT_EQ(vt_stop_set_run(run, kCpus), -VT_EOPNOTSUPP);
	// What a TF step needs to hold interrupts off (single_step.c).
	g_hv.caps.pin = uint64_t(PIN_BASED_EXT_INTR_MASK) << 32;
	g_hv.caps.exit = uint64_t(VM_EXIT_ACK_INTR_ON_EXIT) << 32;
	EXPECT_EQ(vt_stop_set_run(run, kCpus), 0) << "no MTF: the TF fallback steps";
}

TEST_F(Stop, ACpuThatNeverAnswersIsReportedMissingNotWaitedFor)
{
	become_guest(0, 0x1000);
	tsc_khz() = 10;	// a short deadline in fake TSC ticks
	vt_guest_regs regs{};
	vt_exit exit{&g_vcpu[0], &regs, 0, 0};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	bool served = false;
	g_serve = [&](u32, const vt_dbg_stop *) {
		served = true;
		EXPECT_NE(vt_stop_cpu(0), nullptr);
		EXPECT_EQ(vt_stop_cpu(1), nullptr) << "CPU 1 never parked";
	};
	vt_stop_machine(&g_vcpu[0], &exit, &why);
	EXPECT_TRUE(served);
}

TEST_F(Stop, AGuestNmiIsNotTheMasters)
{
	become_guest(1, 0x1000);
	vt_guest_regs regs{};
	vt_exit exit{&g_vcpu[1], &regs, 0, 0};
	EXPECT_FALSE(vt_stop_on_nmi(&g_vcpu[1], &exit)) << "no stop under way: the guest's NMI";
}

// A CPU that stays parked (vCont;s:1 leaves CPU 0 stopped) comes back only
// with a later release, and keeps its snapshot meanwhile.
TEST_F(Stop, StayKeepsACpuParkedAcrossResumes)
{
	std::atomic<int> phase{0};
	std::thread cpu1([&] {
		become_guest(1, 0x2000);
		while (!g_nmi[1])
			;
		vt_guest_regs regs{};
		vt_exit exit{&g_vcpu[1], &regs, 0, 0};
		vt_stop_on_nmi(&g_vcpu[1], &exit);	// parks until released
		phase = 1;
		// its step ends: a new stop with CPU 1 as master
		vt_dbg_stop why{1, VT_STOP_STEP, 0};
		vt_stop_machine(&g_vcpu[1], &exit, &why);
		phase = 2;
	});
	become_guest(0, 0x1000);
	vt_guest_regs regs0{};
	vt_exit exit0{&g_vcpu[0], &regs0, 0, 0};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	int serves = 0;
	g_serve = [&](u32 master, const vt_dbg_stop *w) {
		serves++;
		if (serves == 1) {
			EXPECT_EQ(master, 0u);
			enum vt_dbg_run run[kCpus] = {VT_RUN_STAY, VT_RUN_STEP};
			vt_stop_set_run(run, kCpus);
			return;
		}
		EXPECT_EQ(master, 1u);
		EXPECT_EQ(w->reason, VT_STOP_STEP);
		struct vt_stop_cpu *c0 = vt_stop_cpu(0);
		ASSERT_NE(c0, nullptr) << "CPU 0 stayed parked";
		EXPECT_EQ(c0->regs.rip, 0x1000u);
		enum vt_dbg_run run[kCpus] = {VT_RUN_CONTINUE, VT_RUN_CONTINUE};
		vt_stop_set_run(run, kCpus);
	};
	vt_stop_machine(&g_vcpu[0], &exit0, &why);
	cpu1.join();
	EXPECT_EQ(serves, 2);
	EXPECT_EQ(phase.load(), 2);
}

}  // namespace

// tsc_offset=1 (core/tsc_hide.c): the span in which every CPU was parked
// comes out of every CPU's TSC, by the same amount, each CPU writing its
// own VMCS as it leaves; a CPU that never parked leaves the TSC alone.
class StopHidingTime : public Stop {
protected:
	uint8_t bitmaps[kCpus][4096] = {};

	void SetUp() override
	{
		Stop::SetUp();
		g_hv.tsc.on = true;
		for (int i = 0; i < kCpus; i++)
			g_vcpu[i].msr_bitmap = bitmaps[i];
	}
};

TEST_F(StopHidingTime, EveryCpuLosesTheSameStoppedSpan)
{
	std::atomic<uint64_t> counter{0};
	vt_guest_regs regs1{};
	uint64_t offset1 = 0;
	std::thread cpu1([&] {
		become_guest(1, 0xffffffff81000100ull);
		while (!g_nmi[1])
			counter++;
		vt_exit exit{&g_vcpu[1], &regs1, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
		vt_stop_on_nmi(&g_vcpu[1], &exit);
		offset1 = vtice::fake::cpu().vmcs[TSC_OFFSET];
	});
	become_guest(0, 0xffffffff81000000ull);
	vt_guest_regs regs0{};
	vt_exit exit0{&g_vcpu[0], &regs0, EXIT_REASON_EXCEPTION_NMI, EXIT_REASON_EXCEPTION_NMI};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	uint64_t served_from = 0, served_to = 0;
	g_serve = [&](u32, const vt_dbg_stop *) {
		served_from = vt_rdtsc();
		for (int i = 0; i < 50; i++)
			vt_rdtsc();	// the user looks: 5,000 fake cycles
		served_to = vt_rdtsc();
	};
	vt_stop_machine(&g_vcpu[0], &exit0, &why);
	cpu1.join();
	uint64_t hidden = g_hv.tsc.hidden;
	EXPECT_GE(hidden, served_to - served_from) << "at least the debugger's session";
	EXPECT_LE(hidden, vt_stop_last_tsc()) << "never more than the whole stop";
	EXPECT_EQ(vtice::fake::cpu().vmcs[TSC_OFFSET], (uint64_t)-(int64_t)hidden);
	EXPECT_EQ(offset1, (uint64_t)-(int64_t)hidden) << "CPU 1 took the same offset";
	EXPECT_EQ(g_vcpu[0].tsc_applied, hidden);
	EXPECT_EQ(g_vcpu[1].tsc_applied, hidden);
}

TEST_F(StopHidingTime, ACpuThatNeverParkedKeepsTheTscAsItIs)
{
	become_guest(0, 0x1000);
	tsc_khz() = 1;	// the 1 s wait for CPU 1 is 1,000 fake cycles
	vt_guest_regs regs{};
	vt_exit exit{&g_vcpu[0], &regs, 0, 0};
	vt_dbg_stop why{0, VT_STOP_SIGINT, 0};
	bool missing = false;
	g_serve = [&](u32, const vt_dbg_stop *) { missing = vt_stop_cpu(1) == nullptr; };
	vt_stop_machine(&g_vcpu[0], &exit, &why);
	EXPECT_TRUE(missing) << "CPU 1 never took its NMI";
	EXPECT_EQ(g_hv.tsc.hidden, 0u);
	EXPECT_EQ(vtice::fake::cpu().vmcs[TSC_OFFSET], 0u);
}
