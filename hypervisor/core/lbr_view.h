/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The LBR stack as the kernel would find it on the bare CPU. The
 * hypervisor keeps DEBUGCTL.LBR on for itself (the stub's crash snapshots,
 * debug/lbr.h; a TF trace's branch steps, debug/tracer_tf.c) while the
 * kernel's own DEBUGCTL says it is off (exit_msr.c). On the bare CPU the
 * stack would then stand still where the kernel left it; here it keeps
 * recording, and a kernel that read it twice would see it move. So while
 * the hypervisor owns LBR, the stack's MSRs exit (the MSR bitmap, SDM Vol.
 * 3C 25.1.3) and act on a copy taken when it took LBR. When it gives LBR
 * up, or the kernel turns LBR on itself and is given it, the copy goes back
 * into the MSRs and they run natively again.
 */
#ifndef VT_CORE_LBR_VIEW_H
#define VT_CORE_LBR_VIEW_H

#include "types.h"

struct vt_vcpu;

#define VT_LBR_VIEW_MAX	32	/* the deepest model stack (Skylake) */

/* Where this CPU model keeps its stack (debug/lbr.c fills it; nr 0: none). */
struct vt_lbr_msrs {
	u32 nr;			/* entries, a power of two, <= VT_LBR_VIEW_MAX */
	u32 from, to;		/* MSR of entry 0 of each array */
	u32 info;		/* MSR_LBR_INFO_0, or 0 on models without it */
};

/* One vCPU's copy of the stack while the hypervisor owns LBR. */
struct vt_lbr_view {
	bool active;
	u64 tos;
	u64 from[VT_LBR_VIEW_MAX], to[VT_LBR_VIEW_MAX], info[VT_LBR_VIEW_MAX];
};

/*
 * VMX root on the vCPU's own CPU, after any change of the DEBUGCTL bits
 * the hypervisor owns: takes the copy or gives it back as ownership of LBR
 * changed.
 */
void vt_lbr_view_sync(struct vt_vcpu *vcpu);
/* Gives the copy back before the CPU leaves VMX. */
void vt_lbr_view_release(struct vt_vcpu *vcpu);
/* The copy's word for msr while the view is active, else NULL. */
u64 *vt_lbr_view_slot(struct vt_vcpu *vcpu, u32 msr);
/*
 * A guest WRMSR to one of the copy's MSRs: false for a value the real MSR
 * refuses (#GP), else the copy keeps what the MSR would have kept.
 */
bool vt_lbr_view_write(u32 msr, u64 *slot, u64 value);

#endif /* VT_CORE_LBR_VIEW_H */
