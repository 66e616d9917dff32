// SPDX-License-Identifier: GPL-2.0
/*
 * One observation of the CPU at CPL 0 (probe.h), on the CPU it names,
 * interrupts off. Every instruction that may fault runs under TRY
 * (probe.h). What an observation changes (a control register bit, an MSR written with
 * a value the CPU takes) it puts back before it returns.
 */
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/objtool.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/asm.h>
#include <asm/msr-index.h>
#include <asm/processor-flags.h>
#include <asm/special_insns.h>
#include <asm/tsc.h>
#include "probe.h"

static u32 try_rdmsr(u32 msr, u64 *out)
{
	unsigned long ax = 0, dx = 0;
	u32 done = 0;

	asm volatile(TRY("rdmsr") : "+a"(ax), "+d"(dx), [done] "+r"(done) : "c"(msr) : "memory");
	*out = done ? (dx << 32) | (u32)ax : 0;
	return FAULT(ax, done);
}

static u32 try_wrmsr(u32 msr, u64 v)
{
	unsigned long ax = (u32)v;
	u32 done = 0;

	asm volatile(TRY("wrmsr") : "+a"(ax), [done] "+r"(done)
		     : "c"(msr), "d"((u32)(v >> 32)) : "memory");
	return FAULT(ax, done);
}

static unsigned long read_cr(u32 cr)
{
	unsigned long v = 0;

	switch (cr) {
	case 0: asm volatile("mov %%cr0, %0" : "=r"(v)); break;
	case 2: asm volatile("mov %%cr2, %0" : "=r"(v)); break;
	case 3: asm volatile("mov %%cr3, %0" : "=r"(v)); break;
	case 4: asm volatile("mov %%cr4, %0" : "=r"(v)); break;
	case 8: asm volatile("mov %%cr8, %0" : "=r"(v)); break;
	}
	return v;
}

static u32 try_write_cr(u32 cr, unsigned long v)
{
	unsigned long ax = 0;
	u32 done = 0;

	switch (cr) {
	case 0: asm volatile(TRY("mov %[v], %%cr0") : "+a"(ax), [done] "+r"(done) : [v] "r"(v) : "memory"); break;
	case 4: asm volatile(TRY("mov %[v], %%cr4") : "+a"(ax), [done] "+r"(done) : [v] "r"(v) : "memory"); break;
	case 8: asm volatile(TRY("mov %[v], %%cr8") : "+a"(ax), [done] "+r"(done) : [v] "r"(v) : "memory"); break;
	default: return 0;
	}
	return FAULT(ax, done);
}

static unsigned long read_dr(u32 dr)
{
	unsigned long v = 0;

	switch (dr) {
	case 0: asm volatile("mov %%db0, %0" : "=r"(v)); break;
	case 1: asm volatile("mov %%db1, %0" : "=r"(v)); break;
	case 2: asm volatile("mov %%db2, %0" : "=r"(v)); break;
	case 3: asm volatile("mov %%db3, %0" : "=r"(v)); break;
	case 6: asm volatile("mov %%db6, %0" : "=r"(v)); break;
	case 7: asm volatile("mov %%db7, %0" : "=r"(v)); break;
	}
	return v;
}

static u32 try_write_dr(u32 dr, unsigned long v)
{
	unsigned long ax = 0;
	u32 done = 0;

	switch (dr) {
	case 0: asm volatile(TRY("mov %[v], %%db0") : "+a"(ax), [done] "+r"(done) : [v] "r"(v)); break;
	case 1: asm volatile(TRY("mov %[v], %%db1") : "+a"(ax), [done] "+r"(done) : [v] "r"(v)); break;
	case 2: asm volatile(TRY("mov %[v], %%db2") : "+a"(ax), [done] "+r"(done) : [v] "r"(v)); break;
	case 3: asm volatile(TRY("mov %[v], %%db3") : "+a"(ax), [done] "+r"(done) : [v] "r"(v)); break;
	case 6: asm volatile(TRY("mov %[v], %%db6") : "+a"(ax), [done] "+r"(done) : [v] "r"(v)); break;
	case 7: asm volatile(TRY("mov %[v], %%db7") : "+a"(ax), [done] "+r"(done) : [v] "r"(v)); break;
	default: return 0;
	}
	return FAULT(ax, done);
}

/* ---- MSRs ---- */

/* MSRs whose value, written back as read, still changes the machine. */
static bool msr_not_rewritten(u32 msr)
{
	return msr == MSR_IA32_TSC || msr == 0x79 /* BIOS_UPDT_TRIG: loads microcode */ ||
	       msr == MSR_IA32_TSC_DEADLINE || (msr >= 0x800 && msr <= 0x8ff) /* x2APIC: ICR sends */;
}

