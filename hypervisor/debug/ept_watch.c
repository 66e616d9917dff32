// SPDX-License-Identifier: GPL-2.0
/*
 * Z2/Z3/Z4: watchpoints on any guest-linear range as EPT protections
 * (SDM Vol. 3C 29.3.3). Each 4 KiB page a range covers loses W (Z2) or R
 * and W (Z3, Z4; R=0 W=1 would be a misconfiguration, 29.3.3.1). Without
 * execute-only support R=0 needs X=0 too; fetches from such a page are
 * then completed like any other access.
 *
 * A violation on a watched page lifts the protection for that one
 * instruction, on the faulting CPU alone (its own view of the EPT, step.c),
 * and completes it under MTF; the other CPUs keep the protection meanwhile.
 * Only then is the access judged, so a hit reports RIP after the
 * instruction, as an x86 data breakpoint does. Accesses to the other bytes
 * complete silently.
 *
 * A range is the debugger's (Z2-Z4: a hit stops the machine) or a watch
 * probe's (probe_points.h: a hit is recorded, the CPU goes on); both
 * protect pages alike.
 *
 * Pages are kept per (guest-physical, guest-linear) pair: the EPT knows
 * physical pages, the ranges are linear, and two linear pages may alias
 * one frame. All records of one frame share its leaf.
 */
#include "hooks_priv.h"
#include "single_step.h"
#include "../core/intrin.h"
#include <vtice/ioctl.h>

#define VT_PAGE_MASK	(~(VT_PAGE_SIZE - 1))
#define VT_WATCH_TRANSLATE	(~0ull)	/* no frame given: translate each page */

struct vt_watch_page *vt_watch_find_page(u64 gpa)
{
	u64 base = gpa & VT_PAGE_MASK;
	u32 i;

	for (i = 0; i < VT_WATCH_PAGES_MAX; i++)
		if (vt_hooks.wpage[i].used && vt_hooks.wpage[i].gpa == base)
			return &vt_hooks.wpage[i];
	return NULL;
}

static struct vt_watch_page *vt_watch_find_pair(u64 gpa, u64 gva)
{
	u32 i;

	for (i = 0; i < VT_WATCH_PAGES_MAX; i++) {
		struct vt_watch_page *wp = &vt_hooks.wpage[i];

		if (wp->used && wp->gpa == gpa && wp->gva == gva)
			return wp;
	}
	return NULL;
}

static bool vt_watch_covers(const struct vt_watch *w, u64 gva_page)
{
	return w->used && w->gva < gva_page + VT_PAGE_SIZE && gva_page < w->gva + w->len;
}

/* The rights the frame keeps: the union of what its ranges take away. */
static u64 vt_watch_protection(u64 gpa, u64 identity)
{
	bool need_r = false, need_w = false;
	u32 i, j;

	for (i = 0; i < VT_WATCH_PAGES_MAX; i++) {
		const struct vt_watch_page *wp = &vt_hooks.wpage[i];

		if (!wp->used || wp->gpa != gpa)
			continue;
		for (j = 0; j < VT_WATCH_MAX; j++) {
			const struct vt_watch *w = &vt_hooks.watch[j];

			if (!vt_watch_covers(w, wp->gva))
				continue;
			if (w->type == VT_POINT_WRITE)
				need_w = true;
			else
				need_r = true;
		}
	}
	if (need_r) {
		identity &= ~(VMX_EPT_READABLE_MASK | VMX_EPT_WRITABLE_MASK);
		if (!(vt_hooks.hv->caps.flags & VTICE_CAP_EPT_EXEC_ONLY))
			identity &= ~VMX_EPT_EXECUTABLE_MASK;
	} else if (need_w) {
		identity &= ~VMX_EPT_WRITABLE_MASK;
	}
	return identity;
}

