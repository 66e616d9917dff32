/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hard-lockup watch: a CPU that its timer could not interrupt at every
 * poll of the stub (VMX-preemption timer, VT_STUB_POLL_MS) for a whole
 * threshold is stuck, as the kernel's own hard-lockup detector judges it
 * (no timer interrupt for watchdog_thresh, 10 s by default): interrupts
 * kept off, or the local APIC timer masked (stub.c decides). A kernel that
 * disables its NMI watchdog, or a CPU too stuck to run it, is still caught.
 * Time spent stopped in the stub does not count: polls only run while the
 * guest does, and a resume restarts every CPU's span. A CPU that stays
 * stuck is reported once, not again every threshold.
 */
#ifndef VTICE_DEBUG_LOCKUP_H
#define VTICE_DEBUG_LOCKUP_H

#include "../core/types.h"

struct vt_lockup_cpu {
	u64 irqs_off_since;	/* TSC of the first poll of the current span without ticks, 0 = none */
	bool reported;		/* this span was reported; quiet until the timer can tick again */
};

struct vt_lockup {
	u64 threshold;		/* TSC ticks; 0 = the watch is off */
	u64 resumed;		/* TSC of the last resume from a stop */
};

/* True once per span: the first poll at which it reached the threshold. */
bool vt_lockup_poll(struct vt_lockup *l, struct vt_lockup_cpu *c, bool ticks, u64 now);

#endif
