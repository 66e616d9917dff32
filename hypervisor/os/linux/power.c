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

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <linux/reboot.h>
#include <linux/smp.h>
#include <linux/syscore_ops.h>

#include "compat.h"
#include "vtice_linux.h"

static bool vt_resume_cpu_pending;

static void vt_devirtualize_this_cpu(void)
{
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());

	if (vcpu && vt_vcpu_devirtualize(vcpu))
		pr_err("cpu %u: could not leave VMX\n", smp_processor_id());
}

/*
 * The reboot notifier must not wait forever for a CPU that takes no
 * interrupts (a wedged kernel with interrupts off; a CPU an INIT gave to
 * other code): the reboot would hang on us. Each other CPU gets its own
 * asynchronous call and a second to answer, as the kernel's own
 * stop_other_cpus() gives its REBOOT_VECTOR; one that does not answer stays
 * in VMX non-root, and the log says which.
 */
#define VT_REBOOT_ANSWER_MS	1000

static DEFINE_PER_CPU(call_single_data_t, vt_reboot_call);
static struct cpumask vt_reboot_pending;

static void vt_reboot_answer(void *unused)
{
	vt_devirtualize_this_cpu();
	cpumask_clear_cpu(smp_processor_id(), &vt_reboot_pending);
}

static void vt_reboot_call_others(void)
{
	unsigned int cpu, self = get_cpu();

	cpumask_copy(&vt_reboot_pending, cpu_online_mask);
	cpumask_clear_cpu(self, &vt_reboot_pending);
	for_each_cpu(cpu, &vt_reboot_pending) {
		/* -EBUSY: the call of an earlier reboot attempt is still queued. */
		if (smp_call_function_single_async(cpu, per_cpu_ptr(&vt_reboot_call, cpu)))
			pr_err("cpu %u: could not be asked to leave VMX\n", cpu);
	}
	local_irq_disable();
	vt_devirtualize_this_cpu();
	local_irq_enable();
	put_cpu();
}

static int vt_reboot(struct notifier_block *nb, unsigned long action, void *data)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(VT_REBOOT_ANSWER_MS);
	unsigned int cpu;

	vt_reboot_call_others();
	while (!cpumask_empty(&vt_reboot_pending) && time_before(jiffies, deadline))
		msleep(1);
	if (cpumask_empty(&vt_reboot_pending)) {
		pr_info("devirtualized all CPUs for reboot\n");
		return NOTIFY_DONE;
	}
	for_each_cpu(cpu, &vt_reboot_pending)
		pr_err("cpu %u did not answer within %u ms: it stays in VMX non-root for the reboot\n",
		       cpu, VT_REBOOT_ANSWER_MS);
	return NOTIFY_DONE;
}

static struct notifier_block vt_reboot_nb = {
	.notifier_call = vt_reboot,
};

/* syscore callbacks run on the last online CPU with interrupts off. */
static int vt_syscore_suspend(VT_SYSCORE_ARG)
{
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());

	vt_resume_cpu_pending = false;
	if (!vcpu)
		return 0;
	if (vt_vcpu_devirtualize(vcpu))
		return -EIO;
	vt_resume_cpu_pending = true;
	return 0;
}

/* This CPU left VMX at the suspend, so its vCPU is not launched now. */
static void vt_syscore_resume(VT_SYSCORE_ARG)
{
	struct vt_vcpu *vcpu = READ_ONCE(vt_mod.vcpus[smp_processor_id()]);

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
	unsigned int cpu;
	int ret;

	/* Once: a call a CPU never took must keep its lock (see vt_reboot). */
	for_each_possible_cpu(cpu)
		INIT_CSD(per_cpu_ptr(&vt_reboot_call, cpu), vt_reboot_answer, NULL);
	ret = register_reboot_notifier(&vt_reboot_nb);
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
