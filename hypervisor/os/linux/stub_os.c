// SPDX-License-Identifier: GPL-2.0
/*
 * Linux side of the debug stub: the module parameters' UART handed to
 * hypervisor/debug/stub.c, the RAM map it may read, the NMI IPI that parks
 * a CPU, and the break-in VMCALL behind VTICE_IOC_BREAK and debug_wait.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/pm_qos.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/tsc.h>

#include <vtice/vmcall.h>
#include "compat.h"
#include "vtice_linux.h"
#include "../../debug/dbg_os.h"
#include "../../debug/stop.h"
#include "../../debug/stub.h"

static bool vt_stub_on;

/*
 * The stub reads its line, and the lockup watch looks, when the
 * VMX-preemption timer fires, and that timer counts only in C0, C1 and C2
 * (SDM Vol. 3C 26.5.1): a CPU idling deeper would not notice a break-in
 * until some interrupt woke it. While the stub is on, a CPU latency request
 * keeps cpuidle to states that wake within this bound: C1 and C1E in every
 * intel_idle table (the shallowest deeper state, Nehalem's C3, takes 20 us).
 */
#define VT_STUB_IDLE_LATENCY_US	10
static struct pm_qos_request vt_stub_idle_qos;

u64 vt_os_tsc_khz(void)
{
	return tsc_khz ? tsc_khz : 1000000;	/* uncalibrated: assume 1 GHz */
}

typedef unsigned long (*vt_lookup_fn)(const char *name);

/*
 * The call through a pointer is an indirect branch, which on a kernel with
 * IBT must land on an ENDBR: but the kprobe's address lies past the
 * function's ENDBR, and the kernel seals (NOPs out) the ENDBR of functions
 * it never calls indirectly, as it does this one. So the CPU's ENDBR
 * tracking is off for this one call (IA32_S_CET.ENDBR_EN, SDM Vol. 1
 * 18.3.1), with interrupts off so that the MSR written back is this CPU's.
 */
static unsigned long vt_call_unexported(vt_lookup_fn fn, const char *name)
{
#ifdef CONFIG_X86_KERNEL_IBT
	unsigned long flags, addr;
	u64 s_cet = 0;
	bool ibt = vt_kernel_ibt_on();

	local_irq_save(flags);
	if (ibt) {
		vt_kernel_rdmsr(MSR_IA32_S_CET, s_cet);
		vt_kernel_wrmsr(MSR_IA32_S_CET, s_cet & ~CET_ENDBR_EN);
	}
	addr = fn(name);
	if (ibt)
		vt_kernel_wrmsr(MSR_IA32_S_CET, s_cet);
	local_irq_restore(flags);
	return addr;
#else
	return fn(name);
#endif
}

/*
 * kallsyms_lookup_name() is not exported since Linux 5.7; a kprobe resolves
 * a name, so one on kallsyms_lookup_name itself yields its address. Called
 * once, at load, before any CPU is virtualized.
 */
static unsigned long vt_lookup_symbol(const char *name)
{
	static vt_lookup_fn lookup;
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

	if (!lookup) {
		if (register_kprobe(&kp))
			return 0;
		lookup = (vt_lookup_fn)kp.addr;
		unregister_kprobe(&kp);
	}
	return vt_call_unexported(lookup, name);
}

/*
 * panic() for every panic; __die() for every oops (page faults, BUG(),
 * general protection), after the kernel printed what went wrong ("BUG:
 * kernel NULL pointer dereference") and before the register dump.
 */
static u32 vt_collect_guards(struct vt_crash_guard *guards)
{
	static const char *const names[] = { "panic", "__die" };
	u32 i, n = 0;

	for (i = 0; i < ARRAY_SIZE(names) && n < VT_STUB_MAX_GUARDS; i++) {
		unsigned long addr = vt_lookup_symbol(names[i]);

		/* __pa_symbol() holds only for the kernel image's own mapping. */
		if (addr < __START_KERNEL_map || addr >= MODULES_VADDR) {
			vt_note_warn("crash guard: %s not found in the kernel's text; not guarded\n", names[i]);
			continue;
		}
		guards[n].name = names[i];
		guards[n].fatal = i == 0;	/* panic */
		guards[n].gva = addr;
		guards[n].gpa = __pa_symbol(addr);
		n++;
	}
	return n;
}

int vt_linux_stub_init(const struct vt_linux_stub_params *params)
{
	struct vt_crash_guard guards[VT_STUB_MAX_GUARDS];
	struct vt_stub_config cfg = {
		.port = params->port, .baud = params->baud,
		.vcpus = vt_mod.vcpu_state, .nr_cpus = nr_cpu_ids,
		.guards = guards, .lockup_secs = params->lockup_secs, .step_tf = params->step_tf,
		.trace_records = params->trace.records, .current_task = vt_linux_task_pointers(),
		.trace_mode = params->trace.mode, .trace_event_gap = params->trace.event_gap,
	};
	int ret;

	BUILD_BUG_ON(VT_STOP_MAX_CPUS > VT_LINUX_TASK_CPUS);
	if (nr_cpu_ids > VT_STOP_MAX_CPUS)
		vt_note_warn("only CPUs below %u can be debugged\n", VT_STOP_MAX_CPUS);
	if (params->crash_stop)
		cfg.nr_guards = vt_collect_guards(guards);
	ret = vt_stub_init(vt_mod.hv, &cfg);
	vt_stub_on = !ret;
	/* not in a stealth load: the kernel's latency limit would show it */
	if (vt_stub_on && !vt_stealth)
		cpu_latency_qos_add_request(&vt_stub_idle_qos, VT_STUB_IDLE_LATENCY_US);
	return ret;
}

void vt_linux_stub_fini(void)
{
	if (cpu_latency_qos_request_active(&vt_stub_idle_qos))
		cpu_latency_qos_remove_request(&vt_stub_idle_qos);
	if (vt_stub_on)
		vt_stub_fini();
	vt_stub_on = false;
}

/* Stop the machine from here; returns when the debugger resumes it. */
int vt_linux_debug_break(u64 *stopped_ns)
{
	struct vt_vcpu *vcpu;
	u64 tsc = 0, status;
	int cpu;

	if (!vt_stub_on)
		return -ENODEV;
	cpu = get_cpu();
	vcpu = READ_ONCE(vt_mod.vcpus[cpu]);
	status = vcpu ? vt_vcpu_vmcall(vcpu, VTICE_VMCALL_DEBUG_BREAK, 0, &tsc) : ~0ull;
	put_cpu();
	if (status != VTICE_VMCALL_OK)
		return -EIO;
	*stopped_ns = mul_u64_u32_div(tsc, 1000000, (u32)vt_os_tsc_khz());
	return 0;
}
