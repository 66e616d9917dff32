// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvinit scenario (issue 23): INIT and then
 * SIPI to another CPU, as a kernel starting a CPU sends them (SDM Vol. 3A
 * 10.4.4), with a SIPI vector whose page holds a few real-mode instructions.
 * They store what the CPU holds at the start of real mode (EDX, CR0, CR4,
 * EFLAGS, ESP, DR0-DR3, DR6, DR7: the INIT state) and a mark, then halt.
 * A running target first gets breakpoint addresses in DR0-DR3 and status
 * bits in DR6, which the INIT must clear. The module prints
 * them, so a run on the bare CPU and one under vtice can be compared:
 *
 *   target=offline  the CPU is offline (the kernel's own INIT/SIPI brings
 *                   it back later): the bare CPU's answer, nothing lost;
 *   target=online   the CPU runs the kernel: it is first parked in a loop
 *                   with interrupts off, then reset. The kernel has lost
 *                   that CPU for good: the machine must be ended after.
 *
 * The page below 1 MiB (page=, default 0x6000) lies in the first MiB,
 * which Linux reserves and leaves unused but for its CPU-startup
 * trampoline; memblock puts that at the top, under the EBDA (0x9xxxx).
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/debugreg.h>
#include <asm/msr.h>
#include <asm/smp.h>

static int cpu = 1;
module_param(cpu, int, 0444);
MODULE_PARM_DESC(cpu, "the CPU to reset (not this one)");
static char *target = "offline";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "offline (an offline CPU) or online (park a running CPU first; destructive)");
static ulong page = 0x6000;
module_param(page, ulong, 0444);
MODULE_PARM_DESC(page, "physical page below 1 MiB for the real-mode code");

#define MARK		0x51b1dead
#define OUT		0x800	/* where the code stores, from the page's start */

struct init_state {
	u32 mark, edx, cr0, cr4, eflags, esp;
	u32 dr[4], dr6, dr7;
};

/*
 * 16-bit code, at VV00:0000. DS = CS; the stores go to OUT; the mark last,
 * so a reader that sees it sees the rest.
 */
static const u8 real_mode_code[] = {
	0x8c, 0xc8,				/* mov ax, cs */
	0x8e, 0xd8,				/* mov ds, ax */
	0x66, 0x89, 0x16, 0x04, 0x08,		/* mov [0x804], edx */
	0x0f, 0x20, 0xc0,			/* mov eax, cr0 */
	0x66, 0xa3, 0x08, 0x08,			/* mov [0x808], eax */
	0x0f, 0x20, 0xe0,			/* mov eax, cr4 */
	0x66, 0xa3, 0x0c, 0x08,			/* mov [0x80c], eax */
	0x66, 0x9c,				/* pushfd */
	0x66, 0x58,				/* pop eax */
	0x66, 0xa3, 0x10, 0x08,			/* mov [0x810], eax */
	0x66, 0x89, 0x26, 0x14, 0x08,		/* mov [0x814], esp */
	0x0f, 0x21, 0xc0,			/* mov eax, dr0 */
	0x66, 0xa3, 0x18, 0x08,			/* mov [0x818], eax */
	0x0f, 0x21, 0xc8,			/* mov eax, dr1 */
	0x66, 0xa3, 0x1c, 0x08,			/* mov [0x81c], eax */
	0x0f, 0x21, 0xd0,			/* mov eax, dr2 */
	0x66, 0xa3, 0x20, 0x08,			/* mov [0x820], eax */
	0x0f, 0x21, 0xd8,			/* mov eax, dr3 */
	0x66, 0xa3, 0x24, 0x08,			/* mov [0x824], eax */
	0x0f, 0x21, 0xf0,			/* mov eax, dr6 */
	0x66, 0xa3, 0x28, 0x08,			/* mov [0x828], eax */
	0x0f, 0x21, 0xf8,			/* mov eax, dr7 */
	0x66, 0xa3, 0x2c, 0x08,			/* mov [0x82c], eax */
	0x66, 0xc7, 0x06, 0x00, 0x08,		/* mov dword [0x800], MARK */
	0xad, 0xde, 0xb1, 0x51,
	0xfa,					/* cli */
	0xf4,					/* hlt */
	0xeb, 0xfd,				/* jmp back to hlt */
};

