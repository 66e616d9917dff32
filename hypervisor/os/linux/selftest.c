// SPDX-License-Identifier: GPL-2.0
/*
 * selftest=1: right after bring-up, act on every CPU like hostile or
 * curious kernel code (CPL 0) would, and check the hypervisor answers as the
 * bare CPU did, VMX included, but for VMXON, which it refuses (exit_vmx.c). Faults are caught through exception-table fixups,
 * so a wrong answer is a log line, never an oops. Only runs while the CPU is
 * virtualized: on bare hardware VMXON or INVD here would mean something else.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/atomic.h>
#include <linux/smp.h>
#include <asm/asm.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include <vtice/ioctl.h>
#include <vtice/vmcall.h>
#include "compat.h"
#include "vtice_linux.h"

struct vt_selftest {
	atomic_t cpus;
	atomic_t failures;
};

/* VMCALL at CPL 0; true if it raised an exception (#UD expected for bad keys). */
static bool vt_vmcall_faults(u64 func, u64 key, u64 *rdx)
{
	u64 rax = func, rcx = key, out = 0;
	int faulted = 1;

	asm volatile("1: vmcall\n\t"
		     "xor %k[f], %k[f]\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : [f] "+r"(faulted), "+a"(rax), "+c"(rcx), "+d"(out)
		     : : "r8", "r9", "memory", "cc");
	*rdx = out;
	return faulted;
}

static bool vt_vmxon_faults(void)
{
	u64 pa = 0;
	int faulted = 1;

	asm volatile("1: vmxon %[pa]\n\t"
		     "xor %k[f], %k[f]\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : [f] "+r"(faulted) : [pa] "m"(pa) : "memory", "cc");
	return faulted;
}

/* MOV to a control register ("mov %[v], %%crN"); true if it faulted. */
#define VT_CR_WRITE_FAULTS(insn, value) ({				\
	int faulted = 1;						\
	asm volatile("1: " insn "\n\t"					\
		     "xor %k[f], %k[f]\n"				\
		     "2:\n"						\
		     _ASM_EXTABLE(1b, 2b)				\
		     : [f] "+r"(faulted) : [v] "r"(value) : "memory");	\
	faulted != 0;							\
})

static bool vt_cr4_write_faults(unsigned long cr4)
{
	return VT_CR_WRITE_FAULTS("mov %[v], %%cr4", cr4);
}

static bool vt_cr0_write_faults(unsigned long cr0)
{
	return VT_CR_WRITE_FAULTS("mov %[v], %%cr0", cr0);
}

static bool vt_xsetbv_faults(u64 value)
{
	int faulted = 1;

	asm volatile("1: xsetbv\n\t"
		     "xor %k[f], %k[f]\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : [f] "+r"(faulted)
		     : "c"(0), "a"((u32)value), "d"((u32)(value >> 32)) : "memory");
	return faulted;
}

static u64 vt_xgetbv0(void)
{
	u32 lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((u64)hi << 32) | lo;
}

static unsigned long vt_read_cr4_raw(void)
{
	unsigned long cr4;

	asm volatile("mov %%cr4, %0" : "=r"(cr4));
	return cr4;
}

#define VT_CHECK(st, cond, what)					\
	do {								\
		if (!(cond)) {						\
			atomic_inc(&(st)->failures);			\
			pr_err("selftest cpu %u: %s\n", smp_processor_id(), what); \
		}							\
	} while (0)

static void vt_selftest_vmcall(struct vt_selftest *st)
{
	u64 key = vt_mod.hv->key, rdx = 0;

	VT_CHECK(st, !vt_vmcall_faults(VTICE_VMCALL_PING, key, &rdx) && rdx == VTICE_VMCALL_PONG,
		 "VMCALL PING with the key not answered");
	VT_CHECK(st, vt_vmcall_faults(VTICE_VMCALL_PING, key ^ 1, &rdx),
		 "VMCALL with a wrong key did not raise #UD");
	VT_CHECK(st, vt_vmcall_faults(VTICE_VMCALL_DEVIRTUALIZE, 0, &rdx),
		 "VMCALL DEVIRTUALIZE with key 0 did not raise #UD");
}

