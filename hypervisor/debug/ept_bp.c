// SPDX-License-Identifier: GPL-2.0
/*
 * Z0: hidden software breakpoints as an EPT split view (SDM Vol. 3C 29.3).
 *
 * A page with breakpoints has two views, one at a time in its 4 KiB leaf:
 *  - execute view: the leaf maps a shadow copy that holds 0xCC at each
 *    breakpoint, X=1 R=0 W=0 (execute-only: IA32_VMX_EPT_VPID_CAP[0]);
 *  - data view: the leaf maps the original frame, R=1 W=0 X=0.
 * A read in the execute view faults and flips to the data view, so the
 * guest reads the original bytes and never sees 0xCC. A fetch in the data
 * view flips back after re-copying the original into the shadow and
 * re-applying the 0xCC bytes.
 *
 * A write in either view (the kernel's own text writes: alternatives,
 * static keys, ftrace, through text_poke's alias) runs once on the original
 * frame under MTF, in the writing CPU's own view of the EPT (step.c), and
 * the step's end re-copies the shadow in place, so the new bytes run on
 * every CPU from the write's next instruction on, as they would on a bare
 * CPU once the kernel's sync_core IPIs arrive: a CPU still caching the
 * execute view maps that same shadow frame, and no INVEPT could reach it
 * in time. The other CPUs never see the original frame executable.
 *
 * Other CPUs may still hold the previous view in their TLBs: a stale
 * execute view only runs the shadow (right), a stale data view only reads
 * the original (right). A violation that the current entry already allows
 * is one of those and is retried after a local INVEPT. A flip needs no
 * INVEPT on the faulting CPU: the violation itself invalidated the
 * mappings used to translate that address (SDM 3C 29.4.3.1).
 */
#include "hooks_priv.h"
#include "probe_points.h"
#include "switch_trigger.h"
#include "insn.h"
#include "../core/intrin.h"
#include <vtice/ioctl.h>

int vt_bp_alloc(u32 shadow_pages)
{
	u32 i;

	if (!shadow_pages)
		return 0;
	vt_hooks.split = vt_hooks_alloc(shadow_pages * sizeof(struct vt_split_page),
					&vt_hooks.split_pages);
	if (!vt_hooks.split)
		return -VT_ENOMEM;
	for (i = 0; i < shadow_pages; i++) {
		struct vt_split_page *p = &vt_hooks.split[i];

		p->shadow = vt_os_alloc_pages(1);
		if (!p->shadow)
			return -VT_ENOMEM;
		p->shadow_pa = vt_os_virt_to_phys(p->shadow);
		vt_hooks.nr_split++;
	}
	vt_hooks.nr_bp = shadow_pages * VT_BP_PER_SHADOW;
	if (vt_hooks.nr_bp < VT_BP_MIN)
		vt_hooks.nr_bp = VT_BP_MIN;
	vt_hooks.bp = vt_hooks_alloc(vt_hooks.nr_bp * sizeof(struct vt_sw_bp),
				     &vt_hooks.bp_pages);
	if (!vt_hooks.bp) {
		vt_hooks.nr_bp = 0;
		return -VT_ENOMEM;
	}
	return 0;
}

int vt_bp_shield(void)
{
	struct vt_hv *hv = vt_hooks.hv;
	int ret = 0;
	u32 i;

	if (vt_hooks.split)
		ret = vt_hv_hide(hv, vt_hooks.split, vt_hooks.split_pages);
	if (!ret && vt_hooks.bp)
		ret = vt_hv_hide(hv, vt_hooks.bp, vt_hooks.bp_pages);
	for (i = 0; !ret && i < vt_hooks.nr_split; i++)
		ret = vt_hv_hide(hv, vt_hooks.split[i].shadow, 1);
	return ret;
}

void vt_bp_free(void)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_split; i++)
		vt_os_free_pages(vt_hooks.split[i].shadow, 1);
	if (vt_hooks.split)
		vt_os_free_pages(vt_hooks.split, vt_hooks.split_pages);
	if (vt_hooks.bp)
		vt_os_free_pages(vt_hooks.bp, vt_hooks.bp_pages);
	vt_hooks.split = NULL;
	vt_hooks.bp = NULL;
	vt_hooks.nr_split = vt_hooks.nr_bp = 0;
}

struct vt_split_page *vt_bp_find_page(u64 gpa)
{
	u64 base = gpa & ~(VT_PAGE_SIZE - 1);
	u32 i;

