// SPDX-License-Identifier: GPL-2.0
/*
 * The path tracer's switch trigger (debug/path_trace.h), planted at ARM
 * and removed at DISARM, under the syscall trap's lock. The console names
 * __switch_to; the module makes sure it is that function and finds the
 * store of the current-task pointer in its text (debug/switch_trigger.h).
 * Planted in the probes' order: every CPU takes #BP exits before the
 * breakpoint exists, and flushes its view before they stop.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/percpu.h>
#include <linux/smp.h>
#include <asm/page.h>

#include <vtice/vmcall.h>
#include "vtice_linux.h"
#include "../../debug/switch_trigger.h"

#define VT_SWITCH_TO	"__switch_to"
#define VT_SWITCH_TO_MAX_SIZE	8192	/* 6.1's and 6.12's are about 1.5 KiB */

static bool vt_switch_planted;	/* under the syscall trap's lock */

/* One of the path tracer's switch ops on this CPU, as an errno. */
static int vt_switch_vmcall(u32 op, u64 a, u64 b)
{
	struct vt_vcpu *vcpu;
	u64 status = VTICE_VMCALL_ENOSYS;
	int cpu = get_cpu();

	vcpu = vt_linux_launched_vcpu(cpu);
	if (vcpu)
		status = vt_vcpu_path_trace(vcpu, op, a, b, 0, NULL);
	put_cpu();
	return vt_vmcall_errno(status);
}

/* addr is the start of the kernel's own __switch_to: its size, or 0. */
static unsigned long vt_switch_to_size(unsigned long addr)
{
	unsigned long off, size;

	return vt_linux_image_symbol(addr, VT_SWITCH_TO, &off, &size) && !off ? size : 0;
}

/* The current-task store in __switch_to, where the trigger goes, or 0 (logged why). */
static unsigned long vt_switch_trigger_at(unsigned long switch_to)
{
	unsigned long size = vt_switch_to_size(switch_to);
	u64 trigger = 0;
	int cpu, ret;

	if (!size || size > VT_SWITCH_TO_MAX_SIZE) {
		pr_info("path trace: %#lx is not " VT_SWITCH_TO ": stepping every CPU\n", switch_to);
		return 0;
	}
	cpu = get_cpu();
	ret = vt_switch_trigger_find((const u8 *)switch_to, size, switch_to, per_cpu_offset(cpu),
				     vt_linux_task_pointer(cpu), &trigger);
	put_cpu();
	if (ret) {
		pr_info("path trace: no single current-task store in " VT_SWITCH_TO " (%d): stepping every CPU\n",
			ret);
		return 0;
	}
	return trigger;
}

int vt_switch_trigger_plant(unsigned long switch_to)
{
	unsigned long trigger = vt_switch_trigger_at(switch_to);
	int ret;

	if (!trigger)
		return -ENOENT;
	ret = vt_switch_vmcall(VTICE_VMCALL_PATH_SWITCH_INTERCEPT, 1, 0);
	if (ret)
		return ret;
	vt_switch_planted = true;
	vt_linux_sync_views();
	ret = vt_switch_vmcall(VTICE_VMCALL_PATH_SWITCH_ADD, trigger, __pa_symbol(trigger));
	if (ret) {
		pr_info("path trace: the switch trigger could not be planted (%d): stepping every CPU\n",
			ret);
		vt_switch_trigger_remove();
		return ret;
	}
	vt_linux_sync_views();
	return 0;
}

void vt_switch_trigger_remove(void)
{
	if (!vt_switch_planted)
		return;
	vt_switch_vmcall(VTICE_VMCALL_PATH_SWITCH_CLEAR, 0, 0);
	vt_linux_sync_views();
	vt_switch_vmcall(VTICE_VMCALL_PATH_SWITCH_INTERCEPT, 0, 0);
	vt_linux_sync_views();
	vt_switch_planted = false;
}

bool vt_switch_trigger_planted(void)
{
	return vt_switch_planted;
}
