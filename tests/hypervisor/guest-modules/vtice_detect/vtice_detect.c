// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvdetect scenario: what anti-debug code
 * in a kernel looks at, read from CPL 0 on every CPU, one line per probe:
 *
 *   vtice_detect: cpuN NAME=VALUE
 *
 * The scenario loads it on the bare machine and again under vtice and
 * compares the lines: a probe whose value changed is one the kernel can
 * use to detect the hypervisor (docs/transparency.md). CPUID timing is
 * printed apart: it is expected to change, and is reported, not hidden.
 * peek= names kernel addresses whose first 16 bytes it also reads at
 * CPL 0 (a hidden breakpoint's code, a watched variable):
 *
 *   vtice_detect: all peek.ADDR=BYTES
 */
#include <linux/module.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/desc.h>
#include <asm/msr.h>
#include <asm/processor.h>
#include <asm/special_insns.h>
#include <asm/tlbflush.h>

#define CPUID_LOOPS	1000
#define PEEK_BYTES	16

static unsigned long peek[4];
static int nr_peek;
module_param_array(peek, ulong, &nr_peek, 0444);
MODULE_PARM_DESC(peek, "kernel addresses to read 16 bytes from");

static void probe_cpuid(unsigned int cpu, u32 leaf)
{
	u32 a, b, c, d;

	cpuid_count(leaf, 0, &a, &b, &c, &d);
	if (leaf == 1)	/* the APIC ID and the CLFLUSH count differ by CPU, not by vtice */
		pr_info("vtice_detect: cpu%u cpuid.1.ecx=%08x\n", cpu, c);
	else
		pr_info("vtice_detect: cpu%u cpuid.%x=%08x.%08x.%08x.%08x\n", cpu, leaf, a, b, c, d);
}

static void probe_msr(unsigned int cpu, const char *name, u32 msr)
{
	u64 v;

	if (rdmsrl_safe(msr, &v))
		pr_info("vtice_detect: cpu%u %s=#GP\n", cpu, name);
	else
		pr_info("vtice_detect: cpu%u %s=%llx\n", cpu, name, v);
}

#define READ_DR(n) ({ unsigned long v; asm volatile("mov %%db" #n ", %0" : "=r"(v)); v; })

static void probe_tables(unsigned int cpu)
{
	struct desc_ptr idt, gdt;

	store_idt(&idt);
	native_store_gdt(&gdt);
	pr_info("vtice_detect: cpu%u idt=%lx/%x gdt=%lx/%x\n", cpu, idt.address, idt.size,
		gdt.address, gdt.size);
	pr_info("vtice_detect: cpu%u cr0=%lx cr4=%lx dr7=%lx\n", cpu, read_cr0(),
		__read_cr4(), READ_DR(7));
	pr_info("vtice_detect: cpu%u dr0=%lx dr1=%lx dr2=%lx dr3=%lx dr6=%lx\n", cpu, READ_DR(0),
		READ_DR(1), READ_DR(2), READ_DR(3), READ_DR(6));
}

static void probe_peeks(void)
{
	u8 buf[PEEK_BYTES];
	int i;

	for (i = 0; i < nr_peek; i++) {
		if (copy_from_kernel_nofault(buf, (void *)peek[i], sizeof(buf)))
			pr_info("vtice_detect: all peek.%lx=fault\n", peek[i]);
		else
			pr_info("vtice_detect: all peek.%lx=%*phN\n", peek[i], PEEK_BYTES, buf);
	}
}

static void probe_cpuid_time(unsigned int cpu)
{
	u32 a, b, c, d;
	u64 t0, t1;
	int i;

	t0 = rdtsc_ordered();
	for (i = 0; i < CPUID_LOOPS; i++)
		cpuid_count(0, 0, &a, &b, &c, &d);
	t1 = rdtsc_ordered();
	pr_info("vtice_detect: cpu%u timing cpuid_tsc=%llu\n", cpu, (t1 - t0) / CPUID_LOOPS);
}

static void probe_cpu(void *unused)
{
	unsigned int cpu = smp_processor_id();

	probe_cpuid(cpu, 1);
	probe_cpuid(cpu, 0x40000000);
	probe_cpuid(cpu, 0x40000001);
	probe_cpuid(cpu, 0x400000ff);
	probe_tables(cpu);
	probe_msr(cpu, "lstar", MSR_LSTAR);
	probe_msr(cpu, "star", MSR_STAR);
	probe_msr(cpu, "sysenter_cs", MSR_IA32_SYSENTER_CS);
	probe_msr(cpu, "sysenter_eip", MSR_IA32_SYSENTER_EIP);
	probe_msr(cpu, "efer", MSR_EFER);
	probe_msr(cpu, "debugctl", MSR_IA32_DEBUGCTLMSR);
	probe_msr(cpu, "feature_control", MSR_IA32_FEAT_CTL);
	probe_msr(cpu, "vmx_basic", MSR_IA32_VMX_BASIC);
	probe_cpuid_time(cpu);
}

static int __init vtice_detect_init(void)
{
	unsigned int cpu;

	/* One CPU at a time, so the lines of one CPU stay together. */
	for_each_online_cpu(cpu)
		smp_call_function_single(cpu, probe_cpu, NULL, 1);
	probe_peeks();
	return 0;
}

static void __exit vtice_detect_exit(void)
{
}

module_init(vtice_detect_init);
module_exit(vtice_detect_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: what anti-debug code reads, on every CPU");