	for (i = 0; i < vt_hooks.nr_split; i++)
		if (vt_hooks.split[i].used && vt_hooks.split[i].gpa == base)
			return &vt_hooks.split[i];
	return NULL;
}

/* The breakpoint of this kind at gva. */
static struct vt_sw_bp *vt_bp_find(u64 gva, enum vt_bp_kind kind)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_bp; i++)
		if (vt_hooks.bp[i].used && vt_hooks.bp[i].gva == gva &&
		    vt_hooks.bp[i].kind == kind)
			return &vt_hooks.bp[i];
	return NULL;
}

static u32 *vt_bp_counter(enum vt_bp_kind kind)
{
	switch (kind) {
	case VT_BP_GUARD:
		return &vt_hooks.guards_used;
	case VT_BP_PROBE:
		return &vt_hooks.probes_used;
	case VT_BP_SWITCH:
		return &vt_hooks.switches_used;
	default:
		return &vt_hooks.bps_used;
	}
}

bool vt_bp_page_only_guards(const struct vt_split_page *p)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_bp; i++)
		if (vt_hooks.bp[i].used && vt_hooks.bp[i].kind != VT_BP_GUARD &&
		    (vt_hooks.bp[i].gpa & ~(VT_PAGE_SIZE - 1)) == p->gpa)
			return false;
	return true;
}

static const u8 *vt_bp_original(const struct vt_split_page *p)
{
	return vt_os_phys_to_virt(p->identity & VMX_EPT_ADDR_MASK);
}

/* The shadow = the original now, with 0xCC at every breakpoint. */
static void vt_bp_sync_shadow(struct vt_split_page *p)
{
	u64 bits;
	u32 w;

	vt_memcpy(p->shadow, vt_bp_original(p), VT_PAGE_SIZE);
	for (w = 0; w < VT_ARRAY_SIZE(p->offs); w++)
		for (bits = p->offs[w]; bits; bits &= bits - 1)
			p->shadow[w * 64 + __builtin_ctzll(bits)] = VT_INT3;
}

static void vt_bp_set_entry(struct vt_split_page *p, u64 entry, bool exec_view)
{
	p->exec_view = exec_view;
	VT_STORE_RELEASE(*p->leaf, entry);
}

static void vt_bp_exec_view(struct vt_split_page *p)
{
	vt_bp_set_entry(p, p->shadow_pa | (p->identity & VT_EPT_KEEP_MASK) |
			VMX_EPT_EXECUTABLE_MASK, true);
}

static void vt_bp_data_view(struct vt_split_page *p)
{
	vt_bp_set_entry(p, (p->identity & ~VMX_EPT_RWX_MASK) | VMX_EPT_READABLE_MASK, false);
}

static struct vt_split_page *vt_bp_free_page(void)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_split; i++)
		if (!vt_hooks.split[i].used)
			return &vt_hooks.split[i];
	return NULL;
}

/* Put a page under a split view; its leaf is split down to 4 KiB first. */
static int vt_bp_new_page(u64 base, struct vt_split_page **out)
{
	struct vt_ept *ept = &vt_hooks.hv->ept;
	struct vt_split_page *p;
	int level, ret;
	u64 *leaf;

	if (vt_watch_find_page(base))
		return -VT_EBUSY;	/* one page, one kind of hook */
	p = vt_bp_free_page();
	if (!p)
		return -VT_ENOMEM;	/* shadow pool exhausted */
	ret = vt_ept_split_4k(ept, base);
	if (ret)
		return ret;
	leaf = vt_ept_leaf(ept, base, &level);
	if (!leaf || level != VT_EPT_LEVEL_PTE)
		return -VT_EINVAL;
	if (*leaf & VT_EPT_SHIELDED)
		return -VT_EACCES;	/* the hypervisor's own page (core/shield.h) */
	/* Uncacheable: MMIO, not text. Never copy device memory into a shadow. */
	if (((*leaf >> VMX_EPT_MT_EPTE_SHIFT) & 7) == MTRR_TYPE_UNCACHABLE)
		return -VT_EINVAL;
	vt_memset(p->offs, 0, sizeof(p->offs));
	p->used = true;
	p->gpa = base;
	p->leaf = leaf;
	p->identity = *leaf;
	p->bps = 0;
	*out = p;
	return 0;
}

static struct vt_sw_bp *vt_bp_free_record(void)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_bp; i++)
		if (!vt_hooks.bp[i].used)
			return &vt_hooks.bp[i];
	return NULL;
}

