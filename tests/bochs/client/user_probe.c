// SPDX-License-Identifier: GPL-2.0
/*
 * The transparency fuzzer's CPL-3 half (tests/transparency/README.md): a
 * seeded program of what a program can observe of its CPU and of the
 * kernel's exception handling, one line per observation into a file:
 *
 *   INDEX KIND ARG RESULT
 *
 * RESULT is the values an instruction left, or the signal it raised with
 * the kernel's si_code and the CPU's trap number and error code (from the
 * signal frame). The scenario runs it bare and in each state of vtice and
 * compares the files line by line. Each chunk of 64 runs pinned to a CPU
 * the seed picks, so CPU-specific answers (APIC IDs, TSC_AUX) line up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "report.h"

#define CHUNK		64
#define EFLAGS_TF	0x100ull
#define EFLAGS_AC	0x40000ull
#define EFLAGS_IF	0x200ull
#define EFLAGS_IOPL	0x3000ull
/* Linux's GDT (arch/x86/include/asm/segment.h): a ring-0 CS and DS, the 32-bit user CS */
#define KERNEL_CS	0x10
#define KERNEL_DS	0x18
#define USER32_CS	0x23

/*
 * Not SYSCALL with TF: in Bochs 3.0 its single-step trap lands on the
 * kernel's entry point even bare, and the kernel WARNs (exc_debug_kernel,
 * 6.12); the fake CPU's SyscallTrap tests cover vtice's side.
 */
enum user_kind {
	U_CPUID, U_INT_N, U_INSN, U_PUSHF_AC, U_POPF_TF, U_ALIGN_AC, U_HWBP, U_IRET, U_KINDS
};

static const char *const kind_names[U_KINDS] = {
	"cpuid", "int", "insn", "pushf-ac", "popf-tf", "align-ac", "hwbp", "iret",
};

/*
 * U_HWBP: a debug-register breakpoint of the program's own, through
 * perf_event_open (PERF_TYPE_BREAKPOINT with sigtrap: the kernel programs
 * DR0-DR3 and DR7 for this task and sends SIGTRAP at the hit): on
 * hwbp_target's first instruction (an instruction breakpoint, a fault: RIP
 * stays on it), or on a cell the stub writes, or reads (a trap: RIP after
 * the access). The result adds where RIP was, from the code's start. Both
 * addresses are fixed (a static binary), because the kernel leaves the
 * last one in DR0, and DR7.GE set, after a breakpoint goes (hwbp_settle).
 */
enum hwbp_kind { HWBP_EXEC, HWBP_WRITE, HWBP_RW, HWBP_KINDS };

void hwbp_target(void);
__asm__(".pushsection .text\n\t.type hwbp_target, @function\nhwbp_target:\n\tnop\n\tret\n.popsection");
static uint64_t hwbp_cell;

/*
 * U_IRET: IRETQ at CPL 3 through a frame the program builds (SDM Vol. 2A,
 * IRET: a return to the same privilege level, or a fault on the frame's
 * selectors or RIP). iret_probe(cs, ss, flags_xor, rip, rsp) pushes SS,
 * RSP, its RFLAGS with flags_xor applied, CS and RIP (iret_landing if 0;
 * its own RSP if 0) and runs IRETQ. At iret_landing it returns RFLAGS as
 * IRETQ left them (AC cleared again before C runs). iret_compat is 32-bit
 * code for CS 0x23 (compatibility mode): it returns, through a far return
 * to 64-bit code, its marker and the CS it ran with. Compatibility mode
 * runs below 4 GiB and pushes through ESP, so that frame's RSP is a stack
 * in .bss and the code must sit below 4 GiB too: the rig's client is
 * static, not PIE. A build whose code or .bss lies above (PIE, on the host)
 * gives ~0 for those kinds, not run: a signal there could not be delivered
 * on a truncated stack.
 */
enum iret_kind {
	IRET_SAME, IRET_TF, IRET_IOPL_IF, IRET_AC, IRET_COMPAT, IRET_COMPAT_TF, IRET_CS_RPL0,
	IRET_CS_NULL, IRET_SS_RPL0, IRET_NONCANONICAL, IRET_KINDS
};

static const char *const iret_names[IRET_KINDS] = {
	"same", "tf", "iopl-if", "ac", "compat", "compat-tf", "cs-rpl0", "cs-null", "ss-rpl0",
	"noncanonical",
};

