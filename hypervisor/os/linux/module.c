// SPDX-License-Identifier: GPL-2.0
/*
 * vtice module: init/exit and per-CPU bring-up through CPU hotplug.
 *
 * cpuhp_setup_state() runs vt_cpu_online() on every online CPU, on that CPU
 * (CPUHP_AP_ONLINE_DYN callbacks run in the CPU's hotplug thread); if one
 * fails, the core runs vt_cpu_offline() on those already done and the
 * module refuses to load. CPUs onlined later are virtualized the same way;
 * a CPU going offline is devirtualized first.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/irqflags.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>

#include <vtice/ioctl.h>
#include "vtice_linux.h"
#include "../../debug/path_trace.h"
#include "../../core/os.h"

struct vt_module vt_mod;
static enum cpuhp_state vt_hp_state;

static unsigned int ring_records = 4096;
module_param(ring_records, uint, 0444);
MODULE_PARM_DESC(ring_records, "records per CPU ring (power of two, 64..1048576)");

static bool virtualize = true;
module_param(virtualize, bool, 0444);
MODULE_PARM_DESC(virtualize, "virtualize the CPUs (0: only create /dev/vtice, for rig bring-up)");

static bool selftest;
module_param(selftest, bool, 0444);
MODULE_PARM_DESC(selftest, "after bring-up, check from CPL 0 on every CPU that VMX stays hidden");

static ushort debug_port;
module_param(debug_port, ushort, 0444);
MODULE_PARM_DESC(debug_port, "I/O base of the 16550 UART the GDB stub owns, e.g. 0x2f8 (0: no stub)");

static uint debug_baud = 115200;
module_param(debug_baud, uint, 0444);
MODULE_PARM_DESC(debug_baud, "the stub's line speed (a divisor of 115200)");

static bool debug_wait;
module_param(debug_wait, bool, 0444);
MODULE_PARM_DESC(debug_wait, "right after loading, stop every CPU until a debugger continues");

static bool crash_stop = true;
module_param(crash_stop, bool, 0444);
MODULE_PARM_DESC(crash_stop, "with debug_port: stop every CPU in the stub when the kernel panics or oopses "
		 "(hidden breakpoints on panic and __die; each fires once)");

static unsigned int lockup_secs = 10;
module_param(lockup_secs, uint, 0444);
MODULE_PARM_DESC(lockup_secs, "with debug_port: stop every CPU in the stub when one runs this many seconds "
		 "with interrupts off, as the kernel's hard-lockup detector would report it (0 = never; default 10)");

static bool step_tf;
module_param(step_tf, bool, 0444);
MODULE_PARM_DESC(step_tf, "with debug_port: single-step with RFLAGS.TF and #DB even where the CPU has "
		 "the monitor trap flag (the fallback for CPUs without it; hidden from the guest)");

static char *trace_mode = "auto";
module_param(trace_mode, charp, 0444);
MODULE_PARM_DESC(trace_mode, "how the branch tracer steps a CPU: auto (TF with DEBUGCTL.BTF, one exit per "
		 "taken branch, where the CPU honours BTF; else the monitor trap flag), mtf, or tf (TF steps, "
		 "with BTF where honoured; one exit per instruction without it)");

static unsigned int trace_event_gap = VT_TRACE_EVENT_GAP;
module_param(trace_event_gap, uint, 0444);
MODULE_PARM_DESC(trace_event_gap, "branch tracing: steps of a traced CPU between two interrupts let in (default 16384): "
		 "bounds how long an interrupt waits and how much of the stepping its handlers take");

static unsigned int trace_records = 32768;
module_param(trace_records, uint, 0444);
MODULE_PARM_DESC(trace_records, "branch records each CPU's trace holds (32 bytes each; default 32768, 1 MiB "
		 "per CPU): the debug stub's trace buffer, and behind each ring the records a full ring "
		 "cannot take yet; a fuller trace counts the rest as lost");

static bool shield = true;
module_param(shield, bool, 0444);
MODULE_PARM_DESC(shield, "hide the hypervisor's memory from the kernel through EPT (0: leave it reachable, "
		 "for comparisons only)");

static bool tsc_offset;
module_param(tsc_offset, bool, 0444);
MODULE_PARM_DESC(tsc_offset, "with debug_port: take the time every CPU spends stopped in the stub out of the "
		 "kernel's TSC (TSC offsetting; its clocks then lag the wall clock by that time: "
		 "docs/transparency.md)");

bool vt_stealth;
module_param_named(stealth, vt_stealth, bool, 0444);
MODULE_PARM_DESC(stealth, "with debug_port: once every CPU is virtualized, leave the kernel nothing of vtice "
		 "(no module list entry, /sys/module, kallsyms names, /dev/vtice or kernel log lines; its code and "
		 "key show as the decoy; no VMCALL answered): the stub is the only way in, and its \"monitor unload\" "
		 "the only way out (docs/transparency.md)");

static int fail_on_cpu = -1;
module_param(fail_on_cpu, int, 0444);
MODULE_PARM_DESC(fail_on_cpu, "test hook: bring-up fails on this CPU, to exercise the rollback");

/*
 * Every possible CPU's state is made at load, not when the CPU comes
 * online: the shield hides it from the guest before any CPU runs as one,
 * and CPU hotplug then never changes the EPT (docs/hypervisor.md).
 */
