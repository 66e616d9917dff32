// SPDX-License-Identifier: GPL-2.0
/*
 * Leaving VMX around events that would otherwise find a CPU still in it:
 *  - reboot/kexec: a reboot notifier devirtualizes every CPU while they all
 *    still run kernel code (a kexec'd kernel must not start inside our VMX
 *    non-root, where its INIT-SIPI to the other CPUs would be swallowed);
 *  - suspend: non-boot CPUs go offline first (the hotplug callback
 *    devirtualizes them); syscore suspend handles the last CPU, whose VMX
 *    state the firmware would discard, and resume virtualizes it again.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/notifier.h>
#include <linux/reboot.h>
#include <linux/smp.h>
#include <linux/syscore_ops.h>

#include "compat.h"
#include "vtice_linux.h"

static bool vt_resume_cpu_pending;

static struct vt_vcpu *vt_this_vcpu(void)
{
	return READ_ONCE(vt_mod.vcpus[smp_processor_id()]);
}

static void vt_devirtualize_this_cpu(void *unused)
{
	struct vt_vcpu *vcpu = vt_this_vcpu();

	if (vcpu && vcpu->launched && vt_vcpu_devirtualize(vcpu))
		pr_err("cpu %u: could not leave VMX\n", smp_processor_id());
}

static int vt_reboot(struct notifier_block *nb, unsigned long action, void *data)
{
	on_each_cpu(vt_devirtualize_this_cpu, NULL, 1);
	pr_info("devirtualized all CPUs for reboot\n");
	return NOTIFY_DONE;
}

static struct notifier_block vt_reboot_nb = {
	.notifier_call = vt_reboot,
};

/* syscore callbacks run on the last online CPU with interrupts off. */
static int vt_syscore_suspend(VT_SYSCORE_ARG)
{
	struct vt_vcpu *vcpu = vt_this_vcpu();

	vt_resume_cpu_pending = false;
	if (!vcpu || !vcpu->launched)
		return 0;
	if (vt_vcpu_devirtualize(vcpu))
		return -EIO;
	vt_resume_cpu_pending = true;
	return 0;
}

static void vt_syscore_resume(VT_SYSCORE_ARG)
{
	struct vt_vcpu *vcpu = vt_this_vcpu();

	if (!vt_resume_cpu_pending || !vcpu)
		return;
	vt_resume_cpu_pending = false;
	if (vt_vcpu_virtualize(vcpu))
		pr_err("cpu %u: not virtualized again after resume\n", smp_processor_id());
}

#ifdef VT_SYSCORE_WITH_DATA
static const struct syscore_ops vt_syscore_ops = {
	.suspend = vt_syscore_suspend,
	.resume = vt_syscore_resume,
};
static struct syscore vt_syscore = { .ops = &vt_syscore_ops };
#define vt_register_syscore()	register_syscore(&vt_syscore)
#define vt_unregister_syscore()	unregister_syscore(&vt_syscore)
#else
static struct syscore_ops vt_syscore = {
	.suspend = vt_syscore_suspend,
	.resume = vt_syscore_resume,
};
#define vt_register_syscore()	register_syscore_ops(&vt_syscore)
#define vt_unregister_syscore()	unregister_syscore_ops(&vt_syscore)
#endif

int vt_power_register(void)
{
	int ret = register_reboot_notifier(&vt_reboot_nb);

	if (ret)
		return ret;
	vt_register_syscore();
	return 0;
}

void vt_power_unregister(void)
{
	vt_unregister_syscore();
	unregister_reboot_notifier(&vt_reboot_nb);
}
