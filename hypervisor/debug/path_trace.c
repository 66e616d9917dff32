// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall-path tracer (path_trace.h). While armed and idle it costs
 * what the quiet syscall trap costs: two exits per syscall (one for a call
 * that returns through IRET), of any task, and with the switch trigger one
 * per context switch. The call it traces costs one exit per
 * instruction (the tracer's MTF steps) of the CPU that runs it until it
 * returns; without the trigger, of every CPU.
 *
 * One call at a time: `task` is 0 when idle, the traced task_struct while
 * a call is traced, and VT_PATH_ENDING while the CPU that ends it writes
 * its last records. Whichever CPU moves it (compare-and-swap) does the
 * whole start or end, so a SYSRET on one CPU and the instruction budget
 * running out on another cannot both end the call.
 */
#include "path_trace.h"
#include "probe_points.h"
#include "dbg_os.h"
#include "hooks.h"
#include "single_step.h"
#include "../core/exit.h"
#include "../core/hv.h"
#include "../core/intrin.h"
#include <vtice/ioctl.h>
#include <vtice/vmcall.h>

#define VT_PATH_ENDING	1ull	/* never a task_struct's address */
#define VT_PATH_MAX_NR	4096u	/* above any x86-64 syscall number */

static struct {
	struct vt_hv *hv;
	bool owns_tracer;	/* initialized the tracer (no stub did) */
	bool owns_hooks;	/* ...and the hooks' per-CPU state its TF steps keep */
	bool armed;
	u32 nr;
	u32 calls;		/* calls to trace since ARM */
	u32 started;		/* ...begun (changed only by the task's owner) */
	u32 traced;		/* ...ended */
	u64 max_insns;
	u64 task;
} VT_ROOT_STATE_TYPE vt_path VT_ROOT_STATE;

static struct vtice_record vt_path_record(const struct vt_vcpu *vcpu, u16 type, u32 flags,
					 u64 a, u64 b)
{
	struct vtice_record rec = {
		.type = type, .cpu = (u16)vcpu->cpu, .flags = flags, .tsc = vt_tracer_stamp(vcpu),
		.u.raw = { a, b },
	};

	return rec;
}

/* On the traced CPU, behind the records the tracer still keeps for the reader. */
static void vt_path_push(struct vt_vcpu *vcpu, u16 type, u32 flags, u64 a, u64 b)
{
	struct vtice_record rec = vt_path_record(vcpu, type, flags, a, b);

	vt_tracer_ring_put(vcpu, &rec);
}

/*
 * The trace stops everywhere before the call counts as traced. Its last
 * record comes after every record the tracer kept back (tracer.h), and
 * always fits: it takes the ring's reserve (core/ring.h). The disarming
 * CPU does not wait for them: it may be the reader's own.
 */
static void vt_path_end(struct vt_vcpu *vcpu, u64 task, u32 why)
{
	struct vtice_record stop;

	if (task <= VT_PATH_ENDING ||
	    !__atomic_compare_exchange_n(&vt_path.task, &task, VT_PATH_ENDING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	if (why != VTICE_TRACE_STOP_DISARMED)
		vt_tracer_ring_settle(vcpu);
	vt_tracer_ring_stop(vcpu);
	stop = vt_path_record(vcpu, VTICE_REC_TRACE_STOP, why, task, vt_tracer_ring_insns());
	vt_ring_push_final(&vcpu->ring, &stop);
	__atomic_add_fetch(&vt_path.traced, 1, __ATOMIC_RELEASE);
	VT_STORE_RELEASE(vt_path.task, 0);
}

/* The tracer's end: the task reached user mode by IRET, or its budget ran out. */
static void vt_path_ended(struct vt_vcpu *vcpu, enum vt_trace_end why)
{
	vt_path_end(vcpu, VT_READ_ONCE(vt_path.task), (u32)why);
}

/*
 * A SYSCALL: the one to trace when armed, idle, of the syscall wanted, by
 * a task that passes the filter, and calls are left. The trace starts at
 * this CPU's entry into the kernel's SYSCALL entry point.
 */
static void vt_path_start(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 from_rip)
{
	u64 task, idle = 0;

	if (!VT_LOAD_ACQUIRE(vt_path.armed) || exit->regs->rax != vt_path.nr ||
	    VT_READ_ONCE(vt_path.task) || VT_READ_ONCE(vt_path.started) >= vt_path.calls)
		return;
	if (!vt_syscall_task_passes(vcpu, &task) || task <= VT_PATH_ENDING ||
	    !__atomic_compare_exchange_n(&vt_path.task, &idle, task, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if (vt_tracer_ring_start(vcpu, task, vt_path.max_insns, vt_path_ended)) {
		VT_STORE_RELEASE(vt_path.task, 0);
		return;
	}
	vt_path.started++;
	/* The call's first records go straight into the ring: nothing spilled before this CPU follows. */
	vt_tracer_wait_for_room(vcpu, VTICE_SYSCALL_GROUP_MAX + 1);
	vt_syscall_event(vcpu, exit->regs, VT_SYS_ENTER);
	vt_path_push(vcpu, VTICE_REC_BRANCH, VTICE_BRANCH_FROM_STEP, from_rip,
		     vt_vmread_or0(GUEST_RIP));
}

/* A SYSRET of the traced task ends its call: the return is its last branch. */
static void vt_path_sysret(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 from_rip)
{
	u64 task = VT_READ_ONCE(vt_path.task), current = 0;

	if (task <= VT_PATH_ENDING)
		return;
	vt_syscall_task_passes(vcpu, &current);
	if (current != task)
		return;
	vt_path_push(vcpu, VTICE_REC_BRANCH, VTICE_BRANCH_FROM_STEP, from_rip,
		     vt_vmread_or0(GUEST_RIP));
	vt_tracer_wait_for_room(vcpu, VTICE_SYSCALL_GROUP_MAX);
	vt_syscall_event(vcpu, exit->regs, VT_SYS_EXIT);
	vt_path_end(vcpu, task, VTICE_TRACE_STOP_SYSRET);
}

void vt_path_on_syscall(struct vt_vcpu *vcpu, struct vt_exit *exit, enum vt_sys_edge edge,
			u64 from_rip)
{
	if (!vt_path.hv)
		return;
	if (edge == VT_SYS_ENTER)
		vt_path_start(vcpu, exit, from_rip);
	else
		vt_path_sysret(vcpu, exit, from_rip);
}

static u64 vt_path_arm(const struct vt_guest_regs *r)
{
	u64 calls = r->r10 & ~VTICE_VMCALL_PATH_RECORD;

	if (r->r8 >= VT_PATH_MAX_NR || !r->r9 || r->r9 > VTICE_PATH_MAX_INSNS || !calls ||
	    calls > VTICE_PATH_MAX_CALLS)
		return (u64)VTICE_VMCALL_EINVAL;
	if (VT_READ_ONCE(vt_path.task))
		return (u64)VTICE_VMCALL_EBUSY;	/* a call of the last ARM is still traced */
	if (vt_tracer_set_recording(r->r10 & VTICE_VMCALL_PATH_RECORD))
		return (u64)VTICE_VMCALL_EINVAL;	/* TF steps: not one exit per instruction */
	vt_path.nr = (u32)r->r8;
	vt_path.max_insns = r->r9;
	vt_path.calls = (u32)calls;
	vt_path.started = 0;
	vt_path.traced = 0;
	VT_STORE_RELEASE(vt_path.armed, true);
	return VTICE_VMCALL_OK;
}

/* A call still being traced ends here, on the disarming CPU. */
static void vt_path_disarm(struct vt_vcpu *vcpu)
{
	VT_STORE_RELEASE(vt_path.armed, false);
	vt_path_end(vcpu, VT_READ_ONCE(vt_path.task), VTICE_TRACE_STOP_DISARMED);
}

/*
 * The switch trigger (path_trace.h): a breakpoint of its own kind, planted
 * in the probes' order (probe_points.h) by the module's kernel side.
 */
static u64 vt_path_switch_op(const struct vt_guest_regs *r)
{
	int ret;

	if (!vt_hooks_ready())
		return (u64)VTICE_VMCALL_ENOSYS;
	switch (r->rdx) {
	case VTICE_VMCALL_PATH_SWITCH_INTERCEPT:
		vt_probe_intercept(VT_INTERCEPT_SWITCH, r->r8 != 0);
		return VTICE_VMCALL_OK;
	case VTICE_VMCALL_PATH_SWITCH_ADD:
		if (!vt_hooks_intercepting(VT_INTERCEPT_SWITCH) || vt_bp_switch_planted())
			return (u64)VTICE_VMCALL_EINVAL;	/* an int3 could reach the kernel */
		if (!vt_probe_remember(r->r8))
			return (u64)(s64)-VT_ENOSPC;
		ret = vt_bp_switch_insert(r->r8, r->r9);
		return ret ? (u64)(s64)ret : VTICE_VMCALL_OK;
	default:
		vt_bp_switch_clear();
		return VTICE_VMCALL_OK;
	}
}

static u64 vt_path_op(struct vt_vcpu *vcpu, const struct vt_guest_regs *r)
{
	if (!vt_path.hv || !vt_tracer_supported())
		return (u64)VTICE_VMCALL_ENOSYS;
	switch (r->rdx) {
	case VTICE_VMCALL_PATH_ARM:
		return vt_path_arm(r);
	case VTICE_VMCALL_PATH_DISARM:
		vt_path_disarm(vcpu);
		return VTICE_VMCALL_OK;
	case VTICE_VMCALL_PATH_QUERY:
		return VTICE_VMCALL_OK;
	case VTICE_VMCALL_PATH_SWITCH_INTERCEPT:
	case VTICE_VMCALL_PATH_SWITCH_ADD:
	case VTICE_VMCALL_PATH_SWITCH_CLEAR:
		return vt_path_switch_op(r);
	default:
		return (u64)VTICE_VMCALL_EINVAL;
	}
}

bool vt_path_on_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 func)
{
	struct vt_guest_regs *r = exit->regs;

	if (vt_probe_on_vmcall(vcpu, exit, func))
		return true;
	if (func != VTICE_VMCALL_PATH_TRACE)
		return false;
	r->rax = vt_path_op(vcpu, r);
	r->rdx = VT_LOAD_ACQUIRE(vt_path.traced);
	vt_advance_rip(exit);
	return true;
}

/*
 * Without a debugger's table: the tracer's exits, the path tracer's, and
 * the probes' (probe_points.h), whose hidden breakpoints need the hooks'
 * #BP, EPT-violation and MTF handling. Without a stub nothing stops the
 * machine: no Z0 or crash guard exists, so a hook never asks for a stop.
 */
static bool vt_path_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };
	bool traced = vt_tracer_on_mtf(vcpu, exit);

	return vt_hooks_on_mtf(vcpu, exit, &stop) != VT_HOOK_NOT_MINE || traced;
}

static bool vt_path_ept_violation(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 gpa, u64 qual)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };

	return vt_hooks_on_ept_violation(vcpu, exit, gpa, qual, &stop) != VT_HOOK_NOT_MINE;
}