static int vt_cpu_online(unsigned int cpu)
{
	struct vt_vcpu *vcpu = vt_mod.vcpu_state[cpu];
	unsigned long flags;
	int ret;

	if (!vcpu)
		return -ENOMEM;
	local_irq_save(flags);
	ret = (int)cpu == fail_on_cpu ? -EIO : vt_vcpu_virtualize(vcpu);
	local_irq_restore(flags);
	if (ret) {
		pr_err("cpu %u: virtualization failed (%d)\n", cpu, ret);
		return ret;
	}
	WRITE_ONCE(vt_mod.vcpus[cpu], vcpu);
	return 0;
}

static int vt_cpu_offline(unsigned int cpu)
{
	struct vt_vcpu *vcpu = vt_mod.vcpus[cpu];
	unsigned long flags;
	int ret;

	if (!vcpu)
		return 0;
	local_irq_save(flags);
	ret = vt_vcpu_devirtualize(vcpu);
	local_irq_restore(flags);
	if (ret) {
		/* Still in VMX: its memory must stay; better a leak than a crash. */
		pr_err("cpu %u: devirtualization failed (%d); leaking its state\n", cpu, ret);
		vt_mod.vcpu_state[cpu] = NULL;
		return 0;
	}
	WRITE_ONCE(vt_mod.vcpus[cpu], NULL);
	return 0;
}

static void vt_free_vcpus(void)
{
	unsigned int cpu;

	if (!vt_mod.vcpu_state)
		return;
	for_each_possible_cpu(cpu) {
		if (!vt_mod.vcpu_state[cpu])
			continue;
		vt_vcpu_free(vt_mod.vcpu_state[cpu]);
		vt_os_free_pages(vt_mod.vcpu_state[cpu], VT_VCPU_PAGES);
	}
	kfree(vt_mod.vcpu_state);
	vt_mod.vcpu_state = NULL;
}

static int vt_alloc_vcpus(void)
{
	unsigned int cpu;
	int ret;

	vt_mod.vcpu_state = kcalloc(nr_cpu_ids, sizeof(*vt_mod.vcpu_state), GFP_KERNEL);
	if (!vt_mod.vcpu_state)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		/* Pages of its own: the shield gives the kernel a copy of them. */
		struct vt_vcpu *vcpu = vt_os_alloc_pages(VT_VCPU_PAGES);

		if (!vcpu)
			return -ENOMEM;
		ret = vt_vcpu_alloc(vt_mod.hv, vcpu, cpu);
		if (ret) {
			vt_os_free_pages(vcpu, VT_VCPU_PAGES);
			return ret;
		}
		vt_ring_attach(&vcpu->ring, vt_mod.rings[cpu]);
		vcpu->sys.current_task = vt_linux_task_pointer(cpu);
		vt_mod.vcpu_state[cpu] = vcpu;
	}
	return 0;
}

