// SPDX-License-Identifier: GPL-2.0
/*
 * The stub's wiring: UART, RSP engine, all-stop and hooks joined through
 * the core's callbacks (struct vt_callbacks). Each callback returns
 * whether the event was the debugger's; anything else goes back to the
 * core's default, so the guest sees its own exceptions and NMIs unchanged.
 */
#include "stub.h"
#include "hooks.h"
#include "lbr.h"
#include "lockup.h"
#include "rsp.h"
#include "rsp_engine.h"
#include "single_step.h"
#include "stop.h"
#include "path_trace.h"
#include "tracer.h"
#include "uart.h"
#include "dbg_os.h"
#include "../core/exit.h"
#include "../core/intrin.h"
#include <vtice/vmcall.h>

static struct {
	struct vt_hv *hv;
	struct vt_uart uart;
	struct vt_rsp rsp;
	struct vt_guest_mem mem;
	u32 line_lock;		/* one CPU at a time reads the UART */
	u32 master;		/* the CPU serving the debugger (window slot) */
	u64 quiet_tsc;		/* the last moment the line was read empty */
	u64 breakin_tsc;	/* quiet_tsc of the break-in being served, or 0 */
	struct vt_breakin_stats breakin;
	struct vt_lockup lockup;
	struct vt_lockup_cpu lockup_cpu[VT_STOP_MAX_CPUS];
	u64 fatal_guard[VT_STUB_MAX_GUARDS];	/* gvas of the guards on panic() */
	bool dying;		/* a panic was reported: a dying kernel spins, no news */
	u32 lockup_secs;
	struct vt_stub_cause_info cause[VT_STOP_MAX_CPUS];	/* noted before a CPU stops */
	u64 trap_tsc[VT_STOP_MAX_CPUS];	/* when a CPU began to stop the machine */
	struct vt_stub_why why;	/* the stop being served ("monitor why") */
	bool unload_asked;	/* "monitor unload": the next detach unloads */
} VT_ROOT_STATE_TYPE stub VT_ROOT_STATE;

static void vt_stub_put_byte(void *ctx, u8 byte)
{
	vt_uart_putc(&stub.uart, byte);
}

static void vt_stub_lock_line(void)
{
	while (__atomic_exchange_n(&stub.line_lock, 1, __ATOMIC_ACQUIRE))
		vt_pause();
}

static bool vt_stub_trylock_line(void)
{
	return !__atomic_exchange_n(&stub.line_lock, 1, __ATOMIC_ACQUIRE);
}

static void vt_stub_unlock_line(void)
{
	__atomic_store_n(&stub.line_lock, 0, __ATOMIC_RELEASE);
}

/* Called with the line held, just before the stop reply of a break-in. */
static void vt_stub_note_breakin(void)
{
	u64 ticks;

	if (!stub.breakin_tsc)
		return;
	ticks = vt_rdtsc() - stub.breakin_tsc;
	stub.breakin_tsc = 0;
	stub.breakin.count++;
	stub.breakin.last_ticks = ticks;
	if (ticks > stub.breakin.max_ticks)
		stub.breakin.max_ticks = ticks;
}

void vt_stub_get_breakin(struct vt_breakin_stats *out)
{
	*out = stub.breakin;
}

int vt_stub_ask_unload(void)
{
	if (!VT_LOAD_ACQUIRE(stub.hv->sealed))
		return -VT_EACCES;
	stub.unload_asked = true;
	return 0;
}

void vt_stub_detached(void)
{
	if (stub.unload_asked)
		VT_STORE_RELEASE(stub.hv->unloading, true);
}

void vt_stub_get_why(struct vt_stub_why *out)
{
	*out = stub.why;
	out->lockup_secs = stub.lockup_secs;
}

