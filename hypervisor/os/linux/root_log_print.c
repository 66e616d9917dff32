// SPDX-License-Identifier: GPL-2.0
/*
 * VMX root's events (core/root_log.h), printed from kernel context: once a
 * second while the module is loaded, and once more at unload, after every
 * CPU has left VMX.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vtice_linux.h"

#define VT_ROOT_LOG_PERIOD	HZ

static u64 *vt_root_seen;	/* [nr_cpu_ids]: events printed so far */
static void vt_root_log_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(vt_root_log_work, vt_root_log_work_fn);

static void vt_print_root_event(const struct vt_root_event *ev, void *ctx)
{
	const u64 *a = ev->arg;

	switch (ev->code) {
	case VT_RE_RESUME_FAILED:
		pr_err("cpu %u: VMRESUME failed, VM-instruction error %llu; left VMX\n", ev->cpu, a[0]);
		break;
	case VT_RE_EPT_VIOLATION:
		pr_err("cpu %u: unhandled EPT violation gpa 0x%llx qual 0x%llx rip 0x%llx; left VMX\n",
		       ev->cpu, a[0], a[1], a[2]);
		break;
	case VT_RE_EPT_MISCONFIG:
		pr_err("cpu %u: EPT misconfiguration gpa 0x%llx entry 0x%llx level %llu; left VMX\n",
		       ev->cpu, a[0], a[1], a[2]);
		break;
	case VT_RE_TRIPLE_FAULT:
		pr_err("cpu %u: guest triple fault at rip 0x%llx rsp 0x%llx cr3 0x%llx idt-vectoring 0x%llx\n",
		       ev->cpu, a[0], a[1], a[2], a[3]);
		break;
	case VT_RE_INIT_IGNORED:
		pr_warn("cpu %u: INIT signal ignored while virtualized\n", ev->cpu);
		break;
	case VT_RE_UNEXPECTED_EXIT:
		pr_err("cpu %u: unexpected VM exit reason 0x%llx qual 0x%llx rip 0x%llx; left VMX\n",
		       ev->cpu, a[0], a[1], a[2]);
		break;
	case VT_RE_NO_MOV_DR_EXITING:
		pr_warn("cpu %u: no MOV-DR exiting: the guest sees the debugger's DR values\n", ev->cpu);
		break;
	case VT_RE_SPLIT_STEP_FAILED:
		pr_warn("cpu %u: cannot step on split page 0x%llx: its breakpoints stay disarmed\n",
			ev->cpu, a[0]);
		break;
	case VT_RE_TOO_MANY_PAGES:
		pr_warn("cpu %u: one instruction touches more than %llu hooked pages\n", ev->cpu, a[0]);
		break;
	case VT_RE_STEP_VIEW_FULL:
		pr_warn("cpu %u: one instruction's %llu hooked pages need more than the %llu tables of its step's EPT view\n",
			ev->cpu, a[0], a[1]);
		break;
	case VT_RE_ROOT_FAULT:
		pr_emerg("cpu %u: fault in VMX root: vector %llu at rip 0x%llx error 0x%llx cr2 0x%llx; this CPU is halted (a vtice bug: please report it)\n",
			 ev->cpu, a[0], a[1], a[2], a[3]);
		break;
	default:
		pr_warn("cpu %u: event %u from VMX root (a newer core?)\n", ev->cpu, ev->code);
	}
}

static void vt_root_log_drain_all(void)
{
	unsigned int cpu;
	u64 lost;

	for_each_possible_cpu(cpu) {
		struct vt_vcpu *vcpu = vt_mod.vcpu_state ? vt_mod.vcpu_state[cpu] : NULL;

		if (!vcpu || !vcpu->counts)
			continue;
		lost = vt_root_log_drain(&vcpu->counts->log, &vt_root_seen[cpu], vt_print_root_event, NULL);
		if (lost)
			pr_warn("cpu %u: %llu events from VMX root came faster than this log\n", cpu, lost);
	}
}

static void vt_root_log_work_fn(struct work_struct *work)
{
	vt_root_log_drain_all();
	schedule_delayed_work(&vt_root_log_work, VT_ROOT_LOG_PERIOD);
}

int vt_root_log_start(void)
{
	vt_root_seen = kcalloc(nr_cpu_ids, sizeof(*vt_root_seen), GFP_KERNEL);
	if (!vt_root_seen)
		return -ENOMEM;
	schedule_delayed_work(&vt_root_log_work, VT_ROOT_LOG_PERIOD);
	return 0;
}

void vt_root_log_stop(void)
{
	if (!vt_root_seen)
		return;
	cancel_delayed_work_sync(&vt_root_log_work);
	vt_root_log_drain_all();
	kfree(vt_root_seen);
	vt_root_seen = NULL;
}