static void vt_free_rings(void)
{
	unsigned int cpu;

	if (!vt_mod.rings)
		return;
	for_each_possible_cpu(cpu)
		vfree(vt_mod.rings[cpu]);
	kfree(vt_mod.rings);
	vt_mod.rings = NULL;
}

static int vt_alloc_rings(void)
{
	unsigned int cpu;

	vt_mod.ring_records = ring_records;
	vt_mod.ring_bytes = PAGE_ALIGN(VTICE_RING_HEADER_SIZE +
				       ring_records * sizeof(struct vtice_record));
	vt_mod.rings = kcalloc(nr_cpu_ids, sizeof(void *), GFP_KERNEL);
	if (!vt_mod.rings)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct vt_ring ring;

		vt_mod.rings[cpu] = vmalloc_user(vt_mod.ring_bytes);
		if (!vt_mod.rings[cpu]) {
			vt_free_rings();
			return -ENOMEM;
		}
		vt_ring_init(&ring, vt_mod.rings[cpu], ring_records, cpu);
	}
	return 0;
}

static void vt_log_caps(const struct vt_vmx_caps *c)
{
	vt_note("VMX basic 0x%llx pin 0x%llx proc 0x%llx proc2 0x%llx exit 0x%llx entry 0x%llx\n",
		c->basic, c->pin, c->proc, c->proc2, c->exit, c->entry);
	vt_note("VMX misc 0x%llx ept_vpid 0x%llx cr0 fixed 0x%llx/0x%llx cr4 fixed 0x%llx/0x%llx\n",
		c->misc, c->ept_vpid, c->cr0_fixed0, c->cr0_fixed1, c->cr4_fixed0,
		c->cr4_fixed1);
}

static void vt_probe_caps(void)
{
	unsigned long flags;

	local_irq_save(flags);
	vt_mod.hv->caps.flags |= vt_probe_debugctl();
	local_irq_restore(flags);
}

/* The ioctls and notifiers read vcpus[] while a CPU may be going offline
 * (NULL) or not yet launched; launched is set by that CPU's VMLAUNCH. */
struct vt_vcpu *vt_linux_launched_vcpu(unsigned int cpu)
{
	struct vt_vcpu *vcpu;

	if (cpu >= nr_cpu_ids)
		return NULL;
	vcpu = READ_ONCE(vt_mod.vcpus[cpu]);
	return vcpu && READ_ONCE(vcpu->launched) ? vcpu : NULL;
}

static unsigned int vt_count_virtualized(void)
{
	unsigned int cpu, n = 0;

	for_each_possible_cpu(cpu)
		n += vt_mod.vcpus[cpu] != NULL;
	return n;
}

/* kgdbwait's counterpart: the machine waits here for a debugger. */
static void vt_debug_wait(void)
{
	u64 ns = 0;
	int ret;

	if (!debug_port) {
		vt_note_warn("debug_wait needs debug_port; not waiting\n");
		return;
	}
	vt_note("debug_wait: every CPU stopped, waiting for a debugger on port 0x%x\n",
		debug_port);
	ret = vt_linux_debug_break(&ns);
	if (ret)
		pr_err("debug_wait: could not stop the machine (%d)\n", ret);
	else
		vt_note("debug_wait: resumed after %llu ms\n", ns / 1000000);
}

