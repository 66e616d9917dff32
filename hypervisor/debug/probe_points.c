// SPDX-License-Identifier: GPL-2.0
/*
 * Probes (probe_points.h): the VMCALL that arms them and the record of a
 * hit. The breakpoints themselves are ept_bp.c's, of kind VT_BP_PROBE.
 */
#include "probe_points.h"
#include "hooks_priv.h"
#include "../core/exit.h"
#include "../core/intrin.h"
#include "../core/probe_fetch.h"
#include "../core/syscall_trap.h"
#include "dbg_os.h"
#include <vtice/ioctl.h>
#include <vtice/vmcall.h>

#define VT_PROBE_RECENT	256	/* addresses remembered while #BP exits are on */
/* A watch probe's range is at most 4 KiB: two pages, a WATCH each. */
#define VT_PROBE_STACK_WATCHES	(2 * VTICE_PROBE_WATCHES_MAX)

/* A watch probe's range, one page's part of it at most. */
struct vt_probe_range {
	u64 gva, len;
};

/* What a probe at addr copies at a hit beyond the arguments and the task. */
struct vt_probe_point {
	u64 addr;
	u32 program;	/* 0, or N: its hits run programs[N - 1] */
	bool copies_stack;	/* its hits copy stack_bytes of the stack */
	struct vt_fetch_totals totals;	/* what its program's COUNT, SUM, MIN, MAX or HIST counted */
};

/* Who armed the probes: one owner at a time, the other is refused (-EBUSY). */
enum vt_probes_owner {
	VT_PROBES_FREE,
	VT_PROBES_KERNEL,	/* the module's kernel side, VTICE_IOC_PROBES */
	VT_PROBES_STUB,		/* the debugger, through the stub (rsp_probes.c) */
};

struct vt_probes_state {
	enum vt_probes_owner owner;	/* set by INTERCEPT on, cleared by INTERCEPT off */
	struct vt_sys_filter filter;	/* whose hits are recorded */
	u32 stack_bytes;		/* of the stack a probe that copies it copies at a hit */
	bool more_regs;			/* each hit copies the GPRS records too */
	struct vt_probe_point points[VTICE_PROBES_MAX];	/* under the hooks' lock */
	u32 nr_points;
	/* The watch probes' ranges (one page each) whose hits copy the stack. */
	struct vt_probe_range stack_watches[VT_PROBE_STACK_WATCHES];
	u32 nr_stack_watches;
	/* Written by PROBE_FETCH before the ADD that checks and uses each. */
	struct vt_fetch_program programs[VTICE_FETCH_PROGRAMS_MAX];
	bool armed;			/* an ADD since the last CLEAR: the points' breakpoints exist */
	u64 removed;			/* PROBE_LEAVEs that removed the probes, since load */
	u64 hits;			/* recorded since load */
	u64 passed_over;		/* not recorded by the filter's or a KEEP's choice, since load */
	/*
	 * Every address probed since INTERCEPT went on: a CPU that still
	 * caches a removed probe's execute view runs its int3 until its
	 * INVEPT, and that int3 must be retried, never given to the kernel.
	 */
	u64 recent[VT_PROBE_RECENT];
	u32 nr_recent;
} VT_ROOT_STATE_TYPE;

static struct vt_probes_state vt_probes VT_ROOT_STATE;

bool vt_probe_recent(u64 rip)
{
	u32 i, n = VT_READ_ONCE(vt_probes.nr_recent);

	for (i = 0; i < n && i < VT_PROBE_RECENT; i++)
		if (VT_READ_ONCE(vt_probes.recent[i]) == rip)
			return true;
	return false;
}

bool vt_probe_remember(u64 gva)
{
	if (vt_probe_recent(gva))
		return true;
	if (vt_probes.nr_recent == VT_PROBE_RECENT)
		return false;
	__atomic_store_n(&vt_probes.recent[vt_probes.nr_recent], gva, __ATOMIC_RELAXED);
	VT_STORE_RELEASE(vt_probes.nr_recent, vt_probes.nr_recent + 1);
	return true;
}