uint64_t iret_probe(uint64_t cs, uint64_t ss, uint64_t flags_xor, uint64_t rip, uint64_t rsp);
void iret_landing(void);
void iret_compat(void);
uint64_t iret_saved_rsp;
__asm__(".pushsection .text\n"
	".globl iret_probe, iret_landing, iret_compat\n"
	"iret_probe:\n\t"
	"pushq %rbx\n\t"			/* a 32-bit mode keeps no upper halves (SDM Vol. 1 3.4.1.1) */
	"pushq %rbp\n\t"
	"movq %rsp, iret_saved_rsp(%rip)\n\t"
	"leaq iret_back64(%rip), %rbx\n\t"	/* the far return's target, for 32-bit code */
	"testq %r8, %r8\n\t"
	"cmovzq %rsp, %r8\n\t"
	"pushq %rsi\n\t"			/* SS */
	"pushq %r8\n\t"			/* RSP */
	"pushfq\n\t"
	"xorq %rdx, (%rsp)\n\t"		/* RFLAGS */
	"pushq %rdi\n\t"			/* CS */
	"leaq iret_landing(%rip), %rax\n\t"
	"testq %rcx, %rcx\n\t"
	"cmovnzq %rcx, %rax\n\t"
	"pushq %rax\n\t"			/* RIP */
	"iretq\n"
	"iret_landing:\n\t"
	"nop\n\t"
	"pushfq\n\t"
	"popq %rax\n\t"
	"pushq %rax\n\t"
	"andq $~0x40000, (%rsp)\n\t"
	"popfq\n\t"
	"jmp iret_return\n\t"
	".code32\n"
	"iret_compat:\n\t"
	"movl $0x23cafe, %eax\n\t"
	"movw %cs, %dx\n\t"
	"pushl $0x33\n\t"
	"pushl %ebx\n\t"
	"lret\n\t"
	".code64\n"
	"iret_back64:\n\t"
	"movl %eax, %eax\n\t"		/* the upper halves are undefined after compatibility mode */
	"movzwl %dx, %edx\n\t"
	"shlq $32, %rdx\n\t"
	"orq %rdx, %rax\n"
	"iret_return:\n\t"
	"movq iret_saved_rsp(%rip), %rsp\n\t"
	"popq %rbp\n\t"
	"popq %rbx\n\t"
	"ret\n"
	".popsection");

/* Instructions a program may try, each with RET after it on the stub page. */
static const struct {
	const char *name;
	unsigned char bytes[4];
	unsigned len;
} insns[] = {
	{ "int3", { 0xcc }, 1 }, { "int1", { 0xf1 }, 1 }, { "ud2", { 0x0f, 0x0b }, 2 },
	{ "into", { 0xce }, 1 }, { "hlt", { 0xf4 }, 1 }, { "cli", { 0xfa }, 1 },
	{ "sti", { 0xfb }, 1 }, { "in", { 0xec }, 1 }, { "out", { 0xee }, 1 },
	{ "rdmsr", { 0x0f, 0x32 }, 2 }, { "wrmsr", { 0x0f, 0x30 }, 2 },
	{ "rdpmc", { 0x0f, 0x33 }, 2 }, { "vmcall", { 0x0f, 0x01, 0xc1 }, 3 },
	{ "vmxon", { 0xf3, 0x0f, 0xc7, 0x30 }, 4 },	/* vmxon (%rax) */
	{ "vmfunc", { 0x0f, 0x01, 0xd4 }, 3 }, { "getsec", { 0x0f, 0x37 }, 2 },
	{ "invd", { 0x0f, 0x08 }, 2 }, { "wbinvd", { 0x0f, 0x09 }, 2 },
	{ "clts", { 0x0f, 0x06 }, 2 }, { "swapgs", { 0x0f, 0x01, 0xf8 }, 3 },
	{ "mov-cr0", { 0x0f, 0x20, 0xc0 }, 3 }, { "mov-dr7", { 0x0f, 0x21, 0xf8 }, 3 },
	{ "smsw", { 0x0f, 0x01, 0xe0 }, 3 }, { "str", { 0x0f, 0x00, 0xc8 }, 3 },
	{ "sldt", { 0x0f, 0x00, 0xc0 }, 3 }, { "xsetbv", { 0x0f, 0x01, 0xd1 }, 3 },
};
#define NR_INSNS	(sizeof(insns) / sizeof(insns[0]))