/* Write the frame's leaf from the current ranges. */
static void vt_watch_reapply(u64 gpa)
{
	struct vt_watch_page *first = vt_watch_find_page(gpa);
	u64 prot;
	u32 i;

	if (!first)
		return;
	prot = vt_watch_protection(first->gpa, first->identity);
	for (i = 0; i < VT_WATCH_PAGES_MAX; i++)
		if (vt_hooks.wpage[i].used && vt_hooks.wpage[i].gpa == first->gpa)
			vt_hooks.wpage[i].protected_entry = prot;
	VT_STORE_RELEASE(*first->leaf, prot);
}

/* Drop pages no range covers any more; restore identity where no record is left. */
static void vt_watch_gc(void)
{
	u32 i, j;

	for (i = 0; i < VT_WATCH_PAGES_MAX; i++) {
		struct vt_watch_page *wp = &vt_hooks.wpage[i];
		bool covered = false;

		if (!wp->used)
			continue;
		for (j = 0; j < VT_WATCH_MAX && !covered; j++)
			covered = vt_watch_covers(&vt_hooks.watch[j], wp->gva);
		if (covered)
			continue;
		wp->used = false;
		if (!vt_watch_find_page(wp->gpa))
			VT_STORE_RELEASE(*wp->leaf, wp->identity);
	}
	for (i = 0; i < VT_WATCH_PAGES_MAX; i++)
		if (vt_hooks.wpage[i].used)
			vt_watch_reapply(vt_hooks.wpage[i].gpa);
}

static int vt_watch_add_page(u64 gva_page, u64 gpa)
{
	struct vt_ept *ept = &vt_hooks.hv->ept;
	struct vt_watch_page *wp = NULL, *same;
	int level, ret;
	u64 *leaf;
	u32 i;

	if (vt_bp_find_page(gpa))
		return -VT_EBUSY;	/* a split view cannot also be protected */
	if (vt_watch_find_pair(gpa, gva_page))
		return 0;
	for (i = 0; i < VT_WATCH_PAGES_MAX && !wp; i++)
		if (!vt_hooks.wpage[i].used)
			wp = &vt_hooks.wpage[i];
	if (!wp)
		return -VT_ENOSPC;
	same = vt_watch_find_page(gpa);
	if (same) {
		/* Already protected, maybe RWX=0, which vt_ept_leaf() calls unmapped. */
		leaf = same->leaf;
	} else {
		ret = vt_ept_split_4k(ept, gpa);
		if (ret)
			return ret;
		leaf = vt_ept_leaf(ept, gpa, &level);
		if (!leaf || level != VT_EPT_LEVEL_PTE)
			return -VT_EINVAL;
		if (*leaf & VT_EPT_SHIELDED)
			return -VT_EACCES;	/* the hypervisor's own page */
	}
	wp->identity = same ? same->identity : *leaf;
	wp->protected_entry = wp->identity;
	wp->leaf = leaf;
	wp->gpa = gpa;
	wp->gva = gva_page;
	wp->used = true;
	return 0;
}

static struct vt_watch *vt_watch_find(const struct vt_watch *want)
{
	u32 i;

	for (i = 0; i < VT_WATCH_MAX; i++) {
		struct vt_watch *w = &vt_hooks.watch[i];

		if (w->used && w->probe == want->probe && w->type == want->type && w->gva == want->gva &&
		    w->len == want->len)
			return w;
	}
	return NULL;
}

/* The frame of each linear page the range covers: the one given, or translated through cpu. */
static int vt_watch_page_gpa(u64 page, u32 cpu, u64 given, u64 *gpa)
{
	if (given != VT_WATCH_TRANSLATE) {
		*gpa = given;
		return 0;
	}
	if (vt_hooks.translate(cpu, page, gpa))
		return -VT_EINVAL;
	*gpa &= VT_PAGE_MASK;
	return 0;
}