/* The cause a CPU noted for the stop now served, if it is that stop's. */
static void vt_stub_note_why(const struct vt_dbg_stop *why)
{
	struct vt_stub_cause_info *c = why->cpu < VT_STOP_MAX_CPUS ? &stub.cause[why->cpu] : NULL;
	bool triple = why->reason == VT_STOP_CRASH && !why->data_addr;
	bool lockup = why->reason == VT_STOP_LOCKUP;

	stub.why.stopped = true;
	stub.why.stop = *why;
	stub.why.reply_ticks = 0;
	if (why->cpu < VT_STOP_MAX_CPUS && stub.trap_tsc[why->cpu]) {
		stub.why.reply_ticks = vt_rdtsc() - stub.trap_tsc[why->cpu];
		stub.trap_tsc[why->cpu] = 0;
	}
	vt_memset(&stub.why.info, 0, sizeof(stub.why.info));
	if (c && ((triple && c->cause == VT_CAUSE_TRIPLE_FAULT) ||
		  (lockup && (c->cause == VT_CAUSE_IRQS_OFF || c->cause == VT_CAUSE_TIMER_OFF))))
		stub.why.info = *c;
	if (c)
		c->cause = VT_CAUSE_NONE;
}

/* A panic (not an oops, from which the kernel goes on) or a triple fault. */
static bool vt_stub_is_fatal(const struct vt_dbg_stop *why)
{
	u32 i;

	if (why->reason != VT_STOP_CRASH)
		return false;
	if (!why->data_addr)
		return true;	/* the triple fault */
	for (i = 0; i < VT_STUB_MAX_GUARDS; i++)
		if (stub.fatal_guard[i] && stub.fatal_guard[i] == why->data_addr)
			return true;
	return false;
}

/* The debugger's session: feed the line to the engine until it resumes. */
static void vt_stub_serve(u32 master, const struct vt_dbg_stop *why)
{
	u8 c;

	vt_stub_lock_line();
	stub.master = master;
	vt_stub_note_breakin();
	vt_stub_note_why(why);
	vt_rsp_report_stop(&stub.rsp, why);
	for (;;) {
		if (!vt_uart_getc(&stub.uart, &c)) {
			vt_pause();
			continue;
		}
		if (vt_rsp_feed(&stub.rsp, c, true) == VT_RSP_RESUMED)
			break;
	}
	/* The line is drained here: a later 0x03 arrives after this moment. */
	stub.why.stopped = false;
	stub.quiet_tsc = vt_rdtsc();
	stub.lockup.resumed = stub.quiet_tsc;
	if (vt_stub_is_fatal(why)) {
		stub.dying = true;
		/* A triple-faulted CPU resets the machine once it runs on:
		 * the debugger must first get the whole of the last reply. */
		vt_uart_drain(&stub.uart);
	}
	vt_stub_unlock_line();
}

/* What a stop means for the LBR snapshots (lbr.h); 0 when it takes none. */
static u32 vt_stub_lbr_event(const struct vt_dbg_stop *why)
{
	if (why->reason == VT_STOP_LOCKUP)
		return VTICE_LBR_EV_LOCKUP;
	if (why->reason != VT_STOP_CRASH)
		return VTICE_LBR_EV_NONE;
	if (!why->data_addr)
		return VTICE_LBR_EV_TRIPLE_FAULT;
	return vt_stub_is_fatal(why) ? VTICE_LBR_EV_PANIC : VTICE_LBR_EV_OOPS;
}

/*
 * A crash saves this CPU's LBR stack first, while the exit keeps it frozen,
 * and every CPU the all-stop parks saves its own (vt_stop_on_park).
 */
static void vt_stub_stop_machine(struct vt_vcpu *vcpu, struct vt_exit *exit,
				 const struct vt_dbg_stop *why)
{
	u32 event = vt_stub_lbr_event(why);

	/* Unloading: CPUs that have left VMX can no longer be stopped. */
	if (VT_LOAD_ACQUIRE(stub.hv->unloading))
		return;
	if (vcpu->cpu < VT_STOP_MAX_CPUS)
		stub.trap_tsc[vcpu->cpu] = vt_rdtsc();
	if (event)
		vt_lbr_crash_begin(vcpu, event);
	vt_stop_machine(vcpu, exit, why);
	if (event)
		vt_lbr_crash_end();
}

static void vt_stub_stop(struct vt_vcpu *vcpu, struct vt_exit *exit,
			 enum vt_dbg_stop_reason reason, u64 data_addr)
{
	struct vt_dbg_stop why = { .cpu = vcpu->cpu, .reason = reason, .data_addr = data_addr };