static int vt_bp_insert_locked(u64 gva, u64 gpa, enum vt_bp_kind kind)
{
	u64 base = gpa & ~(VT_PAGE_SIZE - 1);
	u32 off = gpa & (VT_PAGE_SIZE - 1);
	struct vt_split_page *p;
	struct vt_sw_bp *b;
	int ret;

	/* gdb: Z/z should be idempotent (a packet may arrive twice). */
	if (vt_bp_find(gva, kind))
		return 0;
	b = vt_bp_free_record();
	if (!b)
		return -VT_ENOSPC;
	p = vt_bp_find_page(base);
	if (!p) {
		ret = vt_bp_new_page(base, &p);
		if (ret)
			return ret;
	}
	b->used = true;
	b->kind = kind;
	b->gva = gva;
	b->gpa = gpa;
	p->bps++;
	(*vt_bp_counter(kind))++;
	p->offs[off / 64] |= VT_BIT(off % 64);
	vt_bp_sync_shadow(p);
	vt_bp_exec_view(p);
	vt_hooks_ept_changed();
	return 0;
}

static int vt_bp_insert_kind(u64 gva, u64 gpa, enum vt_bp_kind kind)
{
	int ret;

	if (!vt_hooks.hv)
		return -VT_ENODEV;
	if (!(vt_hooks.hv->caps.flags & VTICE_CAP_EPT_EXEC_ONLY))
		return -VT_EOPNOTSUPP;	/* X=1 R=0 would be a misconfiguration */
	vt_hooks_lock();
	ret = vt_bp_insert_locked(gva, gpa, kind);
	vt_hooks_unlock();
	return ret;
}

int vt_bp_insert(u64 gva, u64 gpa)
{
	return vt_bp_insert_kind(gva, gpa, VT_BP_USER);
}

int vt_bp_guard(u64 gva, u64 gpa)
{
	return vt_bp_insert_kind(gva, gpa, VT_BP_GUARD);
}

int vt_bp_probe_insert(u64 gva, u64 gpa)
{
	return vt_bp_insert_kind(gva, gpa, VT_BP_PROBE);
}

int vt_bp_switch_insert(u64 gva, u64 gpa)
{
	return vt_bp_insert_kind(gva, gpa, VT_BP_SWITCH);
}

bool vt_bp_switch_planted(void)
{
	return VT_READ_ONCE(vt_hooks.switches_used) != 0;
}

static bool vt_bp_gpa_shared(const struct vt_sw_bp *self)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_bp; i++)
		if (vt_hooks.bp[i].used && &vt_hooks.bp[i] != self &&
		    vt_hooks.bp[i].gpa == self->gpa)
			return true;
	return false;
}

static void vt_bp_remove_locked(struct vt_sw_bp *b)
{
	struct vt_split_page *p = vt_bp_find_page(b->gpa);
	u32 off = b->gpa & (VT_PAGE_SIZE - 1);

	if (!vt_bp_gpa_shared(b) && p) {
		p->offs[off / 64] &= ~VT_BIT(off % 64);
		p->shadow[off] = vt_bp_original(p)[off];
	}
	b->used = false;
	(*vt_bp_counter(b->kind))--;
	if (p && --p->bps == 0) {
		VT_STORE_RELEASE(*p->leaf, p->identity);
		p->used = false;
	}
	vt_hooks_ept_changed();
}

int vt_bp_remove(u64 gva)
{
	struct vt_sw_bp *b;

	vt_hooks_lock();
	b = vt_bp_find(gva, VT_BP_USER);
	if (b)
		vt_bp_remove_locked(b);
	vt_hooks_unlock();
	return 0;
}

/* Every breakpoint of one kind goes (called with the lock held). */
void vt_bp_clear_kind(enum vt_bp_kind kind)
{
	u32 i;

	for (i = 0; i < vt_hooks.nr_bp; i++)
		if (vt_hooks.bp[i].used && vt_hooks.bp[i].kind == kind)
			vt_bp_remove_locked(&vt_hooks.bp[i]);
}

void vt_bp_probe_clear(void)
{
	vt_hooks_lock();
	vt_bp_clear_kind(VT_BP_PROBE);
	vt_hooks_unlock();
}

void vt_bp_switch_clear(void)
{
	vt_hooks_lock();
	vt_bp_clear_kind(VT_BP_SWITCH);
	vt_hooks_unlock();
}

/* Detach: the debugger's breakpoints go; crash guards and probes stay. */
void vt_bp_clear_all(void)
{
	vt_bp_clear_kind(VT_BP_USER);
}