static sigjmp_buf back;
static volatile struct {
	int sig, code;
	long long trap, err, rip, cs;
} caught;
static unsigned char *stub;	/* one executable page */

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	/* AC stays set in a handler (only DF, RF and TF are cleared): clear it first */
	__asm__ volatile("pushfq; andq %0, (%%rsp); popfq" : : "i"(~EFLAGS_AC) : "cc", "memory");
	caught.sig = sig;
	caught.code = si->si_code;
	caught.trap = uc->uc_mcontext.gregs[REG_TRAPNO];
	caught.err = uc->uc_mcontext.gregs[REG_ERR];
	caught.rip = uc->uc_mcontext.gregs[REG_RIP];
	caught.cs = uc->uc_mcontext.gregs[REG_CSGSFS] & 0xffff;
	siglongjmp(back, 1);
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void run_stub(uint64_t rax, uint64_t rcx)
{
	__asm__ volatile("call *%[stub]" : "+a"(rax), "+c"(rcx)
			 : [stub] "r"(stub)
			 : "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "cc", "memory");
}

static void observe_cpuid(uint32_t leaf, uint32_t sub, uint64_t out[2])
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(sub));
	out[0] = ((uint64_t)b << 32) | a;
	out[1] = ((uint64_t)d << 32) | c;
}

/* POPF with TF, then one instruction: the single-step trap. */
static void observe_popf_tf(void)
{
	__asm__ volatile("pushfq; orq %0, (%%rsp); popfq; nop" : : "i"(EFLAGS_TF) : "cc", "memory");
}

static void observe_pushf_ac(uint64_t out[2])
{
	uint64_t image;

	__asm__ volatile("pushfq; orq %1, (%%rsp); popfq; pushfq; popq %0;"
			 "pushfq; andq %2, (%%rsp); popfq"
			 : "=r"(image) : "i"(EFLAGS_AC), "i"(~EFLAGS_AC) : "cc", "memory");
	out[0] = image & (EFLAGS_AC | EFLAGS_TF);
}

/* An unaligned load with AC set: #AC, with CR0.AM set (Linux sets it). */
static void observe_align_ac(void)
{
	static uint64_t cells[2];
	uint64_t v;

	__asm__ volatile("pushfq; orq %2, (%%rsp); popfq; movq (%1), %0;"
			 "pushfq; andq %3, (%%rsp); popfq"
			 : "=r"(v) : "r"((char *)cells + 1), "i"(EFLAGS_AC), "i"(~EFLAGS_AC)
			 : "cc", "memory");
}

/* A breakpoint of this task's on addr, as perf_event_open's attr takes it; its fd, or -errno. */
static int hwbp_open(uint32_t type, uint64_t addr)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = type;
	attr.bp_addr = addr;
	attr.bp_len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_8;
	attr.sample_period = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.sigtrap = 1;		/* SIGTRAP at the hit, to this thread */
	attr.remove_on_exec = 1;	/* which sigtrap requires */
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/* hwbp_target runs, or the stub touches hwbp_cell, under a breakpoint of the task's; out[0] the open's error. */
static void observe_hwbp(uint32_t which, uint64_t out[2], long long *code_at)
{
	static const uint32_t types[HWBP_KINDS] = { HW_BREAKPOINT_X, HW_BREAKPOINT_W, HW_BREAKPOINT_RW };
	static const unsigned char access[HWBP_KINDS][3] = {
		[HWBP_WRITE] = { 0x88, 0x01, 0xc3 },	/* mov %al, (%rcx); ret */
		[HWBP_RW] = { 0x8a, 0x01, 0xc3 },	/* mov (%rcx), %al; ret */
	};
	int fd;

	*code_at = (long long)(uintptr_t)(which == HWBP_EXEC ? (void *)hwbp_target : (void *)stub);
	memcpy(stub, access[which], sizeof(access[which]));
	fd = hwbp_open(types[which], which == HWBP_EXEC ? (uint64_t)(uintptr_t)hwbp_target
						      : (uint64_t)(uintptr_t)&hwbp_cell);
	if (fd < 0) {
		out[0] = (uint64_t)-fd;
		return;
	}
	caught.rip = *code_at;	/* +0 unless a signal says otherwise */
	if (!sigsetjmp(back, 1)) {
		if (which == HWBP_EXEC)
			hwbp_target();
		else
			run_stub(0, (uint64_t)(uintptr_t)&hwbp_cell);
	}
	close(fd);
}