static void obs_wrmsr_same(u32 msr, struct obs_result *r)
{
	u64 v;

	r->fault = try_rdmsr(msr, &v);
	if (r->fault)
		return;
	if (msr_not_rewritten(msr)) {
		r->v[0] = 1;	/* readable, not written */
		return;
	}
	r->fault = try_wrmsr(msr, v);
	if (!r->fault)
		r->fault = try_rdmsr(msr, &r->v[0]);
}

/* Writes a CPU must refuse, or that probe a bit vtice may own. */
struct bad_write {
	u32 msr;
	u64 (*value)(u64 orig);
};

static u64 set_bit2(u64 v) { return v | BIT_ULL(2); }
static u64 set_bit5(u64 v) { return v | BIT_ULL(5); }
static u64 set_bit63(u64 v) { return v | BIT_ULL(63); }
static u64 set_btf(u64 v) { return v | BIT_ULL(1); }
static u64 set_lbr(u64 v) { return v | BIT_ULL(0); }
static u64 same(u64 v) { return v; }
static u64 zero(u64 v) { return 0; }
static u64 noncanonical(u64 v) { return 0x8000000000000000ull; }
static u64 pat_bad_type(u64 v) { return (v & ~0xffull) | 2; }

static const struct bad_write bad_writes[] = {
	{ MSR_EFER, set_bit2 }, { MSR_EFER, set_bit63 },
	{ MSR_IA32_DEBUGCTLMSR, set_bit63 }, { MSR_IA32_DEBUGCTLMSR, set_bit5 },
	{ MSR_IA32_DEBUGCTLMSR, set_btf }, { MSR_IA32_DEBUGCTLMSR, set_lbr },
	{ MSR_IA32_FEAT_CTL, same }, { MSR_IA32_FEAT_CTL, zero },
	{ 0x480, zero }, { 0x48b, zero }, { 0x491, zero }, { 0x492, zero }, { 0x493, zero },
	{ MSR_LSTAR, noncanonical }, { MSR_CSTAR, noncanonical },
	{ MSR_IA32_SYSENTER_EIP, noncanonical }, { MSR_IA32_SYSENTER_ESP, noncanonical },
	{ MSR_IA32_CR_PAT, pat_bad_type }, { MSR_TSC_AUX, set_bit63 },
	{ 0x38f /* PERF_GLOBAL_CTRL */, set_bit63 }, { 0x6a2 /* S_CET */, set_bit63 },
};

u32 obs_bad_writes(void)
{
	return ARRAY_SIZE(bad_writes);
}

static void obs_wrmsr_bad(u32 which, struct obs_result *r)
{
	const struct bad_write *b = &bad_writes[which % ARRAY_SIZE(bad_writes)];
	u64 orig = 0;
	u32 unreadable = try_rdmsr(b->msr, &orig);

	r->v[1] = unreadable;	/* vector + 1 */
	r->fault = try_wrmsr(b->msr, b->value(orig));
	if (r->fault)
		return;
	try_rdmsr(b->msr, &r->v[0]);
	if (!unreadable)
		try_wrmsr(b->msr, orig);
}

/* ---- control and debug registers ---- */

static void obs_write_cr(u32 cr, u32 tpr, struct obs_result *r)
{
	unsigned long orig = read_cr(cr);

	r->fault = try_write_cr(cr, cr == 8 ? tpr & 15 : orig);
	r->v[0] = read_cr(cr);
	if (cr == 8)
		try_write_cr(cr, orig);
}

static void obs_toggle_cr(u32 cr, u32 bit, struct obs_result *r)
{
	unsigned long orig = read_cr(cr);

	r->fault = try_write_cr(cr, orig ^ BIT_ULL(bit));
	r->v[0] = read_cr(cr);
	if (!r->fault)
		try_write_cr(cr, orig);
}

static void obs_write_dr(u32 dr, u64 val, struct obs_result *r)
{
	u32 reg = dr == 8 ? 7 : dr;
	unsigned long orig = read_dr(reg), v = orig;

	if (dr < 4)
		v = val;
	else if (dr == 8)
		v = orig | BIT_ULL(32);
	r->fault = try_write_dr(reg, v);
	r->v[0] = read_dr(reg);
	if (!r->fault)
		try_write_dr(reg, orig);
}

/* ---- XCRs ---- */

