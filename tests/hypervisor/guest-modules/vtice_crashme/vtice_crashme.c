// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvcrash scenario: a kernel thread that
 * writes through a NULL pointer, the oops in a kthread the hypervisor's
 * crash guard on __die() must stop at (docs/hypervisor-debugging.md).
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>

static int vtice_crashme_thread(void *unused)
{
	int *volatile nowhere = NULL;

	msleep(500);	/* insmod returns first */
	*nowhere = 1;	/* page_fault_oops() -> __die() */
	return 0;
}

static int __init vtice_crashme_init(void)
{
	struct task_struct *t = kthread_run(vtice_crashme_thread, NULL, "vtice-crashme");

	return PTR_ERR_OR_ZERO(t);
}

static void __exit vtice_crashme_exit(void)
{
}

module_init(vtice_crashme_init);
module_exit(vtice_crashme_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: an oops in a kernel thread");
