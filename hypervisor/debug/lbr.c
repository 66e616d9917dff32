// SPDX-License-Identifier: GPL-2.0
/*
 * Last branch records at a crash (lbr.h, docs/lbr.md). The model table and
 * the record formats follow the SDM, Vol. 3B chapter 18 ("Last Branch,
 * Interrupt, and Exception Recording" for each microarchitecture, and
 * 18.4.8.1 for IA32_PERF_CAPABILITIES.LBR_FMT).
 */
#include "lbr.h"
#include "dbg_os.h"
#include "../core/exit.h"
#include "../core/intrin.h"
#include "../core/os.h"
#include <vtice/vmcall.h>

/* Where a family of models keeps its stack; SDM Vol. 3B Table 18-4 and on. */
struct vt_lbr_layout {
	u8 nr;
	u16 from, to;
	bool select;
};

enum { VT_LBR_CORE2, VT_LBR_ATOM, VT_LBR_SLM, VT_LBR_NHM, VT_LBR_SKL, VT_LBR_KNL };

static const struct vt_lbr_layout vt_lbr_layouts[] = {
	[VT_LBR_CORE2] = { 4, MSR_LBR_CORE_FROM, MSR_LBR_CORE_TO, false },
	[VT_LBR_ATOM] = { 8, MSR_LBR_CORE_FROM, MSR_LBR_CORE_TO, false },
	[VT_LBR_SLM] = { 8, MSR_LBR_CORE_FROM, MSR_LBR_CORE_TO, true },
	[VT_LBR_NHM] = { 16, MSR_LBR_NHM_FROM, MSR_LBR_NHM_TO, true },
	/* Skylake and later big cores; Goldmont, Goldmont Plus, Tremont */
	[VT_LBR_SKL] = { 32, MSR_LBR_NHM_FROM, MSR_LBR_NHM_TO, true },
	[VT_LBR_KNL] = { 8, MSR_LBR_NHM_FROM, MSR_LBR_NHM_TO, true },
};

/* Family 6 DisplayModel -> layout. */
static const struct {
	u8 model, layout;
} vt_lbr_models[] = {
	{ 0x0f, VT_LBR_CORE2 }, { 0x16, VT_LBR_CORE2 }, { 0x17, VT_LBR_CORE2 },
	{ 0x1d, VT_LBR_CORE2 },
	{ 0x1c, VT_LBR_ATOM }, { 0x26, VT_LBR_ATOM }, { 0x27, VT_LBR_ATOM },
	{ 0x35, VT_LBR_ATOM }, { 0x36, VT_LBR_ATOM },
	{ 0x37, VT_LBR_SLM }, { 0x4a, VT_LBR_SLM }, { 0x4c, VT_LBR_SLM }, { 0x4d, VT_LBR_SLM },
	{ 0x5a, VT_LBR_SLM }, { 0x5d, VT_LBR_SLM }, { 0x75, VT_LBR_SLM },
	/* Nehalem, Westmere, Sandy Bridge, Ivy Bridge, Haswell, Broadwell */
	{ 0x1a, VT_LBR_NHM }, { 0x1e, VT_LBR_NHM }, { 0x1f, VT_LBR_NHM }, { 0x2e, VT_LBR_NHM },
	{ 0x25, VT_LBR_NHM }, { 0x2c, VT_LBR_NHM }, { 0x2f, VT_LBR_NHM },
	{ 0x2a, VT_LBR_NHM }, { 0x2d, VT_LBR_NHM }, { 0x3a, VT_LBR_NHM }, { 0x3e, VT_LBR_NHM },
	{ 0x3c, VT_LBR_NHM }, { 0x3f, VT_LBR_NHM }, { 0x45, VT_LBR_NHM }, { 0x46, VT_LBR_NHM },
	{ 0x3d, VT_LBR_NHM }, { 0x47, VT_LBR_NHM }, { 0x4f, VT_LBR_NHM }, { 0x56, VT_LBR_NHM },
	/* Skylake, Kaby/Coffee/Comet Lake, Cannon Lake, Ice Lake, Tiger Lake, Rocket Lake */
	{ 0x4e, VT_LBR_SKL }, { 0x5e, VT_LBR_SKL }, { 0x55, VT_LBR_SKL }, { 0x8e, VT_LBR_SKL },
	{ 0x9e, VT_LBR_SKL }, { 0xa5, VT_LBR_SKL }, { 0xa6, VT_LBR_SKL }, { 0x66, VT_LBR_SKL },
	{ 0x7d, VT_LBR_SKL }, { 0x7e, VT_LBR_SKL }, { 0x6a, VT_LBR_SKL }, { 0x6c, VT_LBR_SKL },
	{ 0x8c, VT_LBR_SKL }, { 0x8d, VT_LBR_SKL }, { 0xa7, VT_LBR_SKL },
	/* Goldmont, Goldmont Plus, Tremont */
	{ 0x5c, VT_LBR_SKL }, { 0x5f, VT_LBR_SKL }, { 0x7a, VT_LBR_SKL },
	{ 0x86, VT_LBR_SKL }, { 0x96, VT_LBR_SKL }, { 0x9c, VT_LBR_SKL },
	/* Knights Landing, Knights Mill */
	{ 0x57, VT_LBR_KNL }, { 0x85, VT_LBR_KNL },
};