void vt_probe_on_hit(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 rip)
{
	struct vt_probe_capture cap = {
		.more_regs = vt_probes.more_regs, .passed_over = &vt_probes.passed_over,
	};
	u32 i;

	for (i = 0; i < vt_probes.nr_points; i++)
		if (vt_probes.points[i].addr == rip) {
			if (vt_probes.points[i].program)
				cap.fetch = &vt_probes.programs[vt_probes.points[i].program - 1];
			if (vt_probes.points[i].copies_stack)
				cap.stack_bytes = vt_probes.stack_bytes;
			cap.totals = &vt_probes.points[i].totals;
			break;
		}
	if (vt_probe_event(vcpu, exit->regs, rip, &vt_probes.filter, &cap))
		__atomic_fetch_add(&vt_probes.hits, 1, __ATOMIC_RELAXED);
}

/* Does a watch probe whose hits copy the stack cover addr (the byte a hit names)? */
static bool vt_probe_watch_copies_stack(u64 addr)
{
	u32 i, n = VT_READ_ONCE(vt_probes.nr_stack_watches);

	for (i = 0; i < n && i < VT_PROBE_STACK_WATCHES; i++)
		if (addr - vt_probes.stack_watches[i].gva < vt_probes.stack_watches[i].len)
			return true;
	return false;
}

void vt_probe_on_watch(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 ip, u64 addr, u32 access)
{
	struct vt_probe_capture cap = {
		.stack_bytes = vt_probe_watch_copies_stack(addr) ? vt_probes.stack_bytes : 0,
		.more_regs = vt_probes.more_regs, .watch_access = access, .watch_ip = ip, .watch_addr = addr,
		.passed_over = &vt_probes.passed_over,
	};

	/* RIP now, past the access: where the registers and the stack are from. */
	if (vt_probe_event(vcpu, exit->regs, vt_vmread_or0(GUEST_RIP), &vt_probes.filter, &cap))
		__atomic_fetch_add(&vt_probes.hits, 1, __ATOMIC_RELAXED);
}

void vt_probe_intercept(enum vt_intercept_holder holder, bool on)
{
	/* The last holder gone: every CPU flushed the removed views before this. */
	if (!vt_hooks_intercept(holder, on))
		VT_STORE_RELEASE(vt_probes.nr_recent, 0);
}

/* comm's 16 bytes in two registers, little-endian (vmcall.h). */
static u64 vt_probe_filter(u64 pid, u64 comm_lo, u64 comm_hi)
{
	struct vt_sys_filter f = { .pid = (u32)pid };

	vt_memcpy(f.comm, &comm_lo, 8);
	vt_memcpy(f.comm + 8, &comm_hi, 8);
	if (f.comm[15])
		return (u64)VTICE_VMCALL_EINVAL;
	vt_hooks_lock();
	vt_probes.filter = f;
	vt_hooks_unlock();
	return VTICE_VMCALL_OK;
}

/* Whole records' worth, no more than a sample's (records.h); more_regs 0 or 1. */
static u64 vt_probe_stack(u64 bytes, u64 more_regs)
{
	if (bytes > VTICE_PROFILE_STACK_MAX || bytes % 16 || more_regs > 1)
		return (u64)VTICE_VMCALL_EINVAL;
	vt_hooks_lock();
	vt_probes.stack_bytes = (u32)bytes;
	vt_probes.more_regs = more_regs;
	vt_hooks_unlock();
	return VTICE_VMCALL_OK;
}

/* One op of a program no armed probe runs yet (ADD checks it whole). */
static u64 vt_probe_fetch(u64 program, u64 index, u64 op)
{
	u32 i;

	if (program >= VTICE_FETCH_PROGRAMS_MAX || index >= VTICE_FETCH_OPS_MAX)
		return (u64)VTICE_VMCALL_EINVAL;
	vt_hooks_lock();
	for (i = 0; i < vt_probes.nr_points; i++)
		if (vt_probes.points[i].program == program + 1) {
			vt_hooks_unlock();
			return (u64)VTICE_VMCALL_EINVAL;	/* a hit may be running it */
		}
	vt_probes.programs[program].ops[index] = op;
	vt_hooks_unlock();
	return VTICE_VMCALL_OK;
}