void vt_hooks_text_written(u64 gpa, u32 len)
{
	u64 page;

	if (!len)
		return;
	vt_hooks_lock();
	for (page = gpa & ~(VT_PAGE_SIZE - 1); page < gpa + len; page += VT_PAGE_SIZE) {
		struct vt_split_page *p = vt_bp_find_page(page);

		if (p)
			vt_bp_sync_shadow(p);
	}
	vt_hooks_unlock();
}

/*
 * After an instruction was stepped on the original: the shadow takes what
 * it wrote, and the page is in the execute view. A stale data view another
 * CPU caches only reads the original, which is right.
 */
void vt_bp_rearm(u64 gpa)
{
	struct vt_split_page *p = vt_bp_find_page(gpa);

	if (!p)
		return;
	vt_bp_sync_shadow(p);
	vt_bp_exec_view(p);
}

static bool vt_bp_entry_allows(u64 entry, u64 qual)
{
	if ((qual & EPT_VIOLATION_ACC_INSTR) && !(entry & VMX_EPT_EXECUTABLE_MASK))
		return false;
	if ((qual & EPT_VIOLATION_ACC_READ) && !(entry & VMX_EPT_READABLE_MASK))
		return false;
	if ((qual & EPT_VIOLATION_ACC_WRITE) && !(entry & VMX_EPT_WRITABLE_MASK))
		return false;
	return true;
}

/*
 * One instruction run on the original frame with RWX under MTF, in this
 * CPU's own view of the EPT (step.c): the other CPUs keep the page's
 * breakpoints meanwhile. The step's end (vt_bp_rearm) re-copies the shadow.
 * A step that cannot be had leaves the page on its original frame for all,
 * its breakpoints disarmed, rather than fault on it forever.
 */
static enum vt_hook_result vt_bp_step_original(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c,
					       struct vt_split_page *p)
{
	c->last_exec_valid = false;
	vt_hooks.stats.split_steps++;
	if (vt_step_add(c, p->gpa, VT_STEP_SPLIT) &&
	    vt_step_begin(vcpu, c) == VT_HOOK_HANDLED)
		return VT_HOOK_HANDLED;
	vt_bp_set_entry(p, p->identity, false);
	vt_hooks_ept_changed();
	vt_root_report(vcpu, VT_RE_SPLIT_STEP_FAILED, p->gpa, 0, 0, 0);
	return VT_HOOK_HANDLED;
}

enum vt_hook_result vt_bp_on_violation(struct vt_vcpu *vcpu, struct vt_split_page *p,
				       u64 qual)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	u64 rip;

	if (!c)
		return VT_HOOK_NOT_MINE;
	if (vt_bp_entry_allows(VT_READ_ONCE(*p->leaf), qual)) {
		vt_hooks.stats.stale_invepts++;
		vt_hv_invept_local(vt_hooks.hv);
		return VT_HOOK_HANDLED;
	}
	rip = vt_vmread_or0(GUEST_RIP);
	if (qual & EPT_VIOLATION_ACC_INSTR) {
		vt_bp_sync_shadow(p);
		vt_bp_exec_view(p);
		vt_hooks.stats.exec_flips++;
		c->last_exec_valid = true;
		c->last_exec_gpa = p->gpa;
		c->last_exec_rip = rip;
		return VT_HOOK_HANDLED;
	}
	/* A write: stepped, so its bytes reach the shadow (the header). */
	if (qual & EPT_VIOLATION_ACC_WRITE) {
		vt_hooks.stats.text_writes++;
		return vt_bp_step_original(vcpu, c, p);
	}
	/*
	 * An instruction that is fetched from the page and reads it too
	 * (RIP-relative data in the same page) would flip the views forever:
	 * it is the very instruction of this CPU's last flip to the execute
	 * view, and is stepped as a write is.
	 */
	if (c->last_exec_valid && c->last_exec_gpa == p->gpa && c->last_exec_rip == rip)
		return vt_bp_step_original(vcpu, c, p);
	vt_bp_data_view(p);
	vt_hooks.stats.data_flips++;
	return VT_HOOK_HANDLED;
}

/*
 * An int3 that is not one of ours but is not in the guest's memory either
 * came from a view this CPU still caches although the breakpoint is gone
 * (or from a text_poke the kernel just finished): retrying the instruction
 * is what the kernel's own handler would have done.
 */