/* trace_mode= as enum vt_trace_mode (debug/tracer.h), and trace_event_gap=. */
static int vt_parse_trace_params(struct vt_linux_trace_params *trace)
{
	static const char *const names[] = {
		[VT_TRACE_MODE_AUTO] = "auto", [VT_TRACE_MODE_MTF] = "mtf", [VT_TRACE_MODE_TF] = "tf",
	};
	int i = sysfs_match_string(names, trace_mode);

	if (i < 0) {
		pr_err("trace_mode=%s: must be auto, mtf or tf\n", trace_mode);
		return -EINVAL;
	}
	if (!trace_event_gap) {
		pr_err("trace_event_gap=0: must be at least 1\n");
		return -EINVAL;
	}
	if (trace_records < VT_TRACE_MIN_RECORDS || trace_records > VT_TRACE_MAX_RECORDS) {
		pr_err("trace_records=%u: must be in %u..%u\n", trace_records, VT_TRACE_MIN_RECORDS,
		       VT_TRACE_MAX_RECORDS);
		return -EINVAL;
	}
	trace->mode = i;
	trace->event_gap = trace_event_gap;
	trace->records = trace_records;
	return 0;
}

/* What the branch tracer found to step with, for dmesg and the rigs. */
static void vt_log_tracer(void)
{
	switch (vt_tracer_mechanism()) {
	case VTICE_TRACE_BTF:
		vt_note("branch tracer: TF + DEBUGCTL.BTF, one VM exit per taken branch\n");
		break;
	case VTICE_TRACE_TF:
		vt_note("branch tracer: TF, one VM exit per instruction (DEBUGCTL.BTF not honoured)\n");
		break;
	case VTICE_TRACE_MTF:
		vt_note("branch tracer: monitor trap flag, one VM exit per instruction\n");
		break;
	default:
		vt_note("branch tracer: none (no monitor trap flag, and no interrupt exiting for TF)\n");
	}
}