/* Field by field: a struct this size assigned whole could become a call to memset. */
static void vt_probe_point_init(struct vt_probe_point *p, u64 gva, u32 program, bool copies_stack)
{
	p->addr = gva;
	p->program = program;
	p->copies_stack = copies_stack;
	vt_fetch_totals_start(program ? &vt_probes.programs[program - 1] : NULL, &p->totals);
}

/* Known before its breakpoint exists: a hit always finds what to copy. */
static u64 vt_probe_add(u64 gva, u64 gpa, u64 program_stack)
{
	bool copies_stack = program_stack & VTICE_VMCALL_PROBE_COPIES_STACK;
	u64 program = program_stack & ~VTICE_VMCALL_PROBE_COPIES_STACK;
	int ret;

	if (!vt_hooks_intercepting(VT_INTERCEPT_PROBES))
		return (u64)VTICE_VMCALL_EINVAL;	/* an int3 could reach the kernel */
	if (program > VTICE_FETCH_PROGRAMS_MAX)
		return (u64)VTICE_VMCALL_EINVAL;
	if (!vt_probe_remember(gva))
		return (u64)(s64)-VT_ENOSPC;
	vt_hooks_lock();
	/* Under the lock PROBE_FETCH takes: the program checked is the one run. */
	if (program && !vt_fetch_valid(&vt_probes.programs[program - 1])) {
		vt_hooks_unlock();
		return (u64)VTICE_VMCALL_EINVAL;
	}
	if (vt_probes.nr_points == VTICE_PROBES_MAX) {
		vt_hooks_unlock();
		return (u64)(s64)-VT_ENOSPC;
	}
	vt_probe_point_init(&vt_probes.points[vt_probes.nr_points], gva, (u32)program, copies_stack);
	VT_STORE_RELEASE(vt_probes.nr_points, vt_probes.nr_points + 1);
	vt_probes.armed = true;
	vt_hooks_unlock();
	ret = vt_bp_probe_insert(gva, gpa);
	return ret ? (u64)(s64)ret : VTICE_VMCALL_OK;
}

/* Its hits copy the stack from now on; the hooks' lock held. */
static void vt_probe_watch_stack(u64 gva, u64 len)
{
	u32 n = vt_probes.nr_stack_watches;

	vt_probes.stack_watches[n] = (struct vt_probe_range){ gva, len };
	VT_STORE_RELEASE(vt_probes.nr_stack_watches, n + 1);
}

/* R10 = len | type << 32, maybe COPIES_STACK (vmcall.h); the range inside the page at gpa. */
static u64 vt_probe_watch(u64 gva, u64 gpa, u64 len_type)
{
	static const enum vt_dbg_point types[] = {
		[VTICE_PROBE_WATCH_WRITE] = VT_POINT_WRITE,
		[VTICE_PROBE_WATCH_READ] = VT_POINT_READ,
		[VTICE_PROBE_WATCH_ACCESS] = VT_POINT_ACCESS,
	};
	bool copies_stack = len_type & VTICE_VMCALL_PROBE_COPIES_STACK;
	u64 type = (len_type & ~VTICE_VMCALL_PROBE_COPIES_STACK) >> 32, len = (u32)len_type;
	int ret;

	if (type < VTICE_PROBE_WATCH_WRITE || type > VTICE_PROBE_WATCH_ACCESS || !len ||
	    len > VTICE_PROBE_WATCH_LEN_MAX)
		return (u64)VTICE_VMCALL_EINVAL;
	if (copies_stack && vt_probes.nr_stack_watches == VT_PROBE_STACK_WATCHES)
		return (u64)(s64)-VT_ENOSPC;	/* only WATCH fills it, and its owner is one caller */
	ret = vt_watch_insert_probe(types[type], gva, len, gpa);
	if (ret)
		return (u64)(s64)ret;
	if (copies_stack) {
		vt_hooks_lock();
		vt_probe_watch_stack(gva, len);
		vt_hooks_unlock();
	}
	return VTICE_VMCALL_OK;
}

