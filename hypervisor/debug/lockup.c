// SPDX-License-Identifier: GPL-2.0
#include "lockup.h"

bool vt_lockup_poll(struct vt_lockup *l, struct vt_lockup_cpu *c, bool ticks, u64 now)
{
	if (!l->threshold || ticks) {
		c->irqs_off_since = 0;
		c->reported = false;
		return false;
	}
	/* A CPU that stays stuck was reported once; the debugger knows. */
	if (c->reported)
		return false;
	/* A span that began before the machine was stopped starts again now. */
	if (!c->irqs_off_since || c->irqs_off_since < l->resumed) {
		c->irqs_off_since = now;
		return false;
	}
	if (now - c->irqs_off_since < l->threshold)
		return false;
	c->reported = true;
	return true;
}
