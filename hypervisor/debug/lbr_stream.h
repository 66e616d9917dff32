/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The last-branch stack read as a stream, for the tracer: a mark taken at
 * one exit, then at a later exit the branches the CPU recorded since, oldest
 * first. A VM exit clears DEBUGCTL (SDM Vol. 3C 28.5.1), so the stack holds
 * still in VMX root and records only the guest's branches. Where the stack
 * went round between the two, the older of the new branches are gone: the
 * caller is told, never handed a seam as if it were one flow.
 */
#ifndef VT_DEBUG_LBR_STREAM_H
#define VT_DEBUG_LBR_STREAM_H

#include "lbr.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_lbr_mark {
	bool valid;
	u32 tos;		/* the most recent entry at the mark */
	u64 from, to, info;	/* its raw MSRs, to tell a stack that went round */
};

/* VMX root, on the CPU whose stack it is; model from vt_lbr_detect(). */
void vt_lbr_take_mark(const struct vt_lbr_model *m, struct vt_lbr_mark *mark);
/*
 * The branches recorded since *mark (at most VTICE_LBR_MAX), decoded as
 * vt_lbr_decode() does; *wrapped when the stack went round meanwhile. The
 * mark moves to now. 0 for an invalid mark (it is taken anew).
 */
u32 vt_lbr_since(const struct vt_lbr_model *m, struct vt_lbr_mark *mark, struct vtice_lbr_entry *out,
		 bool *wrapped);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_LBR_STREAM_H */