static void vt_selftest_stealth(struct vt_selftest *st)
{
	unsigned long cr4 = vt_read_cr4_raw();
	u64 v;

	VT_CHECK(st, cpuid_ecx(1) & BIT(5), "CPUID.1:ECX.VMX hidden (the kernel saw it at boot)");
	/* Under a parent hypervisor the bit was set before vtice came (parent.c). */
	VT_CHECK(st, !(cpuid_ecx(1) & BIT(31)) || vt_mod.hv->parent != VT_PARENT_NONE,
		 "CPUID hypervisor bit set");
	VT_CHECK(st, !(cr4 & X86_CR4_VMXE), "CR4.VMXE visible");
	VT_CHECK(st, vt_vmxon_faults(), "VMXON with CR4.VMXE clear did not fault");
	VT_CHECK(st, !vt_cr4_write_faults(cr4 | X86_CR4_VMXE) && (vt_read_cr4_raw() & X86_CR4_VMXE),
		 "CR4.VMXE cannot be set and read back");
	VT_CHECK(st, vt_vmxon_faults(), "VMXON was not refused");
	VT_CHECK(st, !vt_cr4_write_faults(cr4) && vt_read_cr4_raw() == cr4, "CR4 did not go back");
	VT_CHECK(st, vt_kernel_rdmsr_safe(MSR_IA32_VMX_BASIC, &v) == 0 && v == vt_mod.hv->caps.basic,
		 "IA32_VMX_BASIC does not read as on the bare CPU");
	VT_CHECK(st, vt_kernel_rdmsr_safe(MSR_IA32_FEAT_CTL, &v) == 0 &&
		 (v & FEAT_CTL_VMX_ENABLED_OUTSIDE_SMX), "IA32_FEATURE_CONTROL shows VMX disabled");
}

/* CR0.NE is fixed to 1 in VMX operation, yet the kernel may clear it (exit_cr.c). */
static void vt_selftest_cr0(struct vt_selftest *st)
{
	unsigned long cr0 = read_cr0();

	VT_CHECK(st, !vt_cr0_write_faults(cr0 & ~X86_CR0_NE) && !(read_cr0() & X86_CR0_NE),
		 "CR0.NE cannot be cleared and read back");
	VT_CHECK(st, !vt_cr0_write_faults(cr0) && read_cr0() == cr0, "CR0 did not go back");
}

/* XSETBV exits unconditionally; with CR4.OSXSAVE clear it must #UD. */
static void vt_selftest_xsetbv(struct vt_selftest *st)
{
	u64 xcr0;

	if (!(cpuid_ecx(1) & BIT(27))) {	/* CPUID.1:ECX.OSXSAVE mirrors CR4 */
		VT_CHECK(st, vt_xsetbv_faults(1), "XSETBV with CR4.OSXSAVE clear did not fault");
		return;
	}
	xcr0 = vt_xgetbv0();
	VT_CHECK(st, !vt_xsetbv_faults(xcr0) && vt_xgetbv0() == xcr0,
		 "XSETBV of the current XCR0 failed");
	VT_CHECK(st, vt_xsetbv_faults(0), "XSETBV without x87 did not #GP");
}

static void vt_selftest_instructions(struct vt_selftest *st)
{
	u64 orig, back = 0;
	bool btf = vt_mod.hv->caps.flags & VTICE_CAP_DEBUGCTL_BTF;

	vt_selftest_xsetbv(st);
	asm volatile("invd" ::: "memory");	/* emulated as WBINVD: must not lose data */
	if (vt_kernel_rdmsr_safe(MSR_IA32_DEBUGCTLMSR, &orig))
		return;
	VT_CHECK(st, !vt_kernel_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, orig | DEBUGCTLMSR_BTF) &&
		 !vt_kernel_rdmsr_safe(MSR_IA32_DEBUGCTLMSR, &back) && !!(back & DEBUGCTLMSR_BTF) == btf,
		 "DEBUGCTL.BTF does not read back as on the bare CPU");
	vt_kernel_wrmsr_safe(MSR_IA32_DEBUGCTLMSR, orig);
}

static void vt_selftest_cpu(void *data)
{
	struct vt_selftest *st = data;
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());

	if (!vcpu)
		return;
	atomic_inc(&st->cpus);
	vt_selftest_vmcall(st);
	vt_selftest_stealth(st);
	vt_selftest_cr0(st);
	vt_selftest_instructions(st);
}

int vt_selftest(void)
{
	struct vt_selftest st = { ATOMIC_INIT(0), ATOMIC_INIT(0) };

	on_each_cpu(vt_selftest_cpu, &st, 1);
	vt_note("selftest: %d CPUs, %d failures\n", atomic_read(&st.cpus),
		atomic_read(&st.failures));
	return atomic_read(&st.failures) ? -EIO : 0;
}