	vt_stub_stop_machine(vcpu, exit, &why);
}

/*
 * The instruction before RIP is MWAIT (0f 01 c9) or MWAITX (0f 01 fb): the
 * exit woke the CPU from an idle wait. intel_idle waits there with
 * interrupts off, which is fine: an interrupt still ends the wait (ECX bit
 * 0, SDM Vol. 2B MWAIT). VMX has no MWAIT activity state; the wait counts
 * as done and RIP is past it.
 */
static bool vt_stub_woke_from_mwait(struct vt_vcpu *vcpu)
{
	u8 insn[3];

	/* The count of bytes read, short where the page walk stopped. */
	if (vt_own_mem(vcpu, vt_vmread_or0(GUEST_RIP) - 3, insn, sizeof(insn), false) !=
	    sizeof(insn))
		return false;
	return insn[0] == 0x0f && insn[1] == 0x01 && (insn[2] == 0xc9 || insn[2] == 0xfb);
}

/*
 * A CPU its timer could not interrupt at any poll for lockup_secs: it ran
 * with interrupts off, or with its local APIC timer masked (a kernel that
 * stopped servicing its timer). Idle (halted, as a panic's stop_this_cpu
 * parks it, or in intel_idle's MWAIT) is not stuck, whatever its timer:
 * an idle CPU with nothing to do masks it (the clockevent's oneshot-stopped
 * state). After a panic was reported the dying kernel's spinning is no news.
 */
static bool vt_stub_locked_up(struct vt_vcpu *vcpu)
{
	bool irqs_on = vt_vmread_or0(GUEST_RFLAGS) & X86_EFLAGS_IF;
	bool ticks;

	if (vcpu->cpu >= VT_STOP_MAX_CPUS || stub.dying)
		return false;
	ticks = irqs_on && vt_apic_timer_live(vcpu);
	if (!ticks)
		ticks = vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT ||
			vt_stub_woke_from_mwait(vcpu);
	if (!vt_lockup_poll(&stub.lockup, &stub.lockup_cpu[vcpu->cpu], ticks, vt_rdtsc()))
		return false;
	stub.cause[vcpu->cpu] = (struct vt_stub_cause_info){
		.cause = irqs_on ? VT_CAUSE_TIMER_OFF : VT_CAUSE_IRQS_OFF,
		.rip = vt_vmread_or0(GUEST_RIP),
	};
	return true;
}

static bool vt_stub_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit);

/*
 * Preemption timer: a step over HLT ends, a hard lockup, or bytes that
 * arrived while the machine ran.
 */
static bool vt_stub_poll(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	u8 c;

	if (VT_LOAD_ACQUIRE(stub.hv->unloading))
		return true;	/* the debugger has gone for good */
	if (vt_single_step_on_poll(vcpu, exit)) {
		vt_stub_mtf(vcpu, exit);
		return true;
	}
	if (vt_stub_locked_up(vcpu)) {
		vt_stub_stop(vcpu, exit, VT_STOP_LOCKUP, 0);
		return true;
	}
	if (!vt_stub_trylock_line())
		return true;
	if (!vt_uart_getc(&stub.uart, &c)) {
		stub.quiet_tsc = vt_rdtsc();
		vt_stub_unlock_line();
		return true;
	}
	do {
		if (vt_rsp_feed(&stub.rsp, c, false) == VT_RSP_BREAK) {
			stub.breakin_tsc = stub.quiet_tsc;
			vt_stub_unlock_line();
			vt_stub_stop(vcpu, exit, VT_STOP_SIGINT, 0);
			return true;
		}
	} while (vt_uart_getc(&stub.uart, &c));
	/* Drained: a packet's last byte, even of a longer one, comes later. */
	stub.quiet_tsc = vt_rdtsc();
	vt_stub_unlock_line();
	return true;
}

static bool vt_stub_hook_result(struct vt_vcpu *vcpu, struct vt_exit *exit,
				enum vt_hook_result r, struct vt_dbg_stop *stop)
{
	if (r == VT_HOOK_STOP)
		vt_stub_stop_machine(vcpu, exit, stop);
	return r != VT_HOOK_NOT_MINE;
}