static int __init vt_init(void)
{
	struct vt_linux_trace_params trace;
	int ret;

	ret = vt_parse_trace_params(&trace);
	if (ret)
		return ret;
	if (vt_stealth && (!debug_port || !virtualize)) {
		pr_err("stealth=1 needs debug_port= and virtualize=1: the debug stub is the only way to reach "
		       "a hidden vtice\n");
		return -EINVAL;
	}
	vt_linux_set_memory_map(PAGE_OFFSET, phys_base);
	if (ring_records < 64 || ring_records > (1u << 20) || !is_power_of_2(ring_records)) {
		pr_err("ring_records=%u: must be a power of two in 64..1048576\n", ring_records);
		return -EINVAL;
	}
	vt_mod.hv = vt_os_alloc_pages(VT_HV_PAGES);
	if (!vt_mod.hv)
		return -ENOMEM;
	ret = vt_hv_init(vt_mod.hv, 0);
	if (ret) {
		pr_err("no usable VT-x here (%d); not loading\n", ret);
		goto err_hv_pages;
	}
	ret = vt_linux_describe_kernel(vt_mod.hv);
	if (ret) {
		pr_err("more RAM ranges than the hypervisor can track (%d); not loading\n", ret);
		goto err_hv;
	}
	if (tsc_offset) {
		ret = vt_hv_enable_tsc_hiding(vt_mod.hv);
		if (ret) {
			pr_err("tsc_offset=1: this CPU's VMX cannot offset the TSC (%d); not loading\n", ret);
			goto err_hv;
		}
		if (!debug_port)
			vt_note("tsc_offset=1 hides the stub's stops, and there is no stub (debug_port=0): "
				"the TSC stays as it is\n");
	}
	vt_log_caps(&vt_mod.hv->caps);
	vt_probe_caps();
	vt_note("EPT identity map up to 0x%llx with %u tables (%s pages)\n",
		vt_mod.hv->ept.top, vt_mod.hv->ept.tables, vt_mod.hv->ept.use_1g ? "1 GiB" : "2 MiB");
	ret = -ENOMEM;
	vt_mod.vcpus = kcalloc(nr_cpu_ids, sizeof(*vt_mod.vcpus), GFP_KERNEL);
	if (!vt_mod.vcpus)
		goto err_hv;
	ret = vt_alloc_rings();
	if (ret)
		goto err_vcpus;
	ret = vt_alloc_vcpus();
	if (ret)
		goto err_vcpu_state;
	if (debug_port) {
		struct vt_linux_stub_params params = {
			.port = debug_port, .baud = debug_baud, .crash_stop = crash_stop,
			.lockup_secs = lockup_secs, .step_tf = step_tf,
			.trace = trace,
		};

		ret = vt_linux_stub_init(&params);
		if (ret)
			goto err_vcpu_state;
	}
	ret = vt_linux_path_init(&trace);
	if (ret) {
		pr_err("no memory for the syscall-path tracer (%d); not loading\n", ret);
		goto err_stub;
	}
	vt_log_tracer();
	ret = vt_linux_host_tables();
	if (ret) {
		pr_err("cannot build VMX root's page tables (%d); not loading\n", ret);
		goto err_stub;
	}
	if (shield) {
		ret = vt_linux_shield();
		if (ret) {
			pr_err("cannot hide the hypervisor's memory (%d); not loading (shield=0 loads it unhidden)\n",
			       ret);
			goto err_stub;
		}
	}
	/* A stealth load prints nothing, root's events included: they stay unread in root. */
	ret = vt_stealth ? 0 : vt_root_log_start();
	if (ret)
		goto err_stub;
	if (virtualize) {
		ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "vtice:online", vt_cpu_online,
					vt_cpu_offline);
		if (ret < 0) {
			pr_err("bring-up failed (%d); every CPU rolled back, not loading\n", ret);
			goto err_log;
		}
		vt_hp_state = ret;
	}
	/* Neither exists in a stealth load: both run the module's code in the kernel. */
	ret = vt_stealth ? 0 : vt_power_register();
	if (ret)
		goto err_hp;
	ret = vt_stealth ? 0 : vt_dev_register();
	if (ret)
		goto err_power;
	vt_note("virtualized %u of %u CPUs; NMIs between them by the %s ICR\n", vt_count_virtualized(),
		num_online_cpus(), x2apic_enabled() ? "x2APIC" : "xAPIC");
	if (selftest)
		vt_selftest();
	if (debug_wait)
		vt_debug_wait();
	if (vt_stealth)
		vt_linux_stealth(vt_hp_state);
	return 0;
err_power:
	vt_power_unregister();
err_hp:
	if (vt_hp_state)
		cpuhp_remove_state(vt_hp_state);
err_log:
	vt_root_log_stop();
err_stub:
	vt_linux_stub_fini();
	vt_path_fini();
err_vcpu_state:
	vt_free_vcpus();
	vt_free_rings();
err_vcpus:
	kfree(vt_mod.vcpus);
err_hv:
	vt_hv_fini(vt_mod.hv);
err_hv_pages:
	vt_os_free_pages(vt_mod.hv, VT_HV_PAGES);
	vt_mod.hv = NULL;
	return ret;
}

static void __exit vt_exit(void)
{
	vt_dev_unregister();
	vt_power_unregister();
	if (vt_hp_state)
		cpuhp_remove_state(vt_hp_state);
	vt_root_log_stop();
	vt_linux_stub_fini();
	vt_path_fini();
	vt_free_vcpus();
	vt_free_rings();
	kfree(vt_mod.vcpus);
	vt_hv_fini(vt_mod.hv);
	vt_os_free_pages(vt_mod.hv, VT_HV_PAGES);
	pr_info("devirtualized, unloaded\n");
}

module_init(vt_init);
module_exit(vt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice: thin VT-x hypervisor for a stealth kernel debugger");
MODULE_AUTHOR("vtice developers");
