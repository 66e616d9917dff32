// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvprofile scenario: a known function to
 * find in the profiler's samples. A kernel thread bound to the last CPU
 * waits until 1 is written to /sys/module/vtice_spin/parameters/go (so the
 * module is in /proc/kallsyms before the profiler reads it), then spins in
 * vtice_spin_loop() for secs seconds with interrupts on, logs how long it
 * spun and ends; the CPU spends that time in that one function, apart from
 * its interrupts. Short enough for the soft-lockup watchdog (20 s) and
 * RCU (21 s) to stay quiet.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>

static uint secs = 6;
module_param(secs, uint, 0444);
MODULE_PARM_DESC(secs, "seconds to spin, 1 to 10");

static bool go;
module_param(go, bool, 0644);
MODULE_PARM_DESC(go, "write 1 to start spinning");

static DECLARE_COMPLETION(vtice_spin_done);

/* Not inlined: the samples must find it by name. */
static noinline void vtice_spin_loop(ktime_t end)
{
	while (ktime_before(ktime_get(), end))
		cpu_relax();
}

static int vtice_spin_thread(void *unused)
{
	ktime_t start;

	while (!READ_ONCE(go))
		msleep(20);
	start = ktime_get();

	vtice_spin_loop(ktime_add_ms(start, secs * MSEC_PER_SEC));
	pr_info("vtice_spin: spun %lld ms in vtice_spin_loop on CPU %d\n",
		ktime_ms_delta(ktime_get(), start), raw_smp_processor_id());
	complete(&vtice_spin_done);
	return 0;
}

static int __init vtice_spin_init(void)
{
	struct task_struct *t;

	if (secs < 1 || secs > 10)
		return -EINVAL;
	t = kthread_create(vtice_spin_thread, NULL, "vtice-spin");
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, num_online_cpus() - 1);
	wake_up_process(t);
	return 0;
}

/* The thread ends by itself; rmmod waits for it, so its code stays. */
static void __exit vtice_spin_exit(void)
{
	wait_for_completion(&vtice_spin_done);
}

module_init(vtice_spin_init);
module_exit(vtice_spin_exit);
MODULE_LICENSE("GPL");