static bool vt_bp_int3_is_stale(struct vt_vcpu *vcpu, u64 rip)
{
	u64 gpa;
	u64 *leaf;
	int level;

	if (!vt_hooks.translate || vt_hooks.translate(vcpu->cpu, rip, &gpa))
		return false;
	leaf = vt_ept_leaf(&vt_hooks.hv->ept, gpa, &level);
	if (!leaf || ((*leaf >> VMX_EPT_MT_EPTE_SHIFT) & 7) == MTRR_TYPE_UNCACHABLE)
		return false;
	return *(const u8 *)vt_os_phys_to_virt(gpa) != VT_INT3;
}

/*
 * The length of a NOP that a probe may skip in root instead of stepping:
 * what a kernel function holds right past its ENDBR64 (ftrace's 5-byte
 * NOP, alternatives' NOPs), or ENDBR64 itself, which does nothing once no
 * indirect branch is pending (the int3 ran first). SDM Vol. 2B NOP: 0F 1F
 * /0 with any ModRM/SIB/disp8/disp32 form; 0 for anything else.
 */
static u32 vt_bp_nop_length(const u8 *b, u32 avail)
{
	u32 pre = 0, modrm_len;

	if (avail >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		return 4;
	if (avail >= 1 && b[0] == 0x90)
		return 1;
	if (avail >= 2 && b[0] == 0x66 && b[1] == 0x90)
		return 2;
	if (avail >= 1 && b[0] == 0x66)
		pre = 1;
	if (avail < pre + 3 || b[pre] != 0x0f || b[pre + 1] != 0x1f || (b[pre + 2] & 0x38))
		return 0;
	switch (b[pre + 2] & 0xc7) {
	case 0x00: modrm_len = 1; break;		/* [rax] */
	case 0x40: modrm_len = 2; break;		/* [rax+disp8] */
	case 0x80: modrm_len = 5; break;		/* [rax+disp32] */
	case 0x04: modrm_len = 2; break;		/* [SIB] (no disp: base != 5 assumed below) */
	case 0x44: modrm_len = 3; break;		/* [SIB+disp8] */
	case 0x84: modrm_len = 6; break;		/* [SIB+disp32] */
	default: return 0;
	}
	if ((b[pre + 2] & 0xc7) == 0x04 && avail > pre + 3 && (b[pre + 3] & 7) == 5)
		return 0;	/* SIB with base 5 and mod 0 has a disp32: not worth the case */
	if (pre + 2 + modrm_len > avail)
		return 0;
	return pre + 2 + modrm_len;
}

/*
 * An instruction root did in the guest's place (a probe's NOP, the switch
 * trigger's store) ends an STI or MOV SS shadow, as it would on the CPU.
 */
static void vt_bp_end_shadow(void)
{
	u64 intr = vt_vmread_or0(GUEST_INTERRUPTIBILITY_INFO);

	vt_vmwrite(GUEST_INTERRUPTIBILITY_INFO, intr & ~(u64)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

/*
 * A probe fired on this CPU: its record is written (probe_points.c), and
 * the CPU goes on without stopping. A NOP under the probe is skipped in
 * root (one exit per hit); any other instruction runs once on the original
 * frame under MTF in this CPU's own view, as a fetch+read one does (two
 * exits and two EPTP switches). TF set by the guest, or a step
 * already running here, also take the stepped way, so the #DB the guest
 * expects comes from the CPU.
 */
static enum vt_hook_result vt_bp_probe_continue(struct vt_vcpu *vcpu, u64 rip, u64 gpa)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	struct vt_split_page *p = vt_bp_find_page(gpa);
	u32 off = gpa & (VT_PAGE_SIZE - 1), len;

	if (!c || !p)
		return VT_HOOK_HANDLED;	/* removed meanwhile: the int3 is retried */
	len = vt_bp_nop_length(vt_bp_original(p) + off, VT_PAGE_SIZE - off);
	if (len && !(vt_vmread_or0(GUEST_RFLAGS) & X86_EFLAGS_TF) && !c->step.active && !c->tf.active) {
		vt_vmwrite(GUEST_RIP, rip + len);
		vt_bp_end_shadow();
		vt_hooks.stats.probe_skips++;
		return VT_HOOK_HANDLED;
	}
	vt_hooks.stats.probe_steps++;
	return vt_bp_step_original(vcpu, c, p);
}

/*
 * The store the switch trigger sits on (switch_trigger.h), done in root:
 * the register's value into GS base + the operand's address, through the
 * guest's own page tables, RIP past it. False when it is not that store
 * or the write fails; the caller then steps the original.
 */
static bool vt_bp_emulate_gs_store(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 rip,
				   const u8 *b, u32 avail)
{
	struct vt_gs_store st;
	struct vt_insn insn;
	u64 value, *gpr;

	if (!vt_hooks.own_mem || vt_insn_decode(b, avail, &insn) ||
	    !vt_insn_gs_store(b, insn.len, rip, &st))
		return false;
	gpr = vt_gpr(exit->regs, st.reg);
	value = gpr ? *gpr : vt_vmread_or0(GUEST_RSP);
	if (vt_hooks.own_mem(vcpu, vt_vmread_or0(GUEST_GS_BASE) + st.gs_offset, &value, sizeof(value),
			     true) != (int)sizeof(value))
		return false;
	vt_vmwrite(GUEST_RIP, rip + insn.len);
	return true;
}

/* The guest's own RFLAGS.TF, under a TF step's (single_step.h) if one is armed. */
static bool vt_bp_guest_tf(const struct vt_hooks_cpu *c)
{
	if (c->tf.active)
		return c->tf.guest_tf;
	return vt_vmread_or0(GUEST_RFLAGS) & X86_EFLAGS_TF;
}

/*
 * The switch trigger fired: the store is emulated (one exit instead of a
 * step's two). A tracer's TF
 * step armed here has run nothing yet (the int3 faulted first): it now
 * steps from past the store. TF set by the guest, or a hooks step already
 * running here, take the probes' stepped way, so the #DB the guest
 * expects comes from the CPU.
 */
static enum vt_hook_result vt_bp_switch_continue(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 rip,
						 u64 gpa)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	struct vt_split_page *p = vt_bp_find_page(gpa);
	u32 off = gpa & (VT_PAGE_SIZE - 1);

	if (!c || !p)
		return VT_HOOK_HANDLED;	/* removed meanwhile: the int3 is retried */
	if (vt_bp_guest_tf(c) || c->step.active ||
	    !vt_bp_emulate_gs_store(vcpu, exit, rip, vt_bp_original(p) + off, VT_PAGE_SIZE - off)) {
		vt_hooks.stats.probe_steps++;
		return vt_bp_step_original(vcpu, c, p);
	}
	vt_bp_end_shadow();
	vt_hooks.stats.switch_emulated++;
	return VT_HOOK_HANDLED;
}

enum vt_hook_result vt_hooks_on_breakpoint(struct vt_vcpu *vcpu, struct vt_exit *exit,
					   struct vt_dbg_stop *stop)
{
	/* INT3 is a software exception: GUEST_RIP is the INT3 itself (SDM 3C 27.1). */
	u64 rip = vt_vmread_or0(GUEST_RIP);
	struct vt_sw_bp *guard, *probe = NULL;
	enum vt_hook_result r = VT_HOOK_NOT_MINE;
	bool ours;

	vt_hooks_lock();
	ours = vt_bp_find(rip, VT_BP_USER) != NULL;
	guard = ours ? NULL : vt_bp_find(rip, VT_BP_GUARD);
	if (ours)
		vt_hooks.stats.bp_hits++;
	if (guard) {
		/* One-shot: the machine resumes through the original byte. */
		vt_hooks.stats.guard_hits++;
		vt_bp_remove_locked(guard);
	}
	if (!ours && !guard)
		probe = vt_bp_find(rip, VT_BP_PROBE);
	if (probe) {
		vt_hooks.stats.probe_hits++;
		vt_probe_on_hit(vcpu, exit, rip);
		r = vt_bp_probe_continue(vcpu, rip, probe->gpa);
	} else if (!ours && !guard) {
		/* No record: the tracer sees the CPU's new task at its entry. */
		probe = vt_bp_find(rip, VT_BP_SWITCH);
		if (probe) {
			vt_hooks.stats.switch_hits++;
			r = vt_bp_switch_continue(vcpu, exit, rip, probe->gpa);
		}
	}
	vt_hooks_unlock();
	if (ours || guard) {
		stop->cpu = vcpu->cpu;
		stop->reason = guard ? VT_STOP_CRASH : VT_STOP_SWBREAK;
		stop->data_addr = guard ? rip : 0;	/* which crash path */
		return VT_HOOK_STOP;
	}
	if (probe)
		return r;
	if (vt_probe_recent(rip) || vt_bp_int3_is_stale(vcpu, rip)) {
		vt_hooks.stats.stale_int3++;
		vt_hv_invept_local(vt_hooks.hv);
		return VT_HOOK_HANDLED;
	}
	return VT_HOOK_NOT_MINE;
}
