// SPDX-License-Identifier: GPL-2.0
/*
 * Completing one guest instruction with a hooked page lifted: the
 * violation handlers give the page its identity rights, single-step the
 * instruction (single_step.h: MTF, or TF where the CPU has no MTF) and
 * record the access; the step's end puts the protection back and judges the
 * access. Used for watched pages (ept_watch.c) and for an instruction that
 * both executes from and reads a split page (ept_bp.c).
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

/*
 * Another CPU that touched a lifted page meanwhile may keep the permissive
 * translation cached (INVEPT is per CPU, SDM 3C 29.4.3) and miss hits: the
 * generation tells it to flush at its next vt_hooks_on_resume().
 */
static void vt_step_restore(struct vt_step *s)
{
	bool watched = false;
	u32 i;

	for (i = 0; i < s->pages; i++) {
		if (s->kind[i] == VT_STEP_WATCH) {
			vt_watch_reapply(s->gpa[i]);
			watched = true;
		} else {
			vt_bp_rearm(s->gpa[i]);
		}
	}
	if (watched)
		vt_hooks_ept_changed();
}

enum vt_hook_result vt_step_begin(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	struct vt_step *s = &c->step;
	u32 i;

	if (s->active)
		return VT_HOOK_HANDLED;	/* a second page of the same instruction */
	if (vt_single_step_arm(vcpu)) {
		/* Watched pages get their protection back; a split page stays RWX. */
		for (i = 0; i < s->pages; i++)
			if (s->kind[i] == VT_STEP_WATCH)
				vt_watch_reapply(s->gpa[i]);
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
	/* This CPU cached the lifted rights while it ran the instruction. */
	vt_hv_invept_local(vt_hooks.hv);
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