/*
 * The #DB that ends a TF step. Data-breakpoint bits it also carries are
 * the guest's own (the debugger's are instruction breakpoints, a fault
 * apart): its handler gets them, then the step ends as an MTF one would.
 */
static bool vt_stub_tf_step_end(struct vt_vcpu *vcpu, struct vt_exit *exit, u32 intr_info,
				u64 other_dr6)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };

	if (other_dr6 && vt_hooks_on_debug(vcpu, exit, other_dr6, &stop) == VT_HOOK_NOT_MINE)
		vt_reflect_event(exit, intr_info);
	vt_stub_mtf(vcpu, exit);
	return true;
}

/*
 * #BP (our hidden int3), #DB (our debug registers, a TF step's end), and
 * while a TF step runs every other vector (single_step.c), SDM 3C 25.2.
 */
static bool vt_stub_exception(struct vt_vcpu *vcpu, struct vt_exit *exit, u32 intr_info)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };
	u32 vector = intr_info & INTR_INFO_VECTOR_MASK;
	enum vt_hook_result r = VT_HOOK_NOT_MINE;
	u64 other_dr6;

	if (vector == X86_TRAP_DB) {
		if (vt_single_step_on_debug(vcpu, exit, &other_dr6) == VT_TF_DONE)
			return vt_stub_tf_step_end(vcpu, exit, intr_info, other_dr6);
		r = vt_hooks_on_debug(vcpu, exit, exit->qual, &stop);
	} else if (vector == X86_TRAP_BP) {
		r = vt_hooks_on_breakpoint(vcpu, exit, &stop);
	}
	if (r == VT_HOOK_NOT_MINE &&
	    vt_single_step_on_exception(vcpu, exit, intr_info) == VT_TF_REFLECTED)
		return true;
	return vt_stub_hook_result(vcpu, exit, r, &stop);
}

static bool vt_stub_ept_violation(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 gpa, u64 qual)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };

	return vt_stub_hook_result(vcpu, exit,
				   vt_hooks_on_ept_violation(vcpu, exit, gpa, qual, &stop), &stop);
}

/*
 * The end of a single step (MTF, or a TF step's #DB): a watchpoint's or a
 * split page's (the hooks' own), a step the debugger asked for, or both;
 * a watch hit inside a step reports the watch.
 */
static bool vt_stub_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };
	bool traced = vt_tracer_on_mtf(vcpu, exit);
	enum vt_hook_result r = vt_hooks_on_mtf(vcpu, exit, &stop);
	bool stepped = vt_stop_step_done(vcpu);

	if (r == VT_HOOK_STOP) {
		vt_stop_machine(vcpu, exit, &stop);
		return true;
	}
	if (stepped) {
		vt_stub_stop(vcpu, exit, VT_STOP_STEP, 0);
		return true;
	}
	return traced || r == VT_HOOK_HANDLED;
}

/* Parks the CPU while the machine is stopped; then the tracer arms its step. */
static void vt_stub_pre_entry(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	vt_hooks_sync_views(vcpu);
	vt_lbr_pre_entry(vcpu);
	vt_stop_pre_entry(vcpu, exit);
	vt_tracer_pre_entry(vcpu);
}

/* vtice hv break / debug_wait: a break-in from the module's kernel side. */
static bool vt_stub_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 func)
{
	if (func == VTICE_VMCALL_LBR)
		return vt_lbr_vmcall(vcpu, exit);
	if (func != VTICE_VMCALL_DEBUG_BREAK)
		return vt_path_on_vmcall(vcpu, exit, func);
	/* Finish the VMCALL first: the debugger sees the CPU after it. */
	exit->regs->rax = VTICE_VMCALL_OK;
	vt_advance_rip(exit);
	vt_stub_stop(vcpu, exit, VT_STOP_SIGINT, 0);
	exit->regs->rdx = vt_stop_last_tsc();
	return true;
}

/*
 * The guest triple-faulted (SDM 3C 25.2: a VM exit, not a shutdown): stop
 * the machine there so the debugger sees the registers and stack that led
 * to it. It cannot run on: when the debugger resumes, the core leaves VMX
 * on this CPU and the fault takes its course (a reset).
 */
