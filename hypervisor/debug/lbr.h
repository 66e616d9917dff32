/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Last branch records at a crash (docs/lbr.md). Where the CPU honours
 * IA32_DEBUGCTL.LBR the hypervisor keeps it set in every guest's DEBUGCTL
 * (the guest still reads its own value, core/exit_msr.c), so the LBR stack
 * always holds the kernel's last branches. A VM exit clears DEBUGCTL (SDM
 * Vol. 3C 28.5.1; 27.5.1 in older editions), which freezes the stack for as
 * long as the CPU stays in VMX root: when the stub notices an oops, a
 * panic, a triple fault or a hard lockup, the crashing CPU saves its stack
 * at that exit and every other CPU saves its own when the all-stop parks
 * it. The snapshots live in pages only VMX root reads.
 */
#ifndef VT_DEBUG_LBR_H
#define VT_DEBUG_LBR_H

#include "../core/types.h"
#include <vtice/ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;
struct vt_exit;

/* What this CPU model offers, from CPUID and IA32_PERF_CAPABILITIES. */
struct vt_lbr_model {
	u32 status;		/* enum vtice_lbr_status: VTICE_LBR_OK or why not */
	u32 nr;			/* stack depth (a power of two) */
	u32 from, to;		/* MSR of entry 0 of each array */
	u32 info;		/* MSR_LBR_INFO_0 when the format keeps flags there, else 0 */
	bool has_select;	/* MSR_LBR_SELECT exists */
	u32 format;		/* LBR_FMT, or VTICE_LBR_FMT_NONE */
	u32 arch_depth;		/* architectural LBR depth (CPUID 0x1C), 0 = none */
	u32 model;		/* DisplayFamily << 8 | DisplayModel */
};

/* One CPU's snapshot, written only by that CPU in VMX root. */
struct vt_lbr_snap {
	u32 seq;		/* odd while being written */
	u32 event;		/* enum vtice_lbr_event */
	u32 count, flags, snapshots;
	u32 seen_gen;		/* the last crash this CPU saved its stack for */
	u64 tsc, rip, lbr_select;
	struct vtice_lbr_entry br[VTICE_LBR_MAX];
};

/*
 * On the CPU it runs on (CPUID, RDMSR with #GP caught); debugctl_caps are
 * the VTICE_CAP_DEBUGCTL_* flags of the probe (vmx_caps.c). Any context.
 */
void vt_lbr_detect(struct vt_lbr_model *m, u64 debugctl_caps);
/*
 * A raw FROM/TO pair (and MSR_LBR_INFO_x, 0 without) as the LBR_FMT lays
 * it out (SDM Vol. 3B 18.4.8.1): flag bits moved into e->flags, addresses
 * sign-extended to canonical form.
 */
void vt_lbr_decode(u32 format, u64 from, u64 to, u64 info, struct vtice_lbr_entry *e);

/*
 * Where the model keeps its stack, for the core, which shows the kernel a
 * still copy of it while the hypervisor owns LBR (core/lbr_view.h). At
 * load, by each user of LBR; a model without a usable stack leaves it unset.
 */
void vt_lbr_hide_stack(struct vt_hv *hv, const struct vt_lbr_model *m);

/* At load, before any CPU is virtualized: detect, allocate the snapshots. */
int vt_lbr_init(struct vt_hv *hv, u32 nr_cpus);
int vt_lbr_shield(void);
void vt_lbr_fini(void);
const struct vt_lbr_model *vt_lbr_get_model(void);
/* CPU's snapshot, or NULL (no LBR, or no such CPU); VMX root or tests. */
const struct vt_lbr_snap *vt_lbr_snapshot(u32 cpu);

/*
 * VMX root, the current vCPU. pre_entry: own DEBUGCTL.LBR (again, if a
 * debugger callback dropped it) and save the stack if a crash is open.
 * crash_begin/end bracket the stop of a crash: this CPU saves its own
 * stack, and every CPU that exits until crash_end saves its stack too.
 */
void vt_lbr_pre_entry(struct vt_vcpu *vcpu);
void vt_lbr_on_exit(struct vt_vcpu *vcpu);
void vt_lbr_crash_begin(struct vt_vcpu *vcpu, u32 event);
void vt_lbr_crash_end(void);
/* VTICE_VMCALL_LBR: sets RAX/RDX and advances RIP; always true. */
bool vt_lbr_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_LBR_H */
