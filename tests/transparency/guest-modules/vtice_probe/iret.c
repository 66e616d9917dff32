// SPDX-License-Identifier: GPL-2.0
/*
 * IRETQ at CPL 0 to frames the prober builds, not the kernel's own returns:
 * to the next instruction with RFLAGS of its choosing (AC; IOPL 3, which
 * CPL 0 may change), and frames the CPU must refuse with #GP before it
 * pops anything (SDM Vol. 2A, IRET: a non-canonical RIP, a null CS, CS or
 * SS of RPL 3 for a return to CPL 0). A hypervisor never sees an IRETQ
 * unless it asks to, but one that steps or traces the kernel, or blocks
 * NMIs in its place, changes what happens around it; the answer must be
 * the bare CPU's. IF stays clear in every frame (a chunk runs with
 * interrupts off), and the caller's RFLAGS come back after each.
 */
#include <asm/irqflags.h>
#include <asm/segment.h>
#include "probe.h"

/* A RIP no paging mode calls canonical: bit 63 set, bits 62:47 clear. */
#define NONCANONICAL_RIP	0x8000000000000000ull

struct iret_frame {
	u64 rflags, cs, ss, bad_rip;	/* bad_rip 0: return to the next instruction */
};

static const struct iret_frame frames[IRET_KINDS] = {
	[IRET_PLAIN] = { X86_EFLAGS_FIXED, __KERNEL_CS, __KERNEL_DS, 0 },
	[IRET_AC] = { X86_EFLAGS_FIXED | X86_EFLAGS_AC, __KERNEL_CS, __KERNEL_DS, 0 },
	[IRET_IOPL] = { X86_EFLAGS_FIXED | X86_EFLAGS_IOPL, __KERNEL_CS, __KERNEL_DS, 0 },
	[IRET_NONCANONICAL] = { X86_EFLAGS_FIXED, __KERNEL_CS, __KERNEL_DS, NONCANONICAL_RIP },
	[IRET_CS_NULL] = { X86_EFLAGS_FIXED, 0, __KERNEL_DS, 0 },
	[IRET_CS_RPL3] = { X86_EFLAGS_FIXED, __KERNEL_CS | 3, __KERNEL_DS, 0 },
	[IRET_SS_RPL3] = { X86_EFLAGS_FIXED, __KERNEL_CS, __KERNEL_DS | 3, 0 },
};

/*
 * Pushes the frame (SS, this RSP, RFLAGS, CS, RIP) and returns through it.
 * Landed: RFLAGS as the first instruction there sees them. Refused: the
 * #GP's fixup resumes with the frame still on the stack (a faulting IRET
 * changes nothing), which it then drops.
 */
static u32 try_iretq(const struct iret_frame *f, u64 *landed)
{
	unsigned long ax = 0, sp, rip;
	u64 out = 0;
	u32 done = 0;

	asm volatile("movq %%rsp, %[sp]\n\t"
		     "leaq 3f(%%rip), %[rip]\n\t"
		     "testq %[bad], %[bad]\n\t"
		     "cmovnzq %[bad], %[rip]\n\t"
		     "pushq %[ss]\n\tpushq %[sp]\n\tpushq %[fl]\n\tpushq %[cs]\n\tpushq %[rip]\n"
		     "1:\tiretq\n"
		     "3:\tpushfq\n\tpopq %[out]\n\t"
		     "movl $1, %[done]\n\t"
		     "jmp 4f\n"
		     "2:\taddq $40, %%rsp\n"
		     "4:\n"
		     _ASM_EXTABLE_FAULT(1b, 2b)
		     : "+a"(ax), [done] "+r"(done), [out] "+r"(out), [sp] "=&r"(sp), [rip] "=&r"(rip),
		       ASM_CALL_CONSTRAINT
		     : [fl] "r"(f->rflags), [cs] "r"(f->cs), [ss] "r"(f->ss), [bad] "r"(f->bad_rip)
		     : "cc", "memory");
	*landed = out;
	return FAULT(ax, done);
}

void obs_iret(u32 which, struct obs_result *r)
{
	unsigned long flags = native_save_fl();

	if (which >= IRET_KINDS)
		return;
	r->fault = try_iretq(&frames[which], &r->v[0]);
	/* AC and IOPL as they were */
	asm volatile("pushq %[f]\n\tpopfq" : ASM_CALL_CONSTRAINT : [f] "r"(flags) : "cc", "memory");
}

const char *obs_iret_name(u32 which)
{
	static const char *const names[IRET_KINDS] = {
		"plain", "ac", "iopl", "noncanonical", "cs-null", "cs-rpl3", "ss-rpl3",
	};

	return which < IRET_KINDS ? names[which] : "?";
}

void obs_iret_log(u32 which, const struct obs_result *r)
{
	if (r->fault)
		pr_info("vtice_probe: bare iret %s: fault %u\n", obs_iret_name(which), r->fault - 1);
	else
		pr_info("vtice_probe: bare iret %s: rflags %#llx\n", obs_iret_name(which), r->v[0]);
}
