// SPDX-License-Identifier: GPL-2.0
/*
 * Completing one guest instruction with a hooked page lifted: the
 * violation handlers give the page its identity rights, single-step the
 * instruction (single_step.h: MTF, or TF where the CPU has no MTF) and
 * record the access; the step's end judges the access. Used for watched
 * pages (ept_watch.c) and for an instruction that both executes from and
 * reads a split page, writes it, or runs under a probe (ept_bp.c).
 *
 * The lift is this CPU's alone: it runs the step in its own view of the
 * EPT (core/ept.h), the shared tables with the step's pages mapped to their
 * real frames with every right, and goes back to the shared tables when
 * the step ends. The other CPUs keep walking the shared tables, where the
 * pages keep their hooks, so none of them runs a split page without its
 * 0xCC bytes or writes a watched page unseen while a step runs, and none
 * can cache the lifted rights (INVEPT reaches one CPU, SDM 3C 29.4.3).
 */
#include "hooks_priv.h"
#include "single_step.h"
#include "../core/intrin.h"
#include "probe_points.h"
#include <vtice/records.h>

bool vt_step_add(struct vt_hooks_cpu *c, u64 gpa, enum vt_step_kind kind)
{
	struct vt_step *s = &c->step;
	u32 i;

	if (!s->active)
		s->pages = s->accesses = 0;
	for (i = 0; i < s->pages; i++)
		if (s->gpa[i] == gpa)
			return true;
	if (s->pages == VT_STEP_PAGES)
		return false;
	s->gpa[s->pages] = gpa;
	s->kind[s->pages++] = kind;
	return true;
}

/* A split page's shadow takes what the step wrote to the original (ept_bp.c). */
static void vt_step_restore(const struct vt_step *s)
{
	u32 i;

	for (i = 0; i < s->pages; i++)
		if (s->kind[i] == VT_STEP_SPLIT)
			vt_bp_rearm(s->gpa[i]);
}

VT_STATIC_ASSERT(VT_STEP_PAGES <= VT_EPT_VIEW_PAGES, "a view holds every page one step lifts");

/* The entry page i of the step has in the step's view, or 0 when its hook went meanwhile. */
static u64 vt_step_lifted_entry(const struct vt_step *s, u32 i)
{
	const struct vt_watch_page *wp;
	const struct vt_split_page *p;

	if (s->kind[i] == VT_STEP_WATCH) {
		wp = vt_watch_find_page(s->gpa[i]);
		return wp ? wp->identity : 0;
	}
	p = vt_bp_find_page(s->gpa[i]);
	return p ? p->identity : 0;
}

/*
 * (Re)build this CPU's view from the shared tables as they are now, with
 * the step's pages lifted, and walk it from the next VM entry on. Called
 * with the hooks' lock held. The view's earlier translations are flushed:
 * its tables are reused from step to step (SDM 3C 29.4.3.1).
 */
int vt_step_view_sync(struct vt_hooks_cpu *c)
{
	const struct vt_step *s = &c->step;
	u64 entry, gen = VT_LOAD_ACQUIRE(vt_hooks.ept_gen);
	u32 i;
	int ret = 0;

	if (!c->view.block)
		return -VT_ENODEV;
	vt_ept_view_reset(&c->view, &vt_hooks.hv->ept);
	for (i = 0; i < s->pages && !ret; i++) {
		entry = vt_step_lifted_entry(s, i);
		if (entry)	/* else its leaf is the identity again */
			ret = vt_ept_view_map(&c->view, s->gpa[i], entry);
	}
	vt_vmwrite(EPT_POINTER, c->view.eptp);
	vt_hv_invept_eptp(vt_hooks.hv, c->view.eptp);
	c->view_kept = !ret && s->pages == 1;
	c->view_page = s->gpa[0];
	c->view_gen = gen;
	return ret;
}

enum vt_hook_result vt_step_view_resync(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	if (!vt_step_view_sync(c))
		return VT_HOOK_HANDLED;
	vt_root_report(vcpu, VT_RE_STEP_VIEW_FULL, c->step.pages, VT_EPT_VIEW_TABLES, 0, 0);
	return VT_HOOK_NOT_MINE;
}

/*
 * The view the last step of this one page built, walked again as it is:
 * no hook was inserted or removed since (the generation), so its copies
 * differ from the shared tables at most by a flip between a split page's
 * two views, both of which take away what the other allows: an access the
 * copy refuses faults and syncs the view, and none it allows runs past a
 * breakpoint. Most steps are a probe's, on the same page again and again:
 * this spares them the copy and the flush.
 */
static bool vt_step_view_reuse(struct vt_hooks_cpu *c)
{
	const struct vt_step *s = &c->step;

	if (!c->view_kept || s->pages != 1 || s->gpa[0] != c->view_page ||
	    c->view_gen != VT_LOAD_ACQUIRE(vt_hooks.ept_gen))
		return false;
	vt_vmwrite(EPT_POINTER, c->view.eptp);
	vt_hooks.stats.step_views_reused++;
	return true;
}

/* Back to the shared tables, which this CPU never cached the lift from. */
static void vt_step_view_leave(void)
{
	vt_vmwrite(EPT_POINTER, vt_hooks.hv->ept.eptp);
}

enum vt_hook_result vt_step_begin(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	struct vt_step *s = &c->step;

	/*
	 * A second page of the same instruction: the violation's dispatcher
	 * (vt_hooks_on_ept_violation) resyncs the view, lifting it too.
	 */
	if (s->active)
		return VT_HOOK_HANDLED;
	if (vt_single_step_arm(vcpu)) {
		s->pages = s->accesses = 0;
		return VT_HOOK_NOT_MINE;
	}
	if (!vt_step_view_reuse(c) && vt_step_view_sync(c)) {
		vt_step_view_leave();
		vt_single_step_disarm(vcpu);
		vt_root_report(vcpu, VT_RE_STEP_VIEW_FULL, s->pages, VT_EPT_VIEW_TABLES, 0, 0);
		s->pages = s->accesses = 0;
		return VT_HOOK_NOT_MINE;
	}
	s->active = true;
	return VT_HOOK_HANDLED;
}

/* The first access of the step a watch probe covers, recorded once. */
static void vt_step_record_probe(struct vt_vcpu *vcpu, struct vt_exit *exit, const struct vt_step *s)
{
	struct vt_dbg_stop where = { 0 };
	u32 i;

	for (i = 0; i < s->accesses; i++)
		if (vt_watch_match(&s->access[i], true, &where)) {
			vt_probe_on_watch(vcpu, exit, s->rip, where.data_addr,
					  (s->access[i].read ? VTICE_PROBE_HIT_READ : 0) |
					  (s->access[i].write ? VTICE_PROBE_HIT_WRITE : 0));
			return;
		}
}

enum vt_hook_result vt_hooks_on_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit,
				    struct vt_dbg_stop *stop)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	struct vt_step *s;
	bool hit = false;
	u32 i;

	if (!c || !c->step.active)
		return VT_HOOK_NOT_MINE;
	s = &c->step;
	vt_hooks_lock();
	s->active = false;
	vt_step_restore(s);
	vt_step_view_leave();
	vt_step_record_probe(vcpu, exit, s);
	for (i = 0; i < s->accesses && !hit; i++)
		hit = vt_watch_match(&s->access[i], false, stop);
	if (hit)
		vt_hooks.stats.watch_hits++;
	s->pages = s->accesses = 0;
	vt_hooks_unlock();
	vt_single_step_disarm(vcpu);
	if (!hit)
		return VT_HOOK_HANDLED;
	stop->cpu = vcpu->cpu;
	return VT_HOOK_STOP;
}