static int vt_watch_insert_locked(const struct vt_watch *want, u32 cpu, u64 gpa_given)
{
	struct vt_watch *w = NULL;
	u64 page, gpa;
	int ret = 0;
	u32 i;

	if (vt_watch_find(want))
		return 0;	/* gdb: Z packets are idempotent */
	for (i = 0; i < VT_WATCH_MAX && !w; i++)
		if (!vt_hooks.watch[i].used)
			w = &vt_hooks.watch[i];
	if (!w)
		return -VT_ENOSPC;
	*w = *want;
	w->used = true;
	for (page = want->gva & VT_PAGE_MASK; page < want->gva + want->len && !ret; page += VT_PAGE_SIZE) {
		ret = vt_watch_page_gpa(page, cpu, gpa_given, &gpa);
		if (!ret)
			ret = vt_watch_add_page(page, gpa);
	}
	if (ret)
		w->used = false;
	vt_watch_gc();
	vt_hooks_ept_changed();
	return ret;
}

static int vt_watch_insert_checked(const struct vt_watch *want, u32 cpu, u64 gpa_given)
{
	int ret;

	if (want->type != VT_POINT_WRITE && want->type != VT_POINT_READ && want->type != VT_POINT_ACCESS)
		return -VT_EINVAL;
	if (!vt_hooks.hv)
		return -VT_ENODEV;
	if (!want->len || want->gva + want->len < want->gva)
		return -VT_EINVAL;
	if (gpa_given == VT_WATCH_TRANSLATE && !vt_hooks.translate)
		return -VT_EINVAL;
	/* The access is completed by a single step (single_step.h). */
	if (!vt_single_step_supported(vt_hooks.hv))
		return -VT_EOPNOTSUPP;
	vt_hooks_lock();
	ret = vt_watch_insert_locked(want, cpu, gpa_given);
	vt_hooks_unlock();
	return ret;
}

int vt_watch_insert(enum vt_dbg_point type, u64 gva, u64 len, u32 cpu)
{
	const struct vt_watch want = { .type = type, .gva = gva, .len = len };

	return vt_watch_insert_checked(&want, cpu, VT_WATCH_TRANSLATE);
}

int vt_watch_insert_probe(enum vt_dbg_point type, u64 gva, u64 len, u64 gpa)
{
	const struct vt_watch want = { .probe = true, .type = type, .gva = gva, .len = len };

	if (!len || (gva & VT_PAGE_MASK) != ((gva + len - 1) & VT_PAGE_MASK) || (gpa & ~VT_PAGE_MASK))
		return -VT_EINVAL;	/* one page, whose frame the caller found */
	return vt_watch_insert_checked(&want, 0, gpa);
}

int vt_watch_remove(enum vt_dbg_point type, u64 gva, u64 len)
{
	const struct vt_watch want = { .type = type, .gva = gva, .len = len };
	struct vt_watch *w;

	vt_hooks_lock();
	w = vt_watch_find(&want);
	if (w) {
		w->used = false;
		vt_watch_gc();
		vt_hooks_ept_changed();
	}
	vt_hooks_unlock();
	return 0;
}

/* The debugger's ranges (probe false) or the watch probes'; the hooks' lock held. */
void vt_watch_clear_owner(bool probe)
{
	u32 i;

	for (i = 0; i < VT_WATCH_MAX; i++)
		if (vt_hooks.watch[i].probe == probe)
			vt_hooks.watch[i].used = false;
	vt_watch_gc();
}

void vt_watch_clear_all(void)
{
	u32 i;

	for (i = 0; i < VT_WATCH_MAX; i++)
		vt_hooks.watch[i].used = false;
	vt_watch_gc();
}

/* Does one linear access starting at la hit a range of this type and owner? */
static bool vt_watch_hit(enum vt_dbg_point type, bool probe, u64 la, struct vt_dbg_stop *stop)
{
	static const enum vt_dbg_stop_reason reason[] = {
		[VT_POINT_WRITE] = VT_STOP_WATCH,
		[VT_POINT_READ] = VT_STOP_RWATCH,
		[VT_POINT_ACCESS] = VT_STOP_AWATCH,
	};
	u32 i;

	for (i = 0; i < VT_WATCH_MAX; i++) {
		const struct vt_watch *w = &vt_hooks.watch[i];

		if (!w->used || w->type != type || w->probe != probe)
			continue;
		if (la < w->gva ? w->gva - la > VT_WATCH_ACCESS_MAX - 1 : la - w->gva >= w->len)
			continue;
		stop->reason = reason[type];
		stop->data_addr = la > w->gva ? la : w->gva;
		return true;
	}
	return false;
}