static struct {
	struct vt_hv *hv;
	struct vt_lbr_model m;
	struct vt_lbr_snap *snap;	/* [nr], on pages hidden from the guest */
	u32 nr, pages;
	u32 gen;		/* bumped by every crash */
	u32 open;		/* a crash stop is under way */
} VT_ROOT_STATE_TYPE vt_lbr VT_ROOT_STATE;

static bool vt_lbr_is_intel(void)
{
	struct vt_cpuid_regs r;

	vt_cpuid(0, 0, &r);
	/* "GenuineIntel" in EBX, EDX, ECX */
	return r.ebx == 0x756e6547 && r.edx == 0x49656e69 && r.ecx == 0x6c65746e;
}

/* SDM Vol. 2A CPUID: DisplayFamily and DisplayModel from leaf 1 EAX. */
static u32 vt_lbr_display_model(u32 eax)
{
	u32 family = (eax >> 8) & 0xf, model = (eax >> 4) & 0xf;

	if (family == 0x6 || family == 0xf)
		model |= ((eax >> 16) & 0xf) << 4;
	if (family == 0xf)
		family += (eax >> 20) & 0xff;
	return family << 8 | model;
}

/* Architectural LBR: CPUID.(7,0):EDX[19], depths in leaf 0x1C EAX[7:0]. */
static u32 vt_lbr_arch_depth(void)
{
	struct vt_cpuid_regs r;
	u32 depth = 0, i;

	vt_cpuid(0, 0, &r);
	if (r.eax < 0x1c)
		return 0;
	vt_cpuid(7, 0, &r);
	if (!(r.edx & CPUID_7_EDX_ARCH_LBR))
		return 0;
	vt_cpuid(0x1c, 0, &r);
	for (i = 0; i < 8; i++)
		if (r.eax & VT_BIT(i))
			depth = 8 * (i + 1);	/* bit n: a depth of 8 * (n + 1) */
	return depth;
}

static u32 vt_lbr_format(u32 leaf1_ecx)
{
	u64 caps;

	if (!(leaf1_ecx & CPUID_1_ECX_PDCM) || vt_rdmsr_safe(MSR_IA32_PERF_CAPABILITIES, &caps))
		return VTICE_LBR_FMT_NONE;
	return (u32)(caps & PERF_CAP_LBR_FMT);
}

static const struct vt_lbr_layout *vt_lbr_layout_of(u32 display)
{
	u32 i;

	if (display >> 8 != 6)
		return NULL;
	for (i = 0; i < VT_ARRAY_SIZE(vt_lbr_models); i++)
		if (vt_lbr_models[i].model == (display & 0xff))
			return &vt_lbr_layouts[vt_lbr_models[i].layout];
	return NULL;
}

static void vt_lbr_set_layout(struct vt_lbr_model *m, const struct vt_lbr_layout *l)
{
	m->nr = l->nr;
	m->from = l->from;
	m->to = l->to;
	m->has_select = l->select;
	if (m->format == LBR_FORMAT_INFO || m->format == LBR_FORMAT_INFO2)
		m->info = MSR_LBR_INFO_0;
}

