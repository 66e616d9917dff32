// SPDX-License-Identifier: GPL-2.0
/*
 * All-stop for the debugger (see stop.h). Runs only in VMX root, with
 * interrupts off, on the CPUs' own host stacks; shares state through
 * st below with acquire/release ordering and never blocks without a
 * deadline, except the master's session with the debugger itself.
 *
 * Only the CPU that owns a VMCS can read or write it, so each CPU takes
 * its own register snapshot when it parks and applies the debugger's
 * changes itself when released.
 */
#include "stop.h"
#include "dbg_os.h"
#include "hooks.h"
#include "single_step.h"
#include "../core/exit.h"
#include "../core/intrin.h"
#include <vtice/ioctl.h>

#define VT_NO_MASTER		(-1)
#define VT_GATHER_TIMEOUT_MS	1000

static struct {
	struct vt_vcpu *vcpus[VT_STOP_MAX_CPUS];	/* every possible CPU's, from load */
	u32 nr;
	vt_stop_serve_fn serve;
	void (*on_park)(struct vt_vcpu *vcpu);
	s32 master;		/* CPU serving the debugger, or VT_NO_MASTER */
	u32 stop_req;		/* every CPU parks before its next VM entry */
	u32 release;		/* bumped to let parked CPUs go */
	u64 last_tsc;
	u64 tsc_khz;		/* taken at load: VMX root reads no kernel variable */
	struct vt_stop_cpu cpu[VT_STOP_MAX_CPUS];
} VT_ROOT_STATE_TYPE st VT_ROOT_STATE;

void vt_stop_init(struct vt_vcpu *const *vcpus, u32 nr_cpus, vt_stop_serve_fn serve)
{
	u32 i;

	vt_memset(&st, 0, sizeof(st));
	st.nr = nr_cpus < VT_STOP_MAX_CPUS ? nr_cpus : VT_STOP_MAX_CPUS;
	for (i = 0; i < st.nr; i++)
		st.vcpus[i] = vcpus[i];
	st.serve = serve;
	st.master = VT_NO_MASTER;
	st.tsc_khz = vt_os_tsc_khz();
}

u64 vt_stop_tsc_khz(void)
{
	return st.tsc_khz;
}

void vt_stop_on_park(void (*fn)(struct vt_vcpu *vcpu))
{
	st.on_park = fn;
}

int vt_stop_shield(void)
{
	return vt_os_shield_image(&st, sizeof(st));
}

/*
 * A CPU in VMX operation, or NULL. From this module's own list and the
 * vCPU's own flag, never from a list the kernel can write.
 */
static struct vt_vcpu *vt_stop_vcpu(u32 cpu)
{
	struct vt_vcpu *vcpu = cpu < st.nr ? st.vcpus[cpu] : NULL;

	return vcpu && VT_READ_ONCE(vcpu->launched) ? vcpu : NULL;
}

/* The guest's view: CR4.VMXE is shadowed to 0 (vmcs.c). */
static void vt_stop_snapshot_sys(struct vt_dbg_regs *r, const struct vt_controls *ctls)
{
	r->rip = vt_vmread_or0(GUEST_RIP);
	r->rflags = vt_vmread_or0(GUEST_RFLAGS);
	r->cs = vt_vmread_or0(GUEST_CS_SELECTOR);
	r->ss = vt_vmread_or0(GUEST_SS_SELECTOR);
	r->ds = vt_vmread_or0(GUEST_DS_SELECTOR);
	r->es = vt_vmread_or0(GUEST_ES_SELECTOR);
	r->fs = vt_vmread_or0(GUEST_FS_SELECTOR);
	r->gs = vt_vmread_or0(GUEST_GS_SELECTOR);
	r->fs_base = vt_vmread_or0(GUEST_FS_BASE);
	r->gs_base = vt_vmread_or0(GUEST_GS_BASE);
	/* Not switched by VMX transitions: the live value is the guest's. */
	r->k_gs_base = vt_rdmsr(MSR_KERNEL_GS_BASE);
	r->cr2 = vt_read_cr2();
	r->cr8 = vt_read_cr8();
	r->cr0 = vt_guest_cr0();
	r->cr3 = vt_vmread_or0(GUEST_CR3);
	r->cr4 = vt_guest_cr4();
	r->efer = (ctls->exit & VM_EXIT_SAVE_IA32_EFER) ? vt_vmread_or0(GUEST_IA32_EFER) :
							   vt_rdmsr(MSR_EFER);
}