static u32 try_xgetbv(u32 xcr, u64 *out)
{
	unsigned long ax = 0, dx = 0;
	u32 done = 0;

	asm volatile(TRY("xgetbv") : "+a"(ax), "+d"(dx), [done] "+r"(done) : "c"(xcr));
	*out = done ? (dx << 32) | (u32)ax : 0;
	return FAULT(ax, done);
}

static u32 try_xsetbv(u32 xcr, u64 v)
{
	unsigned long ax = (u32)v;
	u32 done = 0;

	asm volatile(TRY("xsetbv") : "+a"(ax), [done] "+r"(done)
		     : "c"(xcr), "d"((u32)(v >> 32)) : "memory");
	return FAULT(ax, done);
}

static void obs_xsetbv(u32 which, struct obs_result *r)
{
	u64 xcr0;

	r->fault = try_xgetbv(0, &xcr0);
	if (r->fault)
		return;
	if (which == 0)
		r->fault = try_xsetbv(0, xcr0);
	else if (which == 1)
		r->fault = try_xsetbv(0, xcr0 & ~1ull);	/* x87 must stay on: #GP */
	else
		r->fault = try_xsetbv(1, xcr0);
	if (which && !r->fault)
		try_xsetbv(0, xcr0);
	try_xgetbv(0, &r->v[0]);
}

/* ---- VMX instructions at CPL 0 ---- */

static void *vmxon_region[NR_CPUS];
static u32 vmcs_revision;		/* from IA32_VMX_BASIC, read bare at load */

#define VMX_TRY(insn, ...) \
	asm volatile(TRY(insn "\n\tpushf\n\tpop %[fl]") \
		     : "+a"(ax), [done] "+r"(done), [fl] "+r"(fl) : __VA_ARGS__ : "cc", "memory")

/* After VMXON with CR4.VMXE set the way KVM does it: the flags, or the fault. */
static void obs_vmxon_vmxe(struct obs_result *r)
{
	unsigned long cr4 = read_cr(4), ax = 0, fl = 0;
	u64 pa = virt_to_phys(vmxon_region[smp_processor_id()]);
	u32 done = 0;

	r->fault = try_write_cr(4, cr4 | X86_CR4_VMXE);
	if (r->fault)
		return;
	r->v[1] = read_cr(4) & X86_CR4_VMXE;
	VMX_TRY("vmxon %[pa]", [pa] "m"(pa));
	r->fault = FAULT(ax, done);
	r->v[0] = fl & (X86_EFLAGS_CF | X86_EFLAGS_ZF);
	if (done && !(fl & (X86_EFLAGS_CF | X86_EFLAGS_ZF)))
		asm volatile("vmxoff" ::: "cc", "memory");
	try_write_cr(4, cr4);
}

static void obs_vmx(u32 which, struct obs_result *r)
{
	u64 pa = virt_to_phys(vmxon_region[smp_processor_id()]), desc[2] = { 0, 0 }, type = 2;
	unsigned long ax = 0, fl = 0, field = 0x681e, val = 0;
	u32 done = 0;

	switch (which) {
	case VMX_VMXON: VMX_TRY("vmxon %[pa]", [pa] "m"(pa)); break;
	case VMX_VMXON_VMXE: obs_vmxon_vmxe(r); return;
	case VMX_VMCALL: VMX_TRY("vmcall", "b"(0ul)); break;
	case VMX_VMFUNC: VMX_TRY("vmfunc", "c"(0ul)); break;
	case VMX_INVEPT: VMX_TRY("invept %[d], %[t]", [d] "m"(desc), [t] "r"(type)); break;
	case VMX_INVVPID: VMX_TRY("invvpid %[d], %[t]", [d] "m"(desc), [t] "r"(type)); break;
	case VMX_VMREAD: VMX_TRY("vmread %[f], %[v]", [f] "r"(field), [v] "m"(val)); break;
	case VMX_VMWRITE: VMX_TRY("vmwrite %[v], %[f]", [f] "r"(field), [v] "r"(val)); break;
	case VMX_VMPTRST: VMX_TRY("vmptrst %[p]", [p] "m"(pa)); break;
	case VMX_VMPTRLD: VMX_TRY("vmptrld %[p]", [p] "m"(pa)); break;
	case VMX_VMCLEAR: VMX_TRY("vmclear %[p]", [p] "m"(pa)); break;
	case VMX_VMLAUNCH: VMX_TRY("vmlaunch", "b"(0ul)); break;
	case VMX_VMRESUME: VMX_TRY("vmresume", "b"(0ul)); break;
	case VMX_VMXOFF: VMX_TRY("vmxoff", "b"(0ul)); break;
	case VMX_GETSEC: VMX_TRY(".byte 0x0f, 0x37", "b"(0ul)); break;	/* EAX 0: CAPABILITIES */
	default: return;
	}
	r->fault = FAULT(ax, done);
	r->v[0] = done ? fl & (X86_EFLAGS_CF | X86_EFLAGS_ZF) : 0;
}