void vt_lbr_detect(struct vt_lbr_model *m, u64 debugctl_caps)
{
	const struct vt_lbr_layout *l;
	struct vt_cpuid_regs r;

	vt_memset(m, 0, sizeof(*m));
	m->format = VTICE_LBR_FMT_NONE;
	if (!vt_lbr_is_intel()) {
		m->status = VTICE_LBR_NOT_INTEL;
		return;
	}
	vt_cpuid(1, 0, &r);
	m->model = vt_lbr_display_model(r.eax);
	m->format = vt_lbr_format(r.ecx);
	m->arch_depth = vt_lbr_arch_depth();
	l = vt_lbr_layout_of(m->model);
	/* Arch LBR CPUs report LBR_FMT 0x3f and keep the stack elsewhere. */
	if (m->arch_depth)
		m->status = VTICE_LBR_ARCH_ONLY;
	else if (!(debugctl_caps & VTICE_CAP_DEBUGCTL_LBR))
		m->status = VTICE_LBR_NO_DEBUGCTL;
	else if (!l || (m->format > LBR_FORMAT_INFO2 && m->format != VTICE_LBR_FMT_NONE))
		m->status = VTICE_LBR_UNKNOWN_MODEL;
	if (l && m->status == VTICE_LBR_OK)
		vt_lbr_set_layout(m, l);
}

/* Bits above `bit` become copies of it: a canonical address again. */
static u64 vt_sign_extend(u64 v, u32 bit)
{
	u32 shift = 63 - bit;

	return (u64)((s64)(v << shift) >> shift);
}

static u32 vt_lbr_info_flags(u64 info)
{
	return (info & LBR_INFO_MISPRED ? VTICE_LBR_MISPRED : 0) |
	       (info & LBR_INFO_IN_TX ? VTICE_LBR_IN_TSX : 0) |
	       (info & LBR_INFO_ABORT ? VTICE_LBR_TSX_ABORT : 0);
}

void vt_lbr_decode(u32 format, u64 from, u64 to, u64 info, struct vtice_lbr_entry *e)
{
	e->flags = 0;
	e->cycles = 0;
	switch (format) {
	case LBR_FORMAT_EIP_FLAGS:
	case LBR_FORMAT_TIME:
		/* FROM[63] mispredicted; the address below, sign-extended from bit 62 */
		e->flags = from & VT_BIT(63) ? VTICE_LBR_MISPRED : 0;
		from = vt_sign_extend(from, 62);
		if (format == LBR_FORMAT_TIME) {
			/* Goldmont: TO[63:48] counts the cycles, the address is 47:0 */
			e->cycles = (u32)(to >> 48);
			e->flags |= VTICE_LBR_CYCLES;
			to = vt_sign_extend(to, 47);
		}
		break;
	case LBR_FORMAT_EIP_FLAGS2:
		/* FROM[63] mispredicted, [62] in TSX, [61] TSX abort; address 60:0 */
		e->flags = vt_lbr_info_flags(from);
		from = vt_sign_extend(from, 60);
		break;
	case LBR_FORMAT_INFO:
	case LBR_FORMAT_INFO2:
		/* FROM and TO are plain addresses; the rest is in MSR_LBR_INFO_x */
		e->flags = vt_lbr_info_flags(info) | VTICE_LBR_CYCLES;
		e->cycles = (u32)(info & LBR_INFO_CYCLES);
		break;
	default:
		break;	/* 32-bit, LIP and EIP formats: addresses only */
	}
	e->from = from;
	e->to = to;
}

void vt_lbr_hide_stack(struct vt_hv *hv, const struct vt_lbr_model *m)
{
	if (m->status != VTICE_LBR_OK || !m->nr || m->nr > VT_LBR_VIEW_MAX)
		return;
	hv->lbr_msrs.nr = m->nr;
	hv->lbr_msrs.from = m->from;
	hv->lbr_msrs.to = m->to;
	hv->lbr_msrs.info = m->info;
}