/*
 * IRETQ through the frame `which` names; out[0] RFLAGS at the landing, or
 * the marker and CS from 32-bit code. Where it raises a signal, the result
 * adds where RIP was from the frame's target, and CS.
 */
static void observe_iret(uint32_t which, uint64_t out[2], long long *code_at)
{
	static uint64_t low_stack[8192] __attribute__((aligned(16)));	/* a signal frame fits */
	uint64_t cs, ss, flags_xor = 0, rip = 0, rsp = 0;

	__asm__("movq %%cs, %0; movq %%ss, %1" : "=r"(cs), "=r"(ss));
	switch (which) {
	case IRET_TF: flags_xor = EFLAGS_TF; break;
	case IRET_IOPL_IF: flags_xor = EFLAGS_IOPL | EFLAGS_IF; break;	/* CPL 3 changes neither */
	case IRET_AC: flags_xor = EFLAGS_AC; break;
	case IRET_COMPAT_TF: flags_xor = EFLAGS_TF; /* fall through */
	case IRET_COMPAT:
		if (((uintptr_t)iret_compat | (uintptr_t)&low_stack[8192]) >> 32) {
			out[0] = ~0ull;	/* above 4 GiB: not run */
			return;
		}
		cs = USER32_CS;
		rip = (uint64_t)(uintptr_t)iret_compat;
		rsp = (uint64_t)(uintptr_t)&low_stack[8192 - 2];
		break;
	case IRET_CS_RPL0: cs = KERNEL_CS; break;
	case IRET_CS_NULL: cs = 0; break;
	case IRET_SS_RPL0: ss = KERNEL_DS; break;
	case IRET_NONCANONICAL: rip = 0x8000000000000000ull; break;
	}
	*code_at = (long long)(rip && which != IRET_NONCANONICAL ? rip : (uint64_t)(uintptr_t)iret_landing);
	caught.rip = *code_at;
	out[0] = iret_probe(cs, ss, flags_xor, rip, rsp);
}

/*
 * Every CPU's debug registers as any breakpoint of this program leaves
 * them: one on hwbp_target installed on each CPU (the kernel writes DR0
 * and DR7 as it schedules the event in), then removed. The kernel keeps
 * the address in DR0 and DR7.GE set, so the transparency scenarios settle
 * the machine so before the first bare run, and the program again at its
 * end: each state's CPL-0 run then starts from the same debug registers.
 */
