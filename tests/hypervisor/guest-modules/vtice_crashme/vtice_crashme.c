// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's crash scenarios:
 *
 *   mode=oops    (hvcrash) a kernel thread writes through a NULL pointer:
 *                an oops in a kthread, which the hypervisor's crash guard
 *                on __die() must stop at;
 *   mode=triple  (hvtriple) a kernel thread on the last CPU loads an empty
 *                IDT and executes int3: #BP cannot be delivered, nor the #GP
 *                nor the #DF that follow, a triple fault, which under the
 *                hypervisor is a VM exit (SDM Vol. 3C 25.2).
 *
 * See docs/hypervisor-debugging.md.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <asm/desc.h>

static char *mode = "oops";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "oops (a NULL write in a kthread) or triple (a triple fault)");

static void triple_fault(void)
{
	struct desc_ptr empty = { .size = 0, .address = 0 };

	pr_info("vtice_crashme: an empty IDT and int3 on CPU %d: a triple fault\n", raw_smp_processor_id());
	msleep(500);	/* the line reaches the console first */
	local_irq_disable();
	asm volatile("lidt %0" : : "m"(empty));
	asm volatile("int3");
}

static int vtice_crashme_thread(void *unused)
{
	int *volatile nowhere = NULL;

	msleep(500);	/* insmod returns first */
	if (!strcmp(mode, "triple"))
		triple_fault();
	else
		*nowhere = 1;	/* page_fault_oops() -> __die() */
	return 0;
}

static int __init vtice_crashme_init(void)
{
	struct task_struct *t;

	if (strcmp(mode, "oops") && strcmp(mode, "triple"))
		return -EINVAL;
	t = kthread_create(vtice_crashme_thread, NULL, "vtice-crashme");
	if (IS_ERR(t))
		return PTR_ERR(t);
	if (!strcmp(mode, "triple"))
		kthread_bind(t, num_online_cpus() - 1);
	wake_up_process(t);
	return 0;
}

static void __exit vtice_crashme_exit(void)
{
}

module_init(vtice_crashme_init);
module_exit(vtice_crashme_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: an oops in a kernel thread, or a triple fault");