int vt_lbr_init(struct vt_hv *hv, u32 nr_cpus)
{
	vt_memset(&vt_lbr, 0, sizeof(vt_lbr));
	vt_lbr.hv = hv;
	vt_lbr_detect(&vt_lbr.m, hv->caps.flags);
	if (vt_lbr.m.status != VTICE_LBR_OK)
		return 0;	/* nothing to record: not an error */
	vt_lbr_hide_stack(hv, &vt_lbr.m);
	vt_lbr.pages = VT_PAGES_FOR((u64)nr_cpus * sizeof(struct vt_lbr_snap));
	vt_lbr.snap = vt_os_alloc_pages(vt_lbr.pages);
	if (!vt_lbr.snap)
		return -VT_ENOMEM;
	vt_lbr.nr = nr_cpus;
	return 0;
}

/* The snapshots get the decoy; the state above gets a copy (dbg_os.h). */
int vt_lbr_shield(void)
{
	int ret = 0;

	if (vt_lbr.snap)
		ret = vt_hv_hide(vt_lbr.hv, vt_lbr.snap, vt_lbr.pages);
	return ret ? ret : vt_os_shield_image(&vt_lbr, sizeof(vt_lbr));
}

void vt_lbr_fini(void)
{
	if (vt_lbr.snap)
		vt_os_free_pages(vt_lbr.snap, vt_lbr.pages);
	vt_memset(&vt_lbr, 0, sizeof(vt_lbr));
}

const struct vt_lbr_model *vt_lbr_get_model(void)
{
	return &vt_lbr.m;
}

const struct vt_lbr_snap *vt_lbr_snapshot(u32 cpu)
{
	return vt_lbr.snap && cpu < vt_lbr.nr ? &vt_lbr.snap[cpu] : NULL;
}

/*
 * Oldest first: TOS names the most recent entry (SDM Vol. 3B 18.4.8), so
 * the walk starts one past it and wraps. Entries never written read 0.
 */
static u32 vt_lbr_read_stack(struct vtice_lbr_entry *out)
{
	const struct vt_lbr_model *m = &vt_lbr.m;
	u64 tos, from, to, info = 0;
	u32 i, idx, n = 0;

	if (vt_rdmsr_safe(MSR_LBR_TOS, &tos))
		return 0;
	for (i = 1; i <= m->nr && n < VTICE_LBR_MAX; i++) {
		idx = (u32)(tos + i) & (m->nr - 1);
		if (vt_rdmsr_safe(m->from + idx, &from) || vt_rdmsr_safe(m->to + idx, &to))
			continue;
		if (!from && !to)
			continue;
		if (m->info && vt_rdmsr_safe(m->info + idx, &info))
			info = 0;
		vt_lbr_decode(m->format, from, to, info, &out[n++]);
	}
	return n;
}

static u32 vt_lbr_flags(struct vt_vcpu *vcpu, u64 *select)
{
	u32 flags = 0;

	if ((vcpu->debugctl_shadow | vcpu->debugctl_yielded) & DEBUGCTLMSR_LBR)
		flags |= VTICE_LBR_GUEST_OWNED;
	if (vt_lbr.m.has_select && !vt_rdmsr_safe(MSR_LBR_SELECT, select))
		flags |= VTICE_LBR_SELECT_VALID;
	return flags;
}

/*
 * Runs in VMX root, where DEBUGCTL is 0 since the exit: nothing here is
 * recorded, and the stack holds the guest's branches up to that exit.
 * Only this CPU writes its snapshot; seq tells a reader on another CPU
 * that it changed under it.
 */
