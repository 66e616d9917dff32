// SPDX-License-Identifier: GPL-2.0
/*
 * Debug events a kernel can raise on itself and watch arrive: a TF single
 * step after POPF and after IRETQ, a general-detect #DB from DR7.GD, a
 * data breakpoint in DR0/DR7, ICEBP (INT1), INT3, and INT 1 as a software
 * interrupt. (Not INT 3 in
 * its two-byte form: the kernel's kprobes handler takes a #BP whose byte
 * before RIP is not 0xCC for a removed probe and backs RIP onto it.) A
 * hypervisor that intercepts #DB or #BP has to deliver each of them back
 * with the same DR6, at the same RIP, as the CPU would; it is where
 * reflecting an event with the wrong type or instruction length shows.
 *
 * The event is seen the way any kernel code sees it: through the die
 * notifier chain, which the kernel's #DB and #BP handlers call with DR6
 * (positive polarity) and the interrupted registers. Our notifier claims
 * the event only while this CPU has one armed. Before a data breakpoint
 * DR6.BD is set by hand, and a CPU never clears it (SDM Vol. 3B 18.2.3),
 * so the kernel's hw_breakpoint notifier, which swallows a breakpoint in
 * a slot it does not own unless DR6 has other bits, passes it on to us.
 * (Not BT, which the SDM keeps just as well: Bochs 3.0 clears BT when it
 * delivers a #DB.)
 */
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/notifier.h>
#include <linux/percpu.h>
#include <asm/debugreg.h>
#include <asm/processor-flags.h>
#include "probe.h"

#define DR7_GD		BIT(13)
#define DR6_BD		BIT(13)
/* Slot 0: L0, R/W 01 (writes), LEN 10 (8 bytes) (SDM Vol. 3B 18.2.4). */
#define DR7_SLOT0_WRITE8	(BIT(0) | ((unsigned long)(DR_RW_WRITE | DR_LEN_8) << DR_CONTROL_SHIFT))

struct debug_catch {
	bool armed;
	u32 calls;
	unsigned long die;	/* DIE_DEBUG or DIE_INT3 */
	unsigned long dr6;
	unsigned long ip;
};

static DEFINE_PER_CPU(struct debug_catch, debug_catch);

static int debug_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct debug_catch *c = this_cpu_ptr(&debug_catch);
	struct die_args *args = data;

	if ((val != DIE_DEBUG && val != DIE_INT3) || !c->armed)
		return NOTIFY_DONE;
	c->calls++;
	c->die = val;
	c->ip = args->regs->ip;
	if (val == DIE_DEBUG) {
		unsigned long *dr6 = (unsigned long *)args->err;

		c->dr6 = *dr6;
		*dr6 = 0;			/* consumed */
	}
	args->regs->flags &= ~X86_EFLAGS_TF;	/* the single step is over */
	return NOTIFY_STOP;
}

/* Right after the kernel's hw_breakpoint notifier (INT_MAX), before kgdb's and kprobes'. */
static struct notifier_block debug_nb = {
	.notifier_call = debug_notify,
	.priority = INT_MAX - 1,
};

static bool registered;

int obs_debug_prepare(void)
{
	int err = register_die_notifier(&debug_nb);

	registered = !err;
	return err;
}

void obs_debug_release(void)
{
	if (registered)
		unregister_die_notifier(&debug_nb);
	registered = false;
}

/* Each leaves in `expect` the RIP the event should report. */
static unsigned long raise_tf(void)
{
	unsigned long expect;

	/* TF set by POPF traps after the instruction that follows it (SDM Vol. 3B 18.3.1.4). */
	asm volatile("lea 1f(%%rip), %[e]\n\t"
		     "pushf\n\torq $0x100, (%%rsp)\n\tpopf\n\tnop\n1:\n"
		     : [e] "=&r"(expect) : : "cc", "memory");
	return expect;
}

/*
 * IRETQ to the next instruction with TF in the frame it pops, the way
 * sync_core() returns to itself (objtool knows that IRET): the trap comes
 * after the first instruction at the target, as after POPF.
 */