/* ---- the rest ---- */

static void obs_invd(struct obs_result *r)
{
	static u64 cell ____cacheline_aligned;

	WRITE_ONCE(cell, 1);
	clflush(&cell);
	WRITE_ONCE(cell, 2);
	asm volatile("invd" ::: "memory");
	r->v[0] = READ_ONCE(cell);
}

static u32 try_rdpmc(u32 counter, u64 *out)
{
	unsigned long ax = 0, dx = 0;
	u32 done = 0;

	asm volatile(TRY("rdpmc") : "+a"(ax), "+d"(dx), [done] "+r"(done) : "c"(counter));
	*out = done ? (dx << 32) | (u32)ax : 0;
	return FAULT(ax, done);
}

static u32 try_rdtscp(u64 *aux)
{
	unsigned long ax = 0, cx = 0, dx = 0;
	u32 done = 0;

	asm volatile(TRY("rdtscp") : "+a"(ax), "+c"(cx), "+d"(dx), [done] "+r"(done));
	*aux = done ? (u32)cx : 0;
	return FAULT(ax, done);
}

static u32 try_ud2(void)
{
	unsigned long ax = 0;
	u32 done = 0;

	/* objtool takes UD2 for a dead end: the fixup makes what follows reachable */
	asm volatile("1: ud2\n\t" ASM_REACHABLE "movl $1, %[done]\n2:\n" _ASM_EXTABLE_FAULT(1b, 2b)
		     : "+a"(ax), [done] "+r"(done));
	return FAULT(ax, done);
}

static void obs_cpuid(u32 leaf, u32 sub, struct obs_result *r)
{
	u32 a, b, c, d;

	cpuid_count(leaf, sub, &a, &b, &c, &d);
	r->v[0] = ((u64)b << 32) | a;
	r->v[1] = ((u64)d << 32) | c;
}

static void obs_peek(unsigned long addr, struct obs_result *r)
{
	if (copy_from_kernel_nofault(r->v, (void *)addr, sizeof(r->v)))
		r->fault = 14 + 1;
}

u64 obs_run(const struct obs *o, struct obs_result *r, const unsigned long *peek)
{
	u64 t0 = rdtsc_ordered();

	memset(r, 0, sizeof(*r));
	switch (o->kind) {
	case OBS_CPUID: obs_cpuid(o->arg, o->sub, r); break;
	case OBS_RDMSR: r->fault = try_rdmsr(o->arg, &r->v[0]); break;
	case OBS_WRMSR_SAME: obs_wrmsr_same(o->arg, r); break;
	case OBS_WRMSR_BAD: obs_wrmsr_bad(o->arg, r); break;
	case OBS_READ_CR: r->v[0] = read_cr(o->arg); break;
	case OBS_WRITE_CR: obs_write_cr(o->arg, o->sub, r); break;
	case OBS_TOGGLE_CR: obs_toggle_cr(o->arg, o->sub, r); break;
	case OBS_READ_DR: r->v[0] = read_dr(o->arg); break;
	case OBS_WRITE_DR: obs_write_dr(o->arg, o->val, r); break;
	case OBS_XGETBV: r->fault = try_xgetbv(o->arg, &r->v[0]); break;
	case OBS_XSETBV: obs_xsetbv(o->arg, r); break;
	case OBS_VMX: obs_vmx(o->arg, r); break;
	case OBS_UD2: r->fault = try_ud2(); break;
	case OBS_RDPMC: r->fault = try_rdpmc(o->arg, &r->v[0]); break;
	case OBS_RDTSCP: r->fault = try_rdtscp(&r->v[0]); break;
	case OBS_INVD: obs_invd(r); break;
	case OBS_PEEK: obs_peek(peek[o->arg], r); break;
	case OBS_DEBUG: obs_debug(o->arg, r); break;
	case OBS_ALIAS: obs_alias(peek[o->arg], o->arg, o->sub, r); break;
	case OBS_NMI: obs_nmi(r); break;
	case OBS_IRET: obs_iret(o->arg, r); break;
	case OBS_SMC: obs_smc((u32)o->val, r); break;
	}
	return rdtsc_ordered() - t0;
}

