// SPDX-License-Identifier: GPL-2.0
/* VMX root's events, kept where the kernel can read them (root_log.h). */
#include "root_log.h"
#include "hv.h"

void vt_root_report(struct vt_vcpu *vcpu, enum vt_root_event_code code, u64 a0, u64 a1, u64 a2, u64 a3)
{
	struct vt_root_log *log = &vcpu->counts->log;
	/* The kernel may have written `written`: masking keeps the slot ours to bound. */
	u64 n = VT_READ_ONCE(log->written);
	struct vt_root_event *ev = &log->ev[n & (VT_ROOT_EVENTS - 1)];

	VT_STORE_RELEASE(ev->seq, 0);
	ev->code = code;
	ev->cpu = vcpu->cpu;
	ev->arg[0] = a0;
	ev->arg[1] = a1;
	ev->arg[2] = a2;
	ev->arg[3] = a3;
	VT_STORE_RELEASE(ev->seq, n + 1);
	VT_STORE_RELEASE(log->written, n + 1);
}

u64 vt_root_log_drain(const struct vt_root_log *log, u64 *seen, vt_root_event_fn print, void *ctx)
{
	u64 written = VT_LOAD_ACQUIRE(log->written), lost = 0, n;
	struct vt_root_event ev;

	if (written - *seen > VT_ROOT_EVENTS) {
		lost = written - *seen - VT_ROOT_EVENTS;
		*seen = written - VT_ROOT_EVENTS;
	}
	for (n = *seen; n < written; n++) {
		const struct vt_root_event *slot = &log->ev[n & (VT_ROOT_EVENTS - 1)];

		vt_memcpy(&ev, slot, sizeof(ev));
		if (VT_LOAD_ACQUIRE(slot->seq) != n + 1 || ev.seq != n + 1) {
			lost++;		/* being rewritten, or written over already */
			continue;
		}
		print(&ev, ctx);
	}
	*seen = written;
	return lost;
}