static unsigned long raise_iret_tf(void)
{
	unsigned long tmp, expect;

	asm volatile("lea 2f(%%rip), %[e]\n\t"
		     "mov %%ss, %k[t]\n\tpushq %[t]\n\tpushq %%rsp\n\taddq $8, (%%rsp)\n\t"
		     "pushfq\n\torq $0x100, (%%rsp)\n\tmov %%cs, %k[t]\n\tpushq %[t]\n\t"
		     "pushq $1f\n\tiretq\n1:\tnop\n2:\n"
		     : [e] "=&r"(expect), [t] "=&r"(tmp), ASM_CALL_CONSTRAINT : : "cc", "memory");
	return expect;
}

/* The MOV to DR7 faults before it runs; the handler's return runs it with GD clear. */
static unsigned long raise_gd(void)
{
	unsigned long dr7, expect;

	get_debugreg(dr7, 7);
	set_debugreg(dr7 | DR7_GD, 7);
	asm volatile("lea 1f(%%rip), %[e]\n1:\tmov %[v], %%db7\n"
		     : [e] "=&r"(expect) : [v] "r"(dr7) : "memory");
	return expect;
}

static unsigned long raise_data(void)
{
	static u64 cell __aligned(8);
	unsigned long dr0, dr6, dr7, expect;

	get_debugreg(dr0, 0);
	get_debugreg(dr6, 6);
	get_debugreg(dr7, 7);
	set_debugreg(DR6_RESERVED | DR6_BD, 6);
	set_debugreg((unsigned long)&cell, 0);
	set_debugreg(dr7 | DR7_SLOT0_WRITE8, 7);
	/* A data breakpoint traps after the write (SDM Vol. 3B 18.2.4). */
	asm volatile("lea 1f(%%rip), %[e]\n\tmovq $1, %[c]\n1:\n"
		     : [e] "=&r"(expect), [c] "=m"(cell) : : "memory");
	set_debugreg(dr7, 7);
	set_debugreg(dr0, 0);
	set_debugreg(dr6, 6);
	return expect;
}

/* ICEBP, INT3 and INT 1: traps, RIP after the instruction. */
static unsigned long raise_int(u32 which)
{
	unsigned long expect;

	switch (which) {
	case DEBUG_ICEBP:
		asm volatile("lea 1f(%%rip), %[e]\n\t.byte 0xf1\n1:\n" : [e] "=&r"(expect) : : "memory");
		break;
	case DEBUG_INT3:
		asm volatile("lea 1f(%%rip), %[e]\n\tint3\n1:\n" : [e] "=&r"(expect) : : "memory");
		break;
	default:
		asm volatile("lea 1f(%%rip), %[e]\n\t.byte 0xcd, 0x01\n1:\n" : [e] "=&r"(expect) : : "memory");
		break;
	}
	return expect;
}

/*
 * v[0]: DR6 as the kernel's #DB handler passed it (0 for #BP or no call);
 * v[1]: the notifier's calls (bits 32-47) and which chain event (48-55),
 * and the reported RIP's distance from where the event belongs (0-31).
 * ICEBP and INT 1 leave DR6 clear, so the kernel's #DB handler returns
 * without calling the chain: calls 0 is what a CPU without vtice shows.
 */
void obs_debug(u32 which, struct obs_result *r)
{
	struct debug_catch *c = this_cpu_ptr(&debug_catch);
	unsigned long expect;

	*c = (struct debug_catch){ .armed = true };
	barrier();
	switch (which) {
	case DEBUG_TF: expect = raise_tf(); break;
	case DEBUG_GD: expect = raise_gd(); break;
	case DEBUG_DATA: expect = raise_data(); break;
	case DEBUG_IRET_TF: expect = raise_iret_tf(); break;
	default: expect = raise_int(which); break;
	}
	barrier();
	c->armed = false;
	r->v[0] = c->dr6;
	r->v[1] = (u64)c->calls << 32 | (u64)(c->die & 0xff) << 48 |
		  (c->calls ? (u32)(c->ip - expect) : 0);
}

/* One line per event of the bare run, for the rig to hold against the SDM. */
void obs_debug_log(u32 which, const struct obs_result *r)
{
	u32 calls = (u32)(r->v[1] >> 32) & 0xffff, die = (u32)(r->v[1] >> 48) & 0xff;

	pr_info("vtice_probe: bare debug %s: dr6 0x%llx calls %u event %s rip %+d\n",
		obs_debug_name(which), r->v[0], calls,
		!calls ? "none" : die == DIE_DEBUG ? "debug" : die == DIE_INT3 ? "int3" : "other",
		(int)(u32)r->v[1]);
}