/*
 * The probes' breakpoints and watched ranges go; with keep_counts the
 * points stay, no longer hit, so what they counted can be read after the
 * last hit (a hit runs under the hooks' lock, which this takes).
 */
static void vt_probe_clear(bool keep_counts)
{
	vt_bp_probe_clear();
	vt_hooks_lock();
	vt_probes.armed = false;
	VT_STORE_RELEASE(vt_probes.nr_stack_watches, 0);
	vt_watch_clear_owner(true);
	if (!keep_counts) {
		vt_probes.nr_points = 0;
		vt_memset(vt_probes.programs, 0, sizeof(vt_probes.programs));
	}
	vt_hooks_ept_changed();
	vt_hooks_unlock();
}

/*
 * PROBE_LEAVE: [base, base + size) is freed next. Only breakpoints
 * matter: a watched range there is EPT protection of a frame whose next
 * owner's accesses complete as any do.
 */
static u64 vt_probe_leave(u64 base, u64 size, u64 *out)
{
	bool inside = false;
	u32 i;

	vt_hooks_lock();
	for (i = 0; vt_probes.armed && i < vt_probes.nr_points; i++)
		inside |= vt_probes.points[i].addr - base < size;
	vt_hooks_unlock();
	*out = inside;
	if (!inside)
		return VTICE_VMCALL_OK;
	vt_probe_clear(true);
	VT_STORE_RELEASE(vt_probes.removed, vt_probes.removed + 1);
	return VTICE_VMCALL_OK;
}

/* INTERCEPT on makes who the owner; off frees the probes for either. */
static void vt_probe_intercept_for(enum vt_probes_owner who, bool on)
{
	vt_probe_intercept(VT_INTERCEPT_PROBES, on);
	VT_STORE_RELEASE(vt_probes.owner, on ? who : VT_PROBES_FREE);
}

/*
 * The total of t that op (COUNT, SUM, HIST, KEY or UNREADABLE) reads with
 * its second argument b; false: b out of range, or op reads no total.
 */
static bool vt_probe_total(const struct vt_fetch_totals *t, u64 op, u64 b, u64 *out)
{
	switch (op) {
	case VTICE_VMCALL_PROBE_HIST:
		if (b >= VTICE_FETCH_HIST_BUCKETS)
			return false;
		*out = VT_READ_ONCE(t->hist[b]);
		return true;
	case VTICE_VMCALL_PROBE_KEY:
		if ((b & 0xff) >= VTICE_FETCH_KEYED_SLOTS || (b >> 8) > 3)
			return false;
		*out = vt_fetch_key_slot_read(t, (u32)(b & 0xff), (u32)(b >> 8));
		return true;
	case VTICE_VMCALL_PROBE_SUM:
		*out = VT_READ_ONCE(t->kept);
		return true;
	case VTICE_VMCALL_PROBE_UNREADABLE:
		*out = VT_READ_ONCE(t->unreadable);
		return true;
	case VTICE_VMCALL_PROBE_COUNT:
		*out = VT_LOAD_ACQUIRE(t->counted);	/* the tables read after hold these hits */
		return true;
	default:
		return false;
	}
}

/*
 * What point index (in ADD's order) counted in root, as op asks: its hits
 * (COUNT), what its SUM added up or its MIN or MAX kept (SUM), its HIST's
 * hits in bucket b (HIST), a KEYED slot's count or key (KEY), or the
 * values its counted hits found unreadable (UNREADABLE).
 */
static u64 vt_probe_count(u64 op, u64 index, u64 b, u64 *out)
{
	bool ok;

	vt_hooks_lock();
	ok = index < vt_probes.nr_points && vt_probe_total(&vt_probes.points[index].totals, op, b, out);
	vt_hooks_unlock();
	return ok ? VTICE_VMCALL_OK : (u64)VTICE_VMCALL_EINVAL;
}

/*
 * op with its arguments (R8, R9, R10 of the VMCALL): a VMCALL status, and
 * in *out what RDX returns (the hits recorded, or COUNT's count).
 */