static void vt_lbr_save(struct vt_vcpu *vcpu, u32 event)
{
	struct vt_lbr_snap *s = &vt_lbr.snap[vcpu->cpu];
	u64 select = 0;

	VT_STORE_RELEASE(s->seq, s->seq + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	s->count = vt_lbr_read_stack(s->br);
	s->flags = vt_lbr_flags(vcpu, &select);
	s->lbr_select = select;
	s->event = event;
	s->tsc = vt_guest_tsc(vcpu);
	s->rip = vt_vmread_or0(GUEST_RIP);
	s->snapshots++;
	VT_STORE_RELEASE(s->seq, s->seq + 1);
}

static bool vt_lbr_records(const struct vt_vcpu *vcpu)
{
	return vt_lbr.snap && vcpu->cpu < vt_lbr.nr;
}

void vt_lbr_on_exit(struct vt_vcpu *vcpu)
{
	struct vt_lbr_snap *s;
	u32 gen;

	if (!vt_lbr_records(vcpu) || !VT_LOAD_ACQUIRE(vt_lbr.open))
		return;
	s = &vt_lbr.snap[vcpu->cpu];
	gen = VT_LOAD_ACQUIRE(vt_lbr.gen);
	if (s->seen_gen == gen)
		return;
	s->seen_gen = gen;
	vt_lbr_save(vcpu, VTICE_LBR_EV_PARKED);
}

/*
 * LBR stays on in the guest's DEBUGCTL; the core hides the bit from the
 * guest and steps aside while the guest uses LBR itself (exit_msr.c). A
 * callback that replaced the owned bits without LBR is undone here.
 */
void vt_lbr_pre_entry(struct vt_vcpu *vcpu)
{
	u64 wanted;

	if (!vt_lbr_records(vcpu))
		return;
	vt_lbr_on_exit(vcpu);
	wanted = vcpu->debugctl_owned | vcpu->debugctl_yielded;
	if (!(wanted & DEBUGCTLMSR_LBR) &&
	    (vcpu->hv->ctls.entry & VM_ENTRY_LOAD_DEBUG_CONTROLS))
		vt_set_debugctl_owned(vcpu, wanted | DEBUGCTLMSR_LBR);
}

void vt_lbr_crash_begin(struct vt_vcpu *vcpu, u32 event)
{
	struct vt_lbr_snap *s;

	if (!vt_lbr_records(vcpu))
		return;
	s = &vt_lbr.snap[vcpu->cpu];
	s->seen_gen = __atomic_add_fetch(&vt_lbr.gen, 1, __ATOMIC_ACQ_REL);
	vt_lbr_save(vcpu, event);
	VT_STORE_RELEASE(vt_lbr.open, 1);
}

void vt_lbr_crash_end(void)
{
	VT_STORE_RELEASE(vt_lbr.open, 0);
}

static int vt_lbr_word(u32 cpu, u32 item, u64 *out)
{
	const struct vt_lbr_snap *s = vt_lbr_snapshot(cpu);
	u32 i;

	if (!s)
		return -VT_EINVAL;
	switch (item) {
	case VTICE_VMCALL_LBR_SEQ:
		*out = VT_LOAD_ACQUIRE(s->seq);
		return 0;
	case VTICE_VMCALL_LBR_HEADER:
		*out = s->event | (u64)s->count << 8 | (u64)s->flags << 16 | (u64)s->snapshots << 32;
		return 0;
	case VTICE_VMCALL_LBR_TSC:
		*out = s->tsc;
		return 0;
	case VTICE_VMCALL_LBR_RIP:
		*out = s->rip;
		return 0;
	case VTICE_VMCALL_LBR_SELECT:
		*out = s->lbr_select;
		return 0;
	}
	if (item < VTICE_VMCALL_LBR_ENTRY || item >= VTICE_VMCALL_LBR_ENTRY + 3 * VTICE_LBR_MAX)
		return -VT_EINVAL;
	i = (item - VTICE_VMCALL_LBR_ENTRY) / 3;
	switch ((item - VTICE_VMCALL_LBR_ENTRY) % 3) {
	case 0:
		*out = s->br[i].from;
		break;
	case 1:
		*out = s->br[i].to;
		break;
	default:
		*out = s->br[i].flags | (u64)s->br[i].cycles << 32;
	}
	return 0;
}

/*
 * One word per call, returned in RDX: VMX root never writes guest memory
 * the caller names, so a kernel that passes a pointer into the
 * hypervisor's own pages gains nothing (see lbr_dev.c for the reader).
 */
bool vt_lbr_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_guest_regs *r = exit->regs;
	u64 out = 0;

	if (!vt_lbr.snap)
		r->rax = (u64)VTICE_VMCALL_ENOSYS;
	else if (vt_lbr_word((u32)(r->rdx >> 32), (u32)r->rdx, &out))
		r->rax = (u64)VTICE_VMCALL_EINVAL;
	else
		r->rax = VTICE_VMCALL_OK;
	r->rdx = out;
	vt_advance_rip(exit);
	return true;
}