static int hwbp_settle(void)
{
	int cpu, fd, cpus = online_cpus();

	for (cpu = 0; cpu < cpus; cpu++) {
		if (pin_to_cpu(cpu))
			return -errno;
		fd = hwbp_open(HW_BREAKPOINT_X, (uint64_t)(uintptr_t)hwbp_target);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return 0;
}

int cmd_hwbp_settle(int argc, char **argv)
{
	int err = hwbp_settle();

	(void)argc;
	return err ? report(argv[0], FAIL, "perf_event_open: %s", strerror(-err))
		   : report(argv[0], PASS, "each CPU's DR0 on hwbp_target, DR7.GE set");
}

static void observe(int kind, uint32_t arg, uint32_t sub, uint64_t out[2], long long *code_at)
{
	switch (kind) {
	case U_CPUID: observe_cpuid(arg, sub, out); break;
	case U_INT_N:
		stub[0] = 0xcd, stub[1] = (unsigned char)arg, stub[2] = 0xc3;
		run_stub(0, 0);
		break;
	case U_INSN:
		memcpy(stub, insns[arg].bytes, insns[arg].len);
		stub[insns[arg].len] = 0xc3;
		run_stub((uint64_t)(uintptr_t)&out[1], 0);	/* VMXON's operand: readable memory */
		break;
	case U_PUSHF_AC: observe_pushf_ac(out); break;
	case U_POPF_TF: observe_popf_tf(); break;
	case U_ALIGN_AC: observe_align_ac(); break;
	case U_HWBP: observe_hwbp(arg, out, code_at); break;
	case U_IRET: observe_iret(arg, out, code_at); break;
	}
}

/* The i-th observation of the program: kind, argument, subleaf. */
static void pick(uint64_t seed, uint64_t i, int *kind, uint32_t *arg, uint32_t *sub)
{
	static const uint32_t leaves[] = { 0, 1, 6, 7, 0xb, 0xd, 0x14, 0x40000000, 0x40000001,
					   0x80000000, 0x80000001, 0x80000008 };
	uint64_t r = mix(seed ^ mix(i));

	*sub = 0;
	*kind = (int)(r % 100 < 30 ? U_CPUID : r % 100 < 50 ? U_INT_N : r % 100 < 78 ? U_INSN :
		      r % 100 < 88 ? U_IRET : U_PUSHF_AC + (int)((r >> 8) % 4));
	r >>= 16;
	if (*kind == U_CPUID) {
		*arg = leaves[r % (sizeof(leaves) / sizeof(leaves[0]))];
		*sub = (uint32_t)(r >> 8) % 4;
	} else if (*kind == U_INT_N) {
		*arg = (uint32_t)(r % 256);
		if (*arg == 0x80)	/* the 32-bit system call gate: not an exception */
			*arg = 0x81;
	} else if (*kind == U_INSN) {
		*arg = (uint32_t)(r % NR_INSNS);
	} else if (*kind == U_HWBP) {
		*arg = (uint32_t)(r % HWBP_KINDS);
	} else if (*kind == U_IRET) {
		*arg = (uint32_t)(r % IRET_KINDS);
	} else {
		*arg = 0;
	}
}

static void print_result(FILE *out, int kind, const uint64_t v[2], long long code_at)
{
	if (caught.sig)
		fprintf(out, "sig=%d code=%d trap=%lld err=%#llx", caught.sig, caught.code,
			caught.trap, caught.err);
	else
		fprintf(out, "%#llx,%#llx", (unsigned long long)v[0], (unsigned long long)v[1]);
	if (kind == U_HWBP || (kind == U_IRET && caught.sig))
		fprintf(out, " rip=%+lld", caught.rip - code_at);
	if (kind == U_IRET && caught.sig)
		fprintf(out, " cs=%#llx", caught.cs);
	fputc('\n', out);
}

static int install_handlers(void)
{
	static const int sigs[] = { SIGTRAP, SIGILL, SIGSEGV, SIGBUS, SIGFPE };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -1;
	return 0;
}

int cmd_user_probe(int argc, char **argv)
{
	unsigned long long seed, count;
	int cpus = online_cpus(), settled;
	FILE *out;

	if (argc != 4 || sscanf(argv[1], "%llu", &seed) != 1 || sscanf(argv[2], "%llu", &count) != 1)
		return report(argv[0], FAIL, "usage: user-probe NAME SEED COUNT FILE");
	stub = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	out = fopen(argv[3], "w");
	if (stub == MAP_FAILED || !out || install_handlers())
		return report(argv[0], FAIL, "setup: %s", strerror(errno));
	for (unsigned long long i = 0; i < count; i++) {
		uint64_t v[2] = { 0, 0 };
		long long code_at = 0;
		uint32_t arg, sub;
		int kind;

		if (i % CHUNK == 0 && pin_to_cpu((int)(mix(seed + i / CHUNK) % (uint64_t)cpus)))
			return report(argv[0], FAIL, "cannot pin: %s", strerror(errno));
		pick(seed, i, &kind, &arg, &sub);
		caught.sig = 0;
		if (!sigsetjmp(back, 1))
			observe(kind, arg, sub, v, &code_at);
		fprintf(out, "%llu %s %s ", i, kind_names[kind],
			kind == U_INSN ? insns[arg].name : kind == U_IRET ? iret_names[arg] : "");
		if (kind != U_INSN && kind != U_IRET)
			fprintf(out, "%#x.%u ", arg, sub);
		print_result(out, kind, v, code_at);
	}
	fclose(out);
	settled = hwbp_settle();
	if (settled)
		return report(argv[0], FAIL, "settling the debug registers: %s", strerror(-settled));
	return report(argv[0], PASS, "%llu observations at CPL 3 into %s", count, argv[3]);
}