static u64 vt_probe_op(enum vt_probes_owner who, u64 op, u64 a, u64 b, u64 c, u64 *out)
{
	enum vt_probes_owner owner = VT_READ_ONCE(vt_probes.owner);

	*out = vt_probe_hits(op == VTICE_VMCALL_PROBE_PASSED);
	if (op == VTICE_VMCALL_PROBE_COUNT || op == VTICE_VMCALL_PROBE_SUM || op == VTICE_VMCALL_PROBE_HIST ||
	    op == VTICE_VMCALL_PROBE_KEY || op == VTICE_VMCALL_PROBE_UNREADABLE)
		return vt_probe_count(op, a, b, out);	/* reading, anyone's */
	if (op == VTICE_VMCALL_PROBE_PASSED)
		return VTICE_VMCALL_OK;
	if (op == VTICE_VMCALL_PROBE_LEAVE)	/* memory going: the kernel's word, whoever armed them */
		return who == VT_PROBES_KERNEL ? vt_probe_leave(a, b, out) : (u64)VTICE_VMCALL_EINVAL;
	if (op != VTICE_VMCALL_PROBE_QUERY && owner != VT_PROBES_FREE && owner != who)
		return (u64)VTICE_VMCALL_EBUSY;
	switch (op) {
	case VTICE_VMCALL_PROBE_QUERY:
		return VTICE_VMCALL_OK;
	case VTICE_VMCALL_PROBE_INTERCEPT:
		vt_probe_intercept_for(who, a != 0);
		return VTICE_VMCALL_OK;
	case VTICE_VMCALL_PROBE_ADD:
		return vt_probe_add(a, b, c);
	case VTICE_VMCALL_PROBE_CLEAR:
		if (a & ~VTICE_VMCALL_PROBE_KEEP_COUNTS)
			return (u64)VTICE_VMCALL_EINVAL;
		vt_probe_clear(a == VTICE_VMCALL_PROBE_KEEP_COUNTS);
		return VTICE_VMCALL_OK;
	case VTICE_VMCALL_PROBE_FILTER:
		return vt_probe_filter(a, b, c);
	case VTICE_VMCALL_PROBE_STACK:
		return vt_probe_stack(a, b);
	case VTICE_VMCALL_PROBE_WATCH:
		return vt_probe_watch(a, b, c);
	case VTICE_VMCALL_PROBE_FETCH:
		return vt_probe_fetch(a, b, c);
	default:
		return (u64)VTICE_VMCALL_EINVAL;
	}
}

bool vt_probe_on_vmcall(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 func)
{
	struct vt_guest_regs *r = exit->regs;
	u64 out = VT_READ_ONCE(vt_probes.hits);

	(void)vcpu;
	if (func != VTICE_VMCALL_PROBES)
		return false;
	r->rax = vt_hooks_ready() ? vt_probe_op(VT_PROBES_KERNEL, r->rdx, r->r8, r->r9, r->r10, &out)
				  : (u64)VTICE_VMCALL_ENOSYS;
	r->rdx = out;
	vt_advance_rip(exit);
	return true;
}

int vt_probe_stub_op(u32 op, u64 a, u64 b, u64 c, u64 *out)
{
	u64 ignored;

	if (!vt_hooks_ready())
		return -VT_ENOSYS;
	return (int)(s64)vt_probe_op(VT_PROBES_STUB, op, a, b, c, out ? out : &ignored);
}

void vt_probe_stub_release(void)
{
	if (VT_READ_ONCE(vt_probes.owner) != VT_PROBES_STUB)
		return;
	vt_probe_clear(false);
	vt_probe_intercept_for(VT_PROBES_STUB, false);
}

u64 vt_probe_removed(void)
{
	return VT_LOAD_ACQUIRE(vt_probes.removed);
}

u64 vt_probe_hits(bool passed_over)
{
	return passed_over ? VT_READ_ONCE(vt_probes.passed_over) : VT_READ_ONCE(vt_probes.hits);
}

int vt_probe_shield(void)
{
	return vt_os_shield_image(&vt_probes, sizeof(vt_probes));
}