static atomic_t parked = ATOMIC_INIT(0);

/* What an INIT must clear (SDM Vol. 3A Table 10-1): not armed in DR7. */
static void dirty_debug_registers(void)
{
	set_debugreg(0xffffffff81000000ul, 0);
	set_debugreg(0xffffffff81000010ul, 1);
	set_debugreg(0xffffffff81000020ul, 2);
	set_debugreg(0xffffffff81000030ul, 3);
	set_debugreg(0xffff4ff1ul, 6);	/* BS and B0, as a #DB leaves them */
}

static void park(void *unused)
{
	local_irq_disable();
	dirty_debug_registers();
	atomic_set(&parked, 1);
	for (;;)
		cpu_relax();
}

static void send_icr(u32 apicid, u32 low)
{
	unsigned long flags;

	local_irq_save(flags);
	if (x2apic_enabled()) {
		wrmsrl(APIC_BASE_MSR + (APIC_ICR >> 4), ((u64)apicid << 32) | low);
	} else {
		native_apic_mem_write(APIC_ICR2, SET_XAPIC_DEST_FIELD(apicid));
		native_apic_mem_write(APIC_ICR, low);
		while (native_apic_mem_read(APIC_ICR) & APIC_ICR_BUSY)
			cpu_relax();
	}
	local_irq_restore(flags);
}

static int reset_cpu(void)
{
	volatile struct init_state *st;
	u8 *code = phys_to_virt(page);
	u32 apicid = cpu_physical_id(cpu);
	int i;

	memset(code, 0, PAGE_SIZE);
	memcpy(code, real_mode_code, sizeof(real_mode_code));
	st = (volatile struct init_state *)(code + OUT);
	/* INIT, then two SIPIs, as the kernel's own wakeup does (SDM 3A 10.4.4). */
	send_icr(apicid, APIC_INT_LEVELTRIG | APIC_INT_ASSERT | APIC_DM_INIT);
	mdelay(10);
	for (i = 0; i < 2; i++) {
		send_icr(apicid, APIC_DM_STARTUP | (page >> PAGE_SHIFT));
		udelay(300);
	}
	for (i = 0; i < 1000 && st->mark != MARK; i++)
		mdelay(1);
	if (st->mark != MARK) {
		pr_err("vtice_initme: cpu %d (apic %u) never ran the SIPI's code at 0x%lx\n",
		       cpu, apicid, page);
		return -ETIMEDOUT;
	}
	pr_info("vtice_initme: cpu %d %s: started at 0x%lx: edx 0x%x cr0 0x%x cr4 0x%x eflags 0x%x esp 0x%x dr0 0x%x dr1 0x%x dr2 0x%x dr3 0x%x dr6 0x%x dr7 0x%x\n",
		cpu, target, page, st->edx, st->cr0, st->cr4, st->eflags, st->esp,
		st->dr[0], st->dr[1], st->dr[2], st->dr[3], st->dr6, st->dr7);
	return 0;
}

/* Parks a running target; false if it never got there. */
static bool park_target(void)
{
	int i;

	smp_call_function_single(cpu, park, NULL, 0);
	for (i = 0; i < 1000 && !atomic_read(&parked); i++)
		mdelay(1);
	return atomic_read(&parked);
}

static int __init vtice_initme_init(void)
{
	bool online = !strcmp(target, "online");
	int me = get_cpu(), ret = -EINVAL;

	if ((online || !strcmp(target, "offline")) && cpu >= 0 && cpu < nr_cpu_ids && cpu != me &&
	    cpu_online(cpu) == online && !(page & ~PAGE_MASK) && page >= 0x1000 && page < 0x9f000) {
		ret = -EBUSY;
		if (!online || park_target())
			ret = reset_cpu();
	}
	put_cpu();
	/*
	 * An offline target leaves nothing of this module running: unload at
	 * once (insmod reports EAGAIN). A parked one may still spin in park()
	 * if the INIT never reached it: stay.
	 */
	if (online && ret != -EINVAL)
		return 0;
	return ret ?: -EAGAIN;
}

module_init(vtice_initme_init);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: INIT and SIPI to another CPU, the INIT state it starts in");