/*
 * The tracer's TF steps (single_step.h): the #DB that ends one, and every
 * other exception while one runs. A #DB that also carries the guest's own
 * debug-register hits, or is only the guest's, gets DR6 written for the
 * guest's handler (dr.c) and goes to it.
 */
static bool vt_path_exception(struct vt_vcpu *vcpu, struct vt_exit *exit, u32 intr_info)
{
	struct vt_dbg_stop stop = { .cpu = vcpu->cpu };
	u64 other_dr6;

	if ((intr_info & INTR_INFO_VECTOR_MASK) == X86_TRAP_BP &&
	    vt_hooks_on_breakpoint(vcpu, exit, &stop) != VT_HOOK_NOT_MINE)
		return true;
	if ((intr_info & INTR_INFO_VECTOR_MASK) == X86_TRAP_DB) {
		if (vt_single_step_on_debug(vcpu, exit, &other_dr6) == VT_TF_DONE) {
			if (other_dr6) {
				vt_hooks_on_debug(vcpu, exit, other_dr6, &stop);
				vt_reflect_event(exit, intr_info);
			}
			vt_tracer_on_mtf(vcpu, exit);
			return true;
		}
		vt_hooks_on_debug(vcpu, exit, exit->qual, &stop);
	}
	return vt_single_step_on_exception(vcpu, exit, intr_info) == VT_TF_REFLECTED;
}

