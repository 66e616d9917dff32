// SPDX-License-Identifier: GPL-2.0
/*
 * The hook mechanisms' common part: setup, the lock, per-CPU state, the
 * per-CPU resynchronisation after a stop, and the dispatch of EPT
 * violations to the split views (ept_bp.c) or the watched pages
 * (ept_watch.c).
 *
 * Why generations: a stop changes the EPT and the debug registers on one
 * CPU, but a CPU's cached EPT translations and its DR0-DR3 are its own
 * (SDM Vol. 3C 29.4.3: INVEPT acts on the executing CPU only). Every CPU
 * compares the generations with the ones it last loaded when it resumes.
 */
#include "hooks_priv.h"
#include "../core/intrin.h"
#include <vtice/ioctl.h>

struct vt_hooks vt_hooks VT_ROOT_STATE;

void vt_hooks_lock(void)
{
	while (__atomic_exchange_n(&vt_hooks.lock, 1, __ATOMIC_ACQUIRE))
		while (VT_READ_ONCE(vt_hooks.lock))
			__builtin_ia32_pause();
}

void vt_hooks_unlock(void)
{
	__atomic_store_n(&vt_hooks.lock, 0, __ATOMIC_RELEASE);
}

/* Bound the scans of other CPUs' steps to the CPUs that ever exited here. */
static void vt_hooks_note_cpu(u32 n)
{
	u32 seen = VT_READ_ONCE(vt_hooks.cpus_seen);

	while (n >= seen &&
	       !__atomic_compare_exchange_n(&vt_hooks.cpus_seen, &seen, n + 1, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

struct vt_hooks_cpu *vt_hooks_cpu(const struct vt_vcpu *vcpu)
{
	u32 n = vcpu->cpu;

	if (!vt_hooks.cpu || n >= VT_HOOKS_MAX_CPUS)
		return NULL;
	vt_hooks_note_cpu(n);
	return &vt_hooks.cpu[n];
}

/* After any change a CPU may have cached: each CPU flushes at its next resume. */
void vt_hooks_ept_changed(void)
{
	__atomic_fetch_add(&vt_hooks.ept_gen, 1, __ATOMIC_RELEASE);
}

/* Zeroed pages for a table of `bytes`; *pages says what to free. */
void *vt_hooks_alloc(u32 bytes, u32 *pages)
{
	*pages = VT_PAGES_FOR(bytes);
	return vt_os_alloc_pages(*pages);
}

void vt_hooks_set_own_mem(vt_own_mem_fn own_mem)
{
	vt_hooks.own_mem = own_mem;
}

/* Each CPU's own view of the EPT for its steps (step.c), allocated here: root never allocates. */
static int vt_hooks_alloc_views(u32 nr_cpus)
{
	u32 i;
	int ret;

	if (nr_cpus > VT_HOOKS_MAX_CPUS)
		nr_cpus = VT_HOOKS_MAX_CPUS;
	for (i = 0; i < nr_cpus; i++) {
		ret = vt_ept_view_alloc(&vt_hooks.cpu[i].view);
		if (ret)
			return ret;
		vt_hooks.nr_views = i + 1;
	}
	return 0;
}

static void vt_hooks_free_views(void)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_views; i++)
		vt_ept_view_free(&vt_hooks.cpu[i].view);
	vt_hooks.nr_views = 0;
}

int vt_hooks_init(struct vt_hv *hv, u32 shadow_pages, vt_gva_translate_fn translate, u32 nr_cpus)
{
	u32 i;
	int ret;

	vt_memset(&vt_hooks, 0, sizeof(vt_hooks));
	vt_hooks.hv = hv;
	vt_hooks.translate = translate;
	vt_hooks.cpu = vt_hooks_alloc(VT_HOOKS_MAX_CPUS * sizeof(struct vt_hooks_cpu),
				      &vt_hooks.cpu_pages);
	if (!vt_hooks.cpu)
		return -VT_ENOMEM;
	for (i = 0; i < VT_HOOKS_MAX_CPUS; i++)
		vt_hooks.cpu[i].guest_slot[0] = vt_hooks.cpu[i].guest_slot[1] =
		vt_hooks.cpu[i].guest_slot[2] = vt_hooks.cpu[i].guest_slot[3] = -1;
	ret = vt_hooks_alloc_views(nr_cpus);
	if (!ret)
		ret = vt_bp_alloc(shadow_pages);
	if (ret) {
		vt_hooks_fini();
		return ret;
	}
	return 0;
}

bool vt_hooks_ready(void)
{
	return vt_hooks.cpu != NULL;
}

int vt_hooks_shield(void)
{
	int ret = vt_hv_hide(vt_hooks.hv, vt_hooks.cpu, vt_hooks.cpu_pages);
	u32 i;

	for (i = 0; !ret && i < vt_hooks.nr_views; i++)
		ret = vt_hv_hide(vt_hooks.hv, vt_hooks.cpu[i].view.block, VT_EPT_VIEW_TABLES);

	if (!ret)
		ret = vt_bp_shield();
	return ret ? ret : vt_os_shield_image(&vt_hooks, sizeof(vt_hooks));
}

/*
 * Call before vt_hv_fini(): leaves that still map a shadow page are put back
 * to identity before the shadows are freed. After vt_hv_fini() the tables
 * are gone (and ept.pml4 is NULL), so there is nothing left to restore.
 */
void vt_hooks_fini(void)
{
	if (vt_hooks.hv && vt_hooks.hv->ept.pml4) {
		vt_bp_clear_all();
		vt_bp_clear_kind(VT_BP_PROBE);
		vt_bp_clear_kind(VT_BP_SWITCH);
		vt_watch_clear_all();
	}
	vt_bp_free();
	if (vt_hooks.cpu) {
		vt_hooks_free_views();
		vt_os_free_pages(vt_hooks.cpu, vt_hooks.cpu_pages);
	}
	vt_memset(&vt_hooks, 0, sizeof(vt_hooks));
}

/*
 * #BP exits only while a Z0 exists: Linux executes int3 itself (text_poke,
 * kprobes, static calls) and those exits would be pure cost otherwise.
 * Only the bit this code set is cleared again.
 */
static void vt_hooks_sync_bp_intercept(struct vt_hooks_cpu *c)
{
	bool want = VT_READ_ONCE(vt_hooks.bps_used) + VT_READ_ONCE(vt_hooks.guards_used) != 0 ||
		    VT_READ_ONCE(vt_hooks.intercept_holders);

	if (want == c->bp_intercept)
		return;
	/* A TF step intercepts every vector until it ends (single_step.c). */
	if (!want && c->tf.active)
		return;
	if (!vt_set_exception_intercept(X86_TRAP_BP, want))
		c->bp_intercept = want;
}

u32 vt_hooks_intercept(enum vt_intercept_holder holder, bool on)
{
	if (on)
		return __atomic_or_fetch(&vt_hooks.intercept_holders, (u32)holder, __ATOMIC_RELEASE);
	return __atomic_and_fetch(&vt_hooks.intercept_holders, ~(u32)holder, __ATOMIC_RELEASE);
}

bool vt_hooks_intercepting(enum vt_intercept_holder holder)
{
	return VT_READ_ONCE(vt_hooks.intercept_holders) & (u32)holder;
}

void vt_hooks_sync_views(struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	u64 gen;

	if (!c)
		return;
	gen = VT_LOAD_ACQUIRE(vt_hooks.ept_gen);
	if (c->ept_seen != gen) {
		vt_hv_invept_local(vt_hooks.hv);
		/* A step's view copied tables that may have changed meanwhile. */
		if (c->step.active) {
			vt_hooks_lock();
			vt_step_view_resync(vcpu, c);
			vt_hooks_unlock();
		}
		c->ept_seen = gen;
	}
	vt_hooks_sync_bp_intercept(c);
}

void vt_hooks_on_resume(struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	u64 gen;

	if (!c)
		return;
	vt_hooks_sync_views(vcpu);
	gen = VT_LOAD_ACQUIRE(vt_hooks.dr_gen);
	if (c->dr_seen != gen) {
		vt_dr_sync(vcpu, c);
		c->dr_seen = gen;
	}
}

/* Detach: identity EPT everywhere we touched, the guest's own DRs back. */
void vt_hooks_remove_all(void)
{
	vt_hooks_lock();
	vt_bp_clear_all();
	vt_watch_clear_owner(false);	/* watch probes are the probes' owner's */
	vt_dr_clear_all();
	vt_hooks_ept_changed();
	vt_hooks_unlock();
}

/*
 * A violation the current entry allows: this CPU still cached the rights a
 * hook had taken away and another CPU has given back while it ran (watch
 * probes are removed with the machine running; INVEPT acts on the
 * executing CPU only, SDM Vol. 3C 29.4.3). Flushing and retrying is all
 * it needs.
 */
static bool vt_hooks_stale_violation(u64 gpa, u64 qual)
{
	static const u64 rights[3] = { VMX_EPT_READABLE_MASK, VMX_EPT_WRITABLE_MASK, VMX_EPT_EXECUTABLE_MASK };
	u64 *leaf, need = 0;
	int level;
	u32 i;

	if (!vt_hooks.hv)
		return false;
	leaf = vt_ept_leaf(&vt_hooks.hv->ept, gpa, &level);
	for (i = 0; i < 3; i++)
		if (qual & VT_BIT(i))	/* SDM Table 28-7: bits 0-2, the access that faulted */
			need |= rights[i];
	if (!leaf || !need || (VT_READ_ONCE(*leaf) & need) != need)
		return false;
	vt_hv_invept_local(vt_hooks.hv);
	return true;
}

enum vt_hook_result vt_hooks_on_ept_violation(struct vt_vcpu *vcpu, struct vt_exit *exit,
					      u64 gpa, u64 qual, struct vt_dbg_stop *stop)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	bool stepping = c && c->step.active;
	struct vt_split_page *p;
	enum vt_hook_result r;

	(void)exit;
	(void)stop;	/* a watch hit is reported when the access completes (MTF) */
	vt_hooks_lock();
	p = vt_bp_find_page(gpa);
	if (p)
		r = vt_bp_on_violation(vcpu, p, qual);
	else
		r = vt_watch_on_violation(vcpu, gpa, qual);
	if (r == VT_HOOK_NOT_MINE && vt_hooks_stale_violation(gpa, qual))
		r = VT_HOOK_HANDLED;
	/*
	 * A violation in the middle of a step: in the step's view, which holds
	 * copies of the shared tables, so whatever this changed in the shared
	 * ones (a flip of another page, a page the step added) reaches the
	 * view too. The one place a running step's view is rebuilt for it.
	 */
	if (stepping && c->step.active && r == VT_HOOK_HANDLED)
		r = vt_step_view_resync(vcpu, c);
	vt_hooks_unlock();
	return r;
}

void vt_hooks_get_stats(struct vt_hooks_stats *out)
{
	u32 i;

	vt_hooks_lock();
	*out = vt_hooks.stats;
	out->bps = vt_hooks.bps_used;
	out->guards = vt_hooks.guards_used;
	for (i = 0; i < vt_hooks.nr_split; i++) {
		if (!vt_hooks.split[i].used)
			continue;
		if (vt_bp_page_only_guards(&vt_hooks.split[i]))
			out->guard_pages++;
		else
			out->bp_pages++;
	}
	for (i = 0; i < VT_WATCH_MAX; i++)
		out->watches += vt_hooks.watch[i].used;
	for (i = 0; i < VT_WATCH_PAGES_MAX; i++)
		out->watch_pages += vt_hooks.wpage[i].used;
	out->hw_bps = vt_hooks.hw_count;
	vt_hooks_unlock();
}