static bool vt_stub_triple_fault(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	if (vcpu->cpu < VT_STOP_MAX_CPUS)
		stub.cause[vcpu->cpu] = (struct vt_stub_cause_info){
			.cause = VT_CAUSE_TRIPLE_FAULT,
			.rip = vt_vmread_or0(GUEST_RIP),
			.vectoring = vt_vmread_or0(IDT_VECTORING_INFO_FIELD),
		};
	vt_stub_stop(vcpu, exit, VT_STOP_CRASH, 0);
	return true;
}

static bool vt_stub_dr_access(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	return vt_hooks_on_dr_access(vcpu, exit) != VT_HOOK_NOT_MINE;
}

/* The all-stop's NMI or a ring trace's kick; both, when the two came as one. */
static bool vt_stub_nmi(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	bool kicked = vt_tracer_on_nmi(vcpu);

	return vt_stop_on_nmi(vcpu, exit) || kicked;
}

static const struct vt_callbacks vt_stub_callbacks = {
	.exception = vt_stub_exception,
	.ept_violation = vt_stub_ept_violation,
	.mtf = vt_stub_mtf,
	.vmcall = vt_stub_vmcall,
	.nmi = vt_stub_nmi,
	.preempt_timer = vt_stub_poll,
	.triple_fault = vt_stub_triple_fault,
	.dr_access = vt_stub_dr_access,
	.init_debug_registers = vt_hooks_on_init_signal,
	.pre_entry = vt_stub_pre_entry,
	.syscall = vt_path_on_syscall,
};

static void *vt_stub_map(void *ctx, u64 pa)
{
	return vt_window_map(&stub.hv->window, stub.master, pa);
}

static int vt_stub_translate(u32 cpu, u64 gva, u64 *gpa)
{
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);

	if (!c)
		return -VT_EINVAL;
	return vt_guest_translate(&stub.mem, &c->paging, gva, gpa);
}

const struct vt_guest_mem *vt_stub_guest_mem(void)
{
	return &stub.mem;
}

struct vt_hv *vt_stub_hv(void)
{
	return stub.hv;
}

/* The exits the stub needs, asked for before any CPU is virtualized. */
static int vt_stub_request_exits(struct vt_hv *hv, u16 port)
{
	int ret;

	ret = vt_hv_intercept_ports(hv, port, 8);
	if (!ret)
		ret = vt_hv_enable_preempt_timer(hv, vt_os_tsc_khz() * VT_STUB_POLL_MS);
	/* #BP and #DB exit only while breakpoints exist (hooks.c). */
	return ret;
}

/*
 * Before any CPU is virtualized: no CPU walks the EPT yet, so the guards'
 * split views need no stop, and every VMCS starts with #BP intercepted, so
 * no CPU runs a guard's int3 into the kernel's own handler.
 */
static void vt_stub_arm_guards(struct vt_hv *hv, const struct vt_stub_config *cfg)
{
	u32 i, armed = 0;
	int ret;

	for (i = 0; i < cfg->nr_guards && i < VT_STUB_MAX_GUARDS; i++) {
		ret = vt_bp_guard(cfg->guards[i].gva, cfg->guards[i].gpa);
		if (ret) {
			vt_warn("crash guard on %s not armed (%d)\n", cfg->guards[i].name, ret);
			continue;
		}
		vt_info("crash guard on %s at 0x%llx\n", cfg->guards[i].name, cfg->guards[i].gva);
		if (cfg->guards[i].fatal)
			stub.fatal_guard[i] = cfg->guards[i].gva;
		armed++;
	}
	if (armed)
		vt_hv_intercept_exceptions(hv, VT_BIT(X86_TRAP_BP));
}

static int vt_stub_init_lbr(struct vt_hv *hv, u32 nr_cpus)
{
	static const char *const why_not[] = {
		[VTICE_LBR_NO_DEBUGCTL] = "DEBUGCTL.LBR does not stick (an emulated CPU?)",
		[VTICE_LBR_NOT_INTEL] = "not an Intel CPU",
		[VTICE_LBR_UNKNOWN_MODEL] = "a CPU model whose LBR MSRs are not known",
		[VTICE_LBR_ARCH_ONLY] = "architectural LBR, not implemented",
	};
	const struct vt_lbr_model *m;
	int ret = vt_lbr_init(hv, nr_cpus);

	if (ret) {
		vt_err("no memory for the LBR snapshots\n");
		return ret;
	}
	m = vt_lbr_get_model();
	if (m->status == VTICE_LBR_OK)
		vt_info("LBR snapshots at a crash: %u entries, format %u\n", m->nr, m->format);
	else if (m->status < VT_ARRAY_SIZE(why_not) && why_not[m->status])
		vt_info("no LBR snapshots: %s\n", why_not[m->status]);
	return 0;
}