static void vt_stop_snapshot(struct vt_stop_cpu *c, struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	const struct vt_guest_regs *g = exit->regs;
	u64 *gpr = c->regs.gpr;

	/* The debugger sees the guest's own RFLAGS, without a TF step's flag. */
	c->step_suspended = vt_single_step_suspend(vcpu);
	gpr[VT_DBG_RAX] = g->rax;
	gpr[VT_DBG_RBX] = g->rbx;
	gpr[VT_DBG_RCX] = g->rcx;
	gpr[VT_DBG_RDX] = g->rdx;
	gpr[VT_DBG_RSI] = g->rsi;
	gpr[VT_DBG_RDI] = g->rdi;
	gpr[VT_DBG_RBP] = g->rbp;
	gpr[VT_DBG_RSP] = vt_vmread_or0(GUEST_RSP);
	vt_memcpy(&gpr[VT_DBG_R8], &g->r8, 8 * sizeof(u64));	/* r8..r15 in both layouts */
	vt_stop_snapshot_sys(&c->regs, &vcpu->hv->ctls);
	c->paging.cr3 = c->regs.cr3;
	c->paging.la57 = c->regs.cr4 & X86_CR4_LA57;
	c->frame = exit->regs;
	c->vcpu = vcpu;
	c->regs_dirty = false;
}

/* GPRs, RSP, RIP and RFLAGS are writable; the rest are for reading. */
static void vt_stop_writeback(struct vt_stop_cpu *c)
{
	struct vt_guest_regs *g = c->frame;
	const u64 *gpr = c->regs.gpr;

	if (!c->regs_dirty)
		return;
	g->rax = gpr[VT_DBG_RAX];
	g->rbx = gpr[VT_DBG_RBX];
	g->rcx = gpr[VT_DBG_RCX];
	g->rdx = gpr[VT_DBG_RDX];
	g->rsi = gpr[VT_DBG_RSI];
	g->rdi = gpr[VT_DBG_RDI];
	g->rbp = gpr[VT_DBG_RBP];
	vt_memcpy(&g->r8, &gpr[VT_DBG_R8], 8 * sizeof(u64));
	vt_vmwrite(GUEST_RSP, gpr[VT_DBG_RSP]);
	vt_vmwrite(GUEST_RIP, c->regs.rip);
	/* Bit 1 is reserved as 1 (SDM Vol. 3C 26.3.1.4). */
	vt_vmwrite(GUEST_RFLAGS, c->regs.rflags | VT_BIT(1));
	c->regs_dirty = false;
}

/*
 * Spin until a release after generation gen gives this CPU an action other
 * than "stay". The value seen is the one waited past next, so a release
 * that follows closely on another is never missed.
 */
static void vt_stop_wait_release(struct vt_stop_cpu *c, u32 gen)
{
	u32 seen;

	for (;;) {
		while ((seen = VT_LOAD_ACQUIRE(st.release)) == gen)
			vt_pause();
		if (VT_READ_ONCE(c->run) != VT_RUN_STAY)
			return;
		gen = seen;
	}
}

/*
 * The step is armed last: the hooks may load debug registers on resume,
 * and a TF step may lend one of them (single_step.c).
 */
