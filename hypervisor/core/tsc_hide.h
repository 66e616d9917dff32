/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TSC offsetting (module parameter tsc_offset=1, off by default): the time
 * every CPU spends stopped together in VMX root (the debugger's all-stop)
 * is taken out of the guest's TSC, so RDTSC, RDTSCP and RDMSR(IA32_TSC)
 * on each side of a stop differ by what ran, not by how long the user
 * looked (docs/transparency.md, "Time").
 *
 * One amount, "hidden", for the whole machine: each CPU's TSC offset is
 * minus it (SDM Vol. 3C 26.6.5; 27.3 for RDTSC, RDTSCP and RDMSR of
 * IA32_TSC under "use TSC offsetting"), so the CPUs' TSCs stay as
 * synchronized as the bare CPU's. Time a single CPU spends in VMX root
 * (one exit) is not hidden: taking it out of that CPU alone would split
 * the CPUs' TSCs, and out of all of them would turn the others' TSCs back.
 *
 * What the CPU does not offset, root does while hidden > 0: WRMSR to
 * IA32_TSC sets the real counter (so root adds hidden), and the local APIC
 * compares IA32_TSC_DEADLINE with the real counter (so root moves the
 * deadline by hidden, and by each increase of it, keeping the guest's
 * timers where the guest put them).
 */
#ifndef VT_CORE_TSC_HIDE_H
#define VT_CORE_TSC_HIDE_H

#include "types.h"

struct vt_hv;
struct vt_vcpu;

#define VT_MSR_TSC				0x00000010
#define VT_MSR_TSC_DEADLINE		0x000006e0

struct vt_tsc_hide {
	bool on;	/* tsc_offset=1 and the CPU has "use TSC offsetting" */
	u64 hidden;	/* TSC cycles taken out of the guest's TSC so far */
};

/* At load, before any CPU is virtualized. -VT_EOPNOTSUPP without the control. */
int vt_hv_enable_tsc_hiding(struct vt_hv *hv);
/*
 * The all-stop's master, with every CPU parked: the guest's TSC loses
 * cycles more. Each CPU takes the new amount in vt_tsc_hide_apply().
 */
void vt_tsc_hide_add(struct vt_hv *hv, u64 cycles);
/*
 * On the vCPU's own CPU, its VMCS current (at bring-up and as it leaves a
 * stop): the TSC offset, the armed deadline and the MSR exits brought to
 * the machine's hidden amount.
 */
void vt_tsc_hide_apply(struct vt_vcpu *vcpu);
/*
 * In VMX root as the CPU leaves VMX (unload, CPU offline): its TSC reads
 * real again, a jump forward by what was hidden; the armed deadline moves
 * back.
 */
void vt_tsc_hide_release(struct vt_vcpu *vcpu);
/*
 * The TSC as this CPU's guest reads it now: what root stamps on records,
 * so the console, which maps stamps to time by the guest's own TSC, puts
 * an event after a stop where the guest's clock put it.
 */
u64 vt_guest_tsc(const struct vt_vcpu *vcpu);
/* RDMSR/WRMSR exits of IA32_TSC and IA32_TSC_DEADLINE; false: not one of them. */
bool vt_tsc_hide_rdmsr(struct vt_vcpu *vcpu, u32 msr, u64 *value);
bool vt_tsc_hide_wrmsr(struct vt_vcpu *vcpu, u32 msr, u64 value, bool *fault);

#endif /* VT_CORE_TSC_HIDE_H */