static int vt_stub_init_tracer(struct vt_hv *hv, const struct vt_stub_config *cfg)
{
	struct vt_tracer_config tc = {
		.vcpus = cfg->vcpus, .nr_cpus = cfg->nr_cpus, .records_per_cpu = cfg->trace_records,
		.current_task = cfg->current_task, .mem = vt_own_mem,
		.mode = (enum vt_trace_mode)cfg->trace_mode, .event_gap = cfg->trace_event_gap,
	};
	int ret = vt_tracer_init(hv, &tc);

	if (ret)
		vt_err("no memory for %u trace records per CPU (trace_records)\n", cfg->trace_records);
	return ret;
}

int vt_stub_init(struct vt_hv *hv, const struct vt_stub_config *cfg)
{
	int ret;

	vt_memset(&stub, 0, sizeof(stub));
	stub.hv = hv;
	stub.lockup.threshold = (u64)cfg->lockup_secs * vt_os_tsc_khz() * 1000;
	stub.lockup_secs = cfg->lockup_secs;
	/* The RAM the core knows (vt_hv_set_ram), through the master's slot. */
	stub.mem = hv->mem;
	stub.mem.map = vt_stub_map;
	ret = vt_uart_init(&stub.uart, cfg->port, cfg->baud);
	if (ret) {
		vt_err("debug_port 0x%x: %s\n", cfg->port,
		       ret == -VT_ENODEV ? "no 16550 UART answers there" :
					   "debug_baud must divide 115200");
		return ret;
	}
	ret = vt_stub_request_exits(hv, cfg->port);
	if (ret) {
		vt_err("this CPU lacks a VMX control the stub needs (%d)\n", ret);
		return ret;
	}
	ret = vt_hooks_init(hv, VT_STUB_SHADOW_PAGES, vt_stub_translate, cfg->nr_cpus);
	if (ret)
		return ret;
	vt_hooks_set_own_mem(vt_own_mem);
	vt_single_step_prefer_tf(cfg->step_tf);
	ret = vt_stub_init_tracer(hv, cfg);
	if (ret) {
		vt_hooks_fini();
		return ret;
	}
	ret = vt_stub_init_lbr(hv, cfg->nr_cpus);
	if (ret) {
		vt_tracer_fini();
		vt_hooks_fini();
		return ret;
	}
	vt_stub_arm_guards(hv, cfg);
	vt_stop_init(cfg->vcpus, cfg->nr_cpus, vt_stub_serve);
	vt_stop_on_park(vt_lbr_on_exit);
	vt_rsp_init(&stub.rsp, &vt_stub_target_ops, NULL, vt_stub_put_byte);
	vt_hv_set_callbacks(hv, &vt_stub_callbacks);
	vt_info("debug stub on port 0x%x at %u baud, single steps with %s\n", cfg->port, cfg->baud,
		!vt_single_step_supported(hv) ? "nothing (no MTF, no interrupt exiting)" :
		vt_single_step_uses_tf(hv) ? "TF" : "MTF");
	return 0;
}

int vt_stub_shield(void)
{
	int ret;

	if (!stub.hv)
		return 0;
	ret = vt_hooks_shield();
	if (!ret)
		ret = vt_stop_shield();
	if (!ret)
		ret = vt_tracer_shield();
	if (!ret)
		ret = vt_lbr_shield();
	return ret ? ret : vt_os_shield_image(&stub, sizeof(stub));
}

void vt_stub_fini(void)
{
	if (!stub.hv)
		return;
	vt_hv_set_callbacks(stub.hv, NULL);
	vt_hooks_fini();
	vt_tracer_fini();
	vt_lbr_fini();
	stub.hv = NULL;
}