static bool vt_watch_hit_any(const struct vt_access *a, bool probe, u64 la, struct vt_dbg_stop *stop)
{
	if (a->write && (vt_watch_hit(VT_POINT_WRITE, probe, la, stop) ||
			 vt_watch_hit(VT_POINT_ACCESS, probe, la, stop)))
		return true;
	return a->read && (vt_watch_hit(VT_POINT_READ, probe, la, stop) ||
			   vt_watch_hit(VT_POINT_ACCESS, probe, la, stop));
}

/*
 * Judge an access once its instruction completed. The linear address is
 * the exit's when the CPU reported it (qualification bits 7 and 8);
 * otherwise each linear page the frame was watched through is a candidate.
 */
bool vt_watch_match(const struct vt_access *a, bool probe, struct vt_dbg_stop *stop)
{
	u64 off = a->gpa & (VT_PAGE_SIZE - 1);
	u32 i;

	if (a->paging)
		return false;	/* the CPU walking guest page tables, not the program */
	if (a->gla_valid)
		return vt_watch_hit_any(a, probe, a->gla, stop);
	for (i = 0; i < VT_WATCH_PAGES_MAX; i++) {
		const struct vt_watch_page *wp = &vt_hooks.wpage[i];

		if (wp->used && wp->gpa == (a->gpa & VT_PAGE_MASK) &&
		    vt_watch_hit_any(a, probe, wp->gva + off, stop))
			return true;
	}
	return false;
}

/* The CPU reading or updating a guest paging-structure entry (qualification bit 7 = 1, bit 8 = 0). */
static bool vt_is_page_walk(u64 qual)
{
	return (qual & EPT_VIOLATION_GVA_IS_VALID) && !(qual & EPT_VIOLATION_GVA_TRANSLATED);
}

static void vt_watch_record(struct vt_hooks_cpu *c, u64 gpa, u64 qual)
{
	struct vt_step *s = &c->step;
	struct vt_access *a;

	if (!(qual & (EPT_VIOLATION_ACC_READ | EPT_VIOLATION_ACC_WRITE)) ||
	    s->accesses == VT_STEP_PAGES)
		return;
	a = &s->access[s->accesses++];
	a->gpa = gpa;
	a->read = qual & EPT_VIOLATION_ACC_READ;
	a->write = qual & EPT_VIOLATION_ACC_WRITE;
	a->gla_valid = (qual & EPT_VIOLATION_GVA_IS_VALID) &&
		       (qual & EPT_VIOLATION_GVA_TRANSLATED);
	a->paging = vt_is_page_walk(qual);
	a->gla = a->gla_valid ? vt_vmread_or0(GUEST_LINEAR_ADDRESS) : 0;
}

enum vt_hook_result vt_watch_on_violation(struct vt_vcpu *vcpu, u64 gpa, u64 qual)
{
	struct vt_watch_page *wp = vt_watch_find_page(gpa);
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);

	if (!wp || !c)
		return VT_HOOK_NOT_MINE;
	if (!vt_step_add(c, wp->gpa, VT_STEP_WATCH)) {
		vt_root_report(vcpu, VT_RE_TOO_MANY_PAGES, VT_STEP_PAGES, 0, 0, 0);
		return VT_HOOK_NOT_MINE;
	}
	if (!c->step.active)
		c->step.rip = vt_vmread_or0(GUEST_RIP);
	vt_watch_record(c, gpa, qual);
	vt_hooks.stats.watch_steps++;
	vt_hooks.stats.watch_walks += vt_is_page_walk(qual);
	return vt_step_begin(vcpu, c);
}