/* The bare answers the rig holds against the SDM (tests/transparency/bochs-scenarios.sh), in the kernel's log. */
void obs_log_bare(const struct obs *o, const struct obs_result *r, const unsigned long *peek)
{
	switch (o->kind) {
	case OBS_DEBUG: obs_debug_log(o->arg, r); break;
	case OBS_ALIAS: obs_alias_log(peek[o->arg], o->sub, r); break;
	case OBS_NMI: obs_nmi_log(r); break;
	case OBS_IRET: obs_iret_log(o->arg, r); break;
	case OBS_SMC: obs_smc_log((u32)o->val, r); break;
	default: break;
	}
}

/*
 * Values that are not the CPU's but the moment's: performance counters, and
 * what belongs to whichever task ran last on the CPU the probe interrupts
 * (its page tables in CR3, its last fault address in CR2, its user FS and
 * GS bases, which a switch to a kernel thread leaves in place), and XCR1
 * (XINUSE: which state components that task's code left in use). The bare
 * runs cannot be relied on to catch them all (XCR1 slipped through them).
 */
bool obs_is_volatile(const struct obs *o)
{
	switch (o->kind) {
	case OBS_RDPMC:
		return true;
	case OBS_READ_CR:
		return o->arg == 2 || o->arg == 3;
	case OBS_XGETBV:
		return o->arg == 1;
	case OBS_RDMSR:
	case OBS_WRMSR_SAME:
		return o->arg == MSR_FS_BASE || o->arg == MSR_KERNEL_GS_BASE;
	default:
		return false;
	}
}

int obs_prepare(unsigned int nr_cpus, const unsigned long *peek, unsigned int nr_peek)
{
	unsigned int cpu;
	u64 basic = 0;
	int err = obs_debug_prepare();

	if (!err)
		err = obs_nmi_prepare();
	if (!err)
		err = obs_alias_prepare(peek, nr_peek);
	if (!err)
		err = obs_smc_prepare();
	if (err)
		return err;
	try_rdmsr(MSR_IA32_VMX_BASIC, &basic);
	vmcs_revision = (u32)basic & 0x7fffffff;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		vmxon_region[cpu] = (void *)get_zeroed_page(GFP_KERNEL);
		if (!vmxon_region[cpu])
			return -ENOMEM;
		*(u32 *)vmxon_region[cpu] = vmcs_revision;
	}
	return 0;
}

void obs_release(void)
{
	unsigned int cpu;

	obs_debug_release();
	obs_nmi_release();
	obs_alias_release();
	obs_smc_release();
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		free_page((unsigned long)vmxon_region[cpu]);
		vmxon_region[cpu] = NULL;
	}
}

static const char *const kind_names[OBS_KINDS] = {
	[OBS_CPUID] = "cpuid", [OBS_RDMSR] = "rdmsr", [OBS_WRMSR_SAME] = "wrmsr-same",
	[OBS_WRMSR_BAD] = "wrmsr-bad", [OBS_READ_CR] = "read-cr", [OBS_WRITE_CR] = "write-cr",
	[OBS_TOGGLE_CR] = "toggle-cr", [OBS_READ_DR] = "read-dr", [OBS_WRITE_DR] = "write-dr",
	[OBS_XGETBV] = "xgetbv", [OBS_XSETBV] = "xsetbv", [OBS_VMX] = "vmx", [OBS_UD2] = "ud2",
	[OBS_RDPMC] = "rdpmc", [OBS_RDTSCP] = "rdtscp", [OBS_INVD] = "invd", [OBS_PEEK] = "peek",
	[OBS_DEBUG] = "debug", [OBS_ALIAS] = "alias", [OBS_NMI] = "nmi", [OBS_IRET] = "iret",
	[OBS_SMC] = "smc",
};

const char *obs_kind_name(u8 kind)
{
	return kind < OBS_KINDS ? kind_names[kind] : "?";
}

static const char *const vmx_names[VMX_KINDS] = {
	"vmxon", "vmxon-vmxe", "vmcall", "vmfunc", "invept", "invvpid", "vmread", "vmwrite",
	"vmptrst", "vmptrld", "vmclear", "vmlaunch", "vmresume", "vmxoff", "getsec",
};

const char *obs_vmx_name(u32 which)
{
	return which < VMX_KINDS ? vmx_names[which] : "?";
}

static const char *const debug_names[DEBUG_KINDS] = {
	"tf", "gd", "data-write", "icebp", "int3", "int-1", "iret-tf",
};

const char *obs_debug_name(u32 which)
{
	return which < DEBUG_KINDS ? debug_names[which] : "?";
}
