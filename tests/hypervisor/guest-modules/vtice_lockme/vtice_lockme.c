// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvcrash scenario: a hard lockup. A kernel
 * thread bound to the last CPU disables interrupts and spins for good; the
 * other CPU runs on. The hypervisor's lockup watch (lockup_secs) must stop
 * the machine (docs/hypervisor-debugging.md).
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>

static int vtice_lockme_thread(void *unused)
{
	msleep(500);	/* insmod returns first */
	pr_info("vtice_lockme: spinning with interrupts off on CPU %d\n", raw_smp_processor_id());
	local_irq_disable();
	for (;;)
		cpu_relax();
	return 0;
}

static int __init vtice_lockme_init(void)
{
	unsigned int cpu = num_online_cpus() - 1;
	struct task_struct *t;

	if (!cpu)
		return -ENODEV;	/* the lockup needs another CPU to stay usable */
	t = kthread_create(vtice_lockme_thread, NULL, "vtice-lockme");
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, cpu);
	wake_up_process(t);
	return 0;
}

static void __exit vtice_lockme_exit(void)
{
}

module_init(vtice_lockme_init);
module_exit(vtice_lockme_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: a CPU spinning with interrupts off");
