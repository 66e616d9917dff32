/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transparency prober (tests/transparency/README.md): a seeded,
 * random program of observations a kernel can make of its CPU, run in
 * several states of one boot (bare, then under vtice in each of its
 * modes) and compared with the bare run. Any difference is something a
 * kernel could use to tell that vtice is there.
 */
#ifndef VTICE_PROBE_H
#define VTICE_PROBE_H

#include <linux/types.h>
#include <asm/asm.h>

/*
 * An instruction that may fault, under the kernel's exception fixup:
 * EX_TYPE_FAULT resumes after it with the vector in RAX, so RAX is an
 * operand of each, and `done` says whether it completed.
 */
#define TRY(insn) "1: " insn "\n\tmovl $1, %[done]\n2:\n" _ASM_EXTABLE_FAULT(1b, 2b)
#define FAULT(ax, done) ((done) ? 0 : (u32)(ax) + 1)

/* What one observation does (observe.c). */
enum obs_kind {
	OBS_CPUID,		/* arg leaf, sub subleaf */
	OBS_RDMSR,		/* arg index */
	OBS_WRMSR_SAME,		/* arg index: write back what it reads, read again */
	OBS_WRMSR_BAD,		/* arg index into the bad-write table (observe.c) */
	OBS_READ_CR,		/* arg 0, 2, 3, 4 or 8 */
	OBS_WRITE_CR,		/* arg 0, 4: the same value; 8: sub as the TPR, then back */
	OBS_TOGGLE_CR,		/* arg 0 or 4, sub the bit: flip it, read back, restore */
	OBS_READ_DR,		/* arg 0-3, 6, 7 */
	OBS_WRITE_DR,		/* arg 0-3: val, read back, restore; 6, 7: the same value; 8: DR7 bit 32 */
	OBS_XGETBV,		/* arg the XCR */
	OBS_XSETBV,		/* arg 0: XCR0 again; 1: XCR0 without x87 (#GP); 2: XCR1 */
	OBS_VMX,		/* arg enum obs_vmx */
	OBS_UD2,
	OBS_RDPMC,		/* arg ECX */
	OBS_RDTSCP,
	OBS_INVD,		/* a store, INVD, the load: only with invd=1 */
	OBS_PEEK,		/* arg index into peek=: 16 bytes read at CPL 0 */
	OBS_DEBUG,		/* arg enum obs_debug: a #DB or #BP raised and caught */
	OBS_ALIAS,		/* arg index into peek=, sub enum obs_alias: through an alias of its page */
	OBS_NMI,		/* an NMI to itself, a second from its handler (nmi.c) */
	OBS_IRET,		/* arg enum obs_iret: IRETQ at CPL 0 through a frame it builds (iret.c) */
	OBS_SMC,		/* val's low half written into code, which then runs (smc.c) */
	OBS_KINDS
};

enum obs_vmx {
	VMX_VMXON, VMX_VMXON_VMXE, VMX_VMCALL, VMX_VMFUNC, VMX_INVEPT, VMX_INVVPID,
	VMX_VMREAD, VMX_VMWRITE, VMX_VMPTRST, VMX_VMPTRLD, VMX_VMCLEAR, VMX_VMLAUNCH,
	VMX_VMRESUME, VMX_VMXOFF, VMX_GETSEC, VMX_KINDS
};

/*
 * Through a second mapping of a peek page (alias.c): its bytes read, or
 * one written back, through a read-only alias; 8 bytes read through it, or
 * written through a writable one, across its last byte into the unmapped
 * guard page vmap leaves after it.
 */
enum obs_alias {
	ALIAS_READ, ALIAS_WRITE, ALIAS_STRADDLE_READ, ALIAS_STRADDLE_WRITE, ALIAS_KINDS
};

enum obs_iret {
	IRET_PLAIN, IRET_AC, IRET_IOPL, IRET_NONCANONICAL, IRET_CS_NULL, IRET_CS_RPL3, IRET_SS_RPL3,
	IRET_KINDS
};

enum obs_debug {
	DEBUG_TF, DEBUG_GD, DEBUG_DATA, DEBUG_ICEBP, DEBUG_INT3, DEBUG_INT_1, DEBUG_IRET_TF,
	DEBUG_KINDS
};

