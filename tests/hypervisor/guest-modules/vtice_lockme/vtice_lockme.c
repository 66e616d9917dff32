// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvcrash scenario: a CPU its timer cannot
 * interrupt. A kernel thread bound to the last CPU either
 *
 *   mode=irqs   disables interrupts and spins for good (a hard lockup), or
 *   mode=timer  masks its local APIC timer (the LVT's mask bit) and spins
 *               with interrupts on for 25 s (a kernel that stops servicing
 *               its timer), then unmasks it and ends;
 *
 * the other CPU runs on. The hypervisor's lockup watch (lockup_secs) must
 * stop the machine either way (docs/hypervisor-debugging.md).
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <asm/apic.h>
#include <asm/msr.h>

#define TIMER_MASKED_SECS	25
/* The LVT timer's mode bits 18:17 (SDM Vol. 3A 11.5.1). */
#define LVT_TIMER_MODE		(3u << 17)

static char *mode = "irqs";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "irqs (interrupts off for good) or timer (the APIC timer masked for 25 s)");

/*
 * apic_read()/apic_write() became static calls in Linux 6.6 whose keys are
 * not exported to modules: reach the local APIC the way its mode says.
 */
static u32 lapic_read(u32 reg)
{
	return x2apic_enabled() ? native_apic_msr_read(reg) : native_apic_mem_read(reg);
}

static void lapic_write(u32 reg, u32 value)
{
	if (x2apic_enabled())
		native_apic_msr_write(reg, value);
	else
		native_apic_mem_write(reg, value);
}

/*
 * An event that came due while the LVT was masked is lost, and the kernel,
 * waiting for it, programs no other: the CPU would never tick again. Arm
 * one that fires now; the kernel's handler then programs its next event.
 * A periodic timer goes on by itself.
 */
static void fire_timer_now(u32 lvt)
{
	u32 timer_mode = lvt & LVT_TIMER_MODE;

	if (timer_mode == APIC_LVT_TIMER_TSCDEADLINE)
		wrmsrl(MSR_IA32_TSC_DEADLINE, rdtsc() + 1);
	else if (timer_mode == APIC_LVT_TIMER_ONESHOT)
		lapic_write(APIC_TMICT, 1);
}

static void spin_with_timer_masked(void)
{
	ktime_t end = ktime_add_ms(ktime_get(), TIMER_MASKED_SECS * MSEC_PER_SEC);
	unsigned long flags;
	u32 lvt;

	local_irq_save(flags);
	lvt = lapic_read(APIC_LVTT);
	lapic_write(APIC_LVTT, lvt | APIC_LVT_MASKED);
	local_irq_restore(flags);
	pr_info("vtice_lockme: the local APIC timer masked on CPU %d, spinning with interrupts on\n",
		raw_smp_processor_id());
	while (ktime_before(ktime_get(), end))
		cpu_relax();
	local_irq_save(flags);
	lapic_write(APIC_LVTT, lvt);
	fire_timer_now(lvt);
	local_irq_restore(flags);
	pr_info("vtice_lockme: the local APIC timer unmasked again\n");
}

static int vtice_lockme_thread(void *unused)
{
	msleep(500);	/* insmod returns first */
	if (!strcmp(mode, "timer")) {
		spin_with_timer_masked();
		return 0;
	}
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
	if (strcmp(mode, "irqs") && strcmp(mode, "timer"))
		return -EINVAL;
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
MODULE_DESCRIPTION("vtice test: a CPU its timer cannot interrupt");