static bool vt_path_nmi(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	return vt_tracer_on_nmi(vcpu);
}

static void vt_path_pre_entry(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	vt_hooks_on_resume(vcpu);
	vt_tracer_pre_entry(vcpu);
}

static const struct vt_callbacks vt_path_callbacks = {
	.exception = vt_path_exception,
	.ept_violation = vt_path_ept_violation,
	.mtf = vt_path_mtf,
	.nmi = vt_path_nmi,
	.vmcall = vt_path_on_vmcall,
	.pre_entry = vt_path_pre_entry,
	.syscall = vt_path_on_syscall,
};

int vt_path_init(struct vt_hv *hv, const struct vt_tracer_config *cfg)
{
	int ret;

	vt_memset(&vt_path, 0, sizeof(vt_path));
	if (!vt_tracer_supported()) {
		ret = vt_tracer_init(hv, cfg);
		if (ret)
			return ret;
		vt_path.owns_tracer = true;
	}
	/*
	 * No stub set the hooks up: TF steps keep their state in their per-CPU
	 * tables, and probes need their split views.
	 */
	if (!vt_hooks_ready()) {
		ret = vt_hooks_init(hv, VT_PATH_PROBE_SHADOWS, NULL, cfg->nr_cpus);
		if (ret) {
			vt_path_fini();
			return ret;
		}
		vt_hooks_set_own_mem(cfg->mem);
		vt_path.owns_hooks = true;
	}
	vt_path.hv = hv;
	if (!hv->cb)
		vt_hv_set_callbacks(hv, &vt_path_callbacks);
	return 0;
}

int vt_path_shield(void)
{
	int ret = vt_path.owns_tracer ? vt_tracer_shield() : 0;

	if (!ret)
		ret = vt_probe_shield();
	if (!ret && vt_path.owns_hooks)
		ret = vt_hooks_shield();
	return ret ? ret : vt_os_shield_image(&vt_path, sizeof(vt_path));
}

void vt_path_fini(void)
{
	if (vt_path.hv && vt_path.hv->cb == &vt_path_callbacks)
		vt_hv_set_callbacks(vt_path.hv, NULL);
	if (vt_path.owns_hooks)
		vt_hooks_fini();
	if (vt_path.owns_tracer)
		vt_tracer_fini();
	vt_memset(&vt_path, 0, sizeof(vt_path));
}