static void vt_stop_leave(struct vt_stop_cpu *c, struct vt_vcpu *vcpu)
{
	vt_stop_writeback(c);
	vt_tsc_hide_apply(vcpu);
	vt_hooks_on_resume(vcpu);
	vt_syscall_trap_stub_sync(vcpu);
	vt_profile_stub_sync(vcpu);
	c->stepping = c->run == VT_RUN_STEP;
	if (c->stepping || c->step_suspended)
		vt_single_step_arm(vcpu);
	c->step_suspended = false;
	c->run = VT_RUN_CONTINUE;
	VT_STORE_RELEASE(c->parked, 0);
}

static void vt_stop_park(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_stop_cpu *c = &st.cpu[vcpu->cpu];
	u32 gen;

	if (st.on_park)
		st.on_park(vcpu);
	vt_stop_snapshot(c, vcpu, exit);
	c->missing = false;
	gen = VT_LOAD_ACQUIRE(st.release);
	VT_STORE_RELEASE(c->parked, 1);
	/* Came too late (the master gave up waiting and resumed): run on. */
	if (!VT_LOAD_ACQUIRE(st.stop_req)) {
		VT_STORE_RELEASE(c->parked, 0);
		return;
	}
	vt_stop_wait_release(c, gen);
	vt_stop_leave(c, vcpu);
}

/*
 * NMI every CPU not parked yet (a parked CPU would take it in VMX root,
 * through the kernel's handler), then wait for each, with a deadline: a
 * CPU that does not come (NMIs masked by firmware, stuck in SMM) is
 * reported missing rather than hanging the debugger. True if every CPU
 * parked.
 */
static bool vt_stop_gather(struct vt_vcpu *vcpu)
{
	bool all = true;
	u64 deadline = vt_rdtsc() + st.tsc_khz * VT_GATHER_TIMEOUT_MS;
	u32 i, me = vcpu->cpu;

	for (i = 0; i < st.nr; i++) {
		struct vt_stop_cpu *c = &st.cpu[i];

		if (i == me || !vt_stop_vcpu(i) || VT_LOAD_ACQUIRE(c->parked))
			continue;
		VT_STORE_RELEASE(c->nmi_sent, 1);
		vt_send_nmi(vcpu, vt_stop_vcpu(i));
	}
	for (i = 0; i < st.nr; i++) {
		struct vt_stop_cpu *c = &st.cpu[i];

		if (i == me || !vt_stop_vcpu(i))
			continue;
		while (!VT_LOAD_ACQUIRE(c->parked) && vt_rdtsc() < deadline)
			vt_pause();
		c->missing = !VT_LOAD_ACQUIRE(c->parked);
		all &= !c->missing;
	}
	return all;
}

/* Released CPUs that run again must be gone before another stop begins. */
static void vt_stop_wait_departures(u32 me)
{
	u64 deadline = vt_rdtsc() + st.tsc_khz * VT_GATHER_TIMEOUT_MS;
	u32 i;

	for (i = 0; i < st.nr; i++) {
		struct vt_stop_cpu *c = &st.cpu[i];

		if (i == me || c->missing || VT_READ_ONCE(c->run) == VT_RUN_STAY)
			continue;
		while (VT_LOAD_ACQUIRE(c->parked) && vt_rdtsc() < deadline)
			vt_pause();
	}
}

static void vt_stop_release(u32 me)
{
	VT_STORE_RELEASE(st.stop_req, 0);
	VT_STORE_RELEASE(st.release, st.release + 1);
	vt_stop_wait_departures(me);
	VT_STORE_RELEASE(st.master, VT_NO_MASTER);
}