struct obs {
	u8 kind;		/* enum obs_kind */
	u8 cpu;			/* where it runs */
	u16 sub;
	u32 arg;
	u64 val;		/* a value some observations write */
};

/* What came of one: two values, or the vector it faulted with. */
struct obs_result {
	u64 v[2];
	u32 fault;		/* vector + 1; 0: none */
	u32 pad;
};

/* Addresses peek= takes. */
#define OBS_MAX_PEEK	8

/* Observations run in chunks this long, each chunk on one CPU. */
#define OBS_CHUNK	256

/* program.c: the i-th observation of the program `seed` (the same in every state). */
struct obs_program {
	u64 seed;
	u32 nr_cpus;		/* CPUs 0..nr_cpus-1, all online */
	u32 sweep_len;		/* observations each CPU's sweep starts with */
	u32 nr_peek;
	bool invd;
	bool ranges;		/* the sweep reads every CPUID leaf and MSR index */
};
void obs_program_init(struct obs_program *p, u64 seed, u32 nr_cpus, u32 nr_peek, bool invd,
		      bool ranges);
void obs_at(const struct obs_program *p, u64 i, struct obs *o);
u32 obs_bad_writes(void);	/* entries of the bad-write table */

/* observe.c: on this CPU, interrupts off. Returns the TSC cycles it took. */
/* VMXON regions, IA32_VMX_BASIC (bare), the die notifier, the peek aliases. */
int obs_prepare(unsigned int nr_cpus, const unsigned long *peek, unsigned int nr_peek);
void obs_release(void);
u64 obs_run(const struct obs *o, struct obs_result *r, const unsigned long *peek);
void obs_log_bare(const struct obs *o, const struct obs_result *r, const unsigned long *peek);
const char *obs_kind_name(u8 kind);
const char *obs_vmx_name(u32 which);
const char *obs_debug_name(u32 which);

/* debug_events.c: the die notifier that sees them, and one event raised. */
int obs_debug_prepare(void);
void obs_debug_release(void);
void obs_debug(u32 which, struct obs_result *r);
void obs_debug_log(u32 which, const struct obs_result *r);

/* alias.c: each peek= page mapped again, read-only. */
int obs_alias_prepare(const unsigned long *peek, unsigned int nr);
void obs_alias_release(void);
void obs_alias(unsigned long addr, u32 which, u32 sub, struct obs_result *r);
void obs_alias_log(unsigned long addr, u32 sub, const struct obs_result *r);
const char *obs_alias_name(u32 sub);
void obs_alias_walks_begin(void);
void obs_alias_walks_log(const char *state);
void obs_invlpg_everywhere(unsigned long addr);	/* after a change to a kernel PTE */
/* nmi.c: the NMI handler that sees them, and the two NMIs sent. */
int obs_nmi_prepare(void);
void obs_nmi_release(void);
void obs_nmi(struct obs_result *r);
void obs_nmi_log(const struct obs_result *r);

/* iret.c: one IRETQ frame returned through. */
void obs_iret(u32 which, struct obs_result *r);
const char *obs_iret_name(u32 which);
void obs_iret_log(u32 which, const struct obs_result *r);

/* smc.c: the code page it writes, and one write-then-call. */
int obs_smc_prepare(void);
void obs_smc_release(void);
void obs_smc(u32 value, struct obs_result *r);
void obs_smc_log(u32 value, const struct obs_result *r);

/* Its value is the moment's, not the CPU's: only its faults are compared. */
bool obs_is_volatile(const struct obs *o);

/* report.c: the differences of a state from the bare run. */
struct obs_diffs;
struct obs_diffs *obs_diffs_new(void);
void obs_diffs_free(struct obs_diffs *d);
void obs_diffs_add(struct obs_diffs *d, const struct obs *o, u64 index,
		   const struct obs_result *bare, const struct obs_result *now);
/* The TSC cycles observations of a kind took: one in this state, all of the bare run. */
void obs_timing_add(struct obs_diffs *d, u8 kind, u64 cycles);
void obs_timing_bare(struct obs_diffs *d, u8 kind, u64 cycles, u64 runs);
/* The report, as text, into buf (at most len); returns its length. */
size_t obs_diffs_print(const struct obs_diffs *d, const char *state, u64 observations,
		       u64 volatiles, char *buf, size_t len);

#endif