/* Become the master, or park if another CPU is already stopping the machine. */
static bool vt_stop_elect(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	s32 none = VT_NO_MASTER;

	for (;;) {
		if (__atomic_compare_exchange_n(&st.master, &none, (s32)vcpu->cpu, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return true;
		none = VT_NO_MASTER;
		/* Our event is not lost: the guest re-executes the int3 or access. */
		if (VT_LOAD_ACQUIRE(st.stop_req)) {
			vt_stop_park(vcpu, exit);
			return false;
		}
		vt_pause();	/* the last master is still releasing */
	}
}

void vt_stop_machine(struct vt_vcpu *vcpu, struct vt_exit *exit, const struct vt_dbg_stop *why)
{
	struct vt_stop_cpu *c;
	u64 start, all_parked, end;
	bool all;
	u32 gen;

	if (vcpu->cpu >= st.nr || !st.serve || !vt_stop_elect(vcpu, exit))
		return;
	c = &st.cpu[vcpu->cpu];
	start = vt_rdtsc();
	VT_STORE_RELEASE(st.stop_req, 1);
	vt_stop_snapshot(c, vcpu, exit);
	c->missing = false;
	VT_STORE_RELEASE(c->parked, 1);
	all = vt_stop_gather(vcpu);
	all_parked = vt_rdtsc();
	st.serve(vcpu->cpu, why);
	end = vt_rdtsc();
	st.last_tsc = end - start;
	/*
	 * Only the span in which no CPU ran is hidden: every CPU's last guest
	 * TSC read came before all_parked, and its first after end, so each
	 * one's TSC still only goes forward. A CPU that never parked kept
	 * running: hiding the stop from the others would split the TSCs.
	 */
	if (all)
		vt_tsc_hide_add(vcpu->hv, end - all_parked);
	gen = st.release + 1;
	vt_stop_release(vcpu->cpu);
	if (c->run == VT_RUN_STAY)
		vt_stop_wait_release(c, gen);
	vt_stop_leave(c, vcpu);
}

bool vt_stop_on_nmi(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_stop_cpu *c;

	if (vcpu->cpu >= st.nr)
		return false;
	c = &st.cpu[vcpu->cpu];
	if (!__atomic_exchange_n(&c->nmi_sent, 0, __ATOMIC_ACQ_REL))
		return false;	/* the guest's own NMI */
	if (VT_LOAD_ACQUIRE(st.stop_req) && VT_READ_ONCE(st.master) != (s32)vcpu->cpu)
		vt_stop_park(vcpu, exit);
	return true;
}

void vt_stop_pre_entry(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	if (vcpu->cpu >= st.nr || !VT_LOAD_ACQUIRE(st.stop_req) ||
	    VT_READ_ONCE(st.master) == (s32)vcpu->cpu)
		return;
	vt_stop_park(vcpu, exit);
}

bool vt_stop_step_done(struct vt_vcpu *vcpu)
{
	struct vt_stop_cpu *c;

	if (vcpu->cpu >= st.nr || !st.cpu[vcpu->cpu].stepping)
		return false;
	c = &st.cpu[vcpu->cpu];
	c->stepping = false;
	vt_single_step_disarm(vcpu);
	return true;
}

u32 vt_stop_cpu_count(void)
{
	return st.nr;
}

struct vt_stop_cpu *vt_stop_cpu(u32 cpu)
{
	if (cpu >= st.nr || !vt_stop_vcpu(cpu) || !VT_LOAD_ACQUIRE(st.cpu[cpu].parked))
		return NULL;
	return &st.cpu[cpu];
}

int vt_stop_set_run(const enum vt_dbg_run *run, u32 count)
{
	u32 i;

	for (i = 0; i < st.nr; i++) {
		struct vt_vcpu *vcpu = vt_stop_vcpu(i);

		if (i < count && run[i] == VT_RUN_STEP && vcpu &&
		    !vt_single_step_supported(vcpu->hv))
			return -VT_EOPNOTSUPP;
	}
	for (i = 0; i < st.nr; i++)
		st.cpu[i].run = i < count ? run[i] : VT_RUN_CONTINUE;
	return 0;
}

u64 vt_stop_last_tsc(void)
{
	return st.last_tsc;
}
