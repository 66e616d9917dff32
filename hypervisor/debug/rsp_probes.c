// SPDX-License-Identifier: GPL-2.0
/*
 * Probes through the stub (`probe` in vtice attach; docs/probes.md,
 * "Through the debug stub"): vtice's own packets that arm the probes the
 * module's VTICE_IOC_PROBES arms, and that drain each CPU's record ring,
 * where their hits go, while the machine is stopped. Each arming packet is
 * one of the kernel side's VMCALL steps (vmcall.h), in the same order:
 *
 *   QVtice:probes:arm:PID,STACK,MORE,COMM  clear, filter, stack, #BP exits on
 *   QVtice:probes:fetch:N:OPS              fetch program N (hex, 8 bytes an op)
 *   QVtice:probes:add:ADDR,PROGRAM,STACK   a hidden breakpoint probe (STACK 1: its hits copy the stack)
 *   QVtice:probes:watch:ADDR,LEN,TYPE,STACK  a watch probe (enum vtice_probe_watch_type)
 *   QVtice:probes:off                      every probe removed
 *   qVtice:probes                          -> HITS (recorded since load)
 *   qVtice:probes:passed                   -> N (hits the filter or a KEEP did not record, since load)
 *   qVtice:probes:removed                  -> N (times a module's going removed the probes, since load)
 *   qVtice:probes:counts                   -> N0,N1,... (COUNT's and SUM's hits, per address, in ADD's order)
 *   qVtice:probes:sums                     -> S0,S1,... (SUM's sums, MIN's and MAX's values, the same way)
 *   qVtice:probes:hist:I                   -> B0,B1,...,B64 (address I's HIST or LHIST buckets, ioctl.h)
 *   qVtice:probes:keys:I                   -> S0,S1,...,S31 (address I's KEYED slots:
 *                                             COUNT:KEY0:KEY1:VALUE, or 0 for a free one)
 *   QVtice:syscalls:arm:PID,LO,HI,COMM[,NRS]  the syscall trap on every CPU, as it leaves the stop
 *                                          (LO, HI: VTICE_VMCALL_SYSCALL_STRINGS's string slots;
 *                                          NRS: the syscalls recorded, VTICE_VMCALL_SYSCALL_NUMBERS's
 *                                          eight words in 64 bytes; without it, all)
 *   QVtice:syscalls:off                    ...and off
 *   qVtice:syscalls                        -> ARMED,SEEN,RECORDED (CPUs armed now; SYSCALL/SYSRET
 *                                             executed while armed, and recorded, since load)
 *   QVtice:profile:arm:HZ,STACK,PID,COMM   every CPU sampled HZ times a second, as it leaves the stop
 *                                          (STACK: bytes of kernel stack per sample)
 *   QVtice:profile:off                     ...and no longer
 *   qVtice:profile                         -> ARMED,SAMPLES (CPUs sampling now; samples recorded since load)
 *   qVtice:tsc                             -> KHZ (the TSC the records carry)
 *   qVtice:ring:CPU                        -> UNREAD,LOST (records)
 *   qXfer:vtice-ring:read:CPU:OFF,LEN      the unread records, oldest first
 *   QVtice:ring:consume:CPU,COUNT          those records taken
 *
 * Numbers are hex; COMM is the 16 NUL-padded bytes in hex. Reading is kept
 * apart from taking, so a reply lost on the line is read again. Errors:
 * Enn with the errno (E10 busy: the kernel side owns the probes).
 */
#include "rsp_priv.h"
#include "../core/os.h"
#include <vtice/ioctl.h>
#include <vtice/vmcall.h>

static bool vt_probes_supported(struct vt_rsp *r)
{
	return r->ops->probe_op && r->ops->probe_hits && r->ops->probe_count && r->ops->tsc_khz &&
	       r->ops->syscall_trap && r->ops->syscall_counts && r->ops->profile && r->ops->profile_counts &&
	       r->ops->ring_unread && r->ops->ring_record &&
	       r->ops->ring_consume;
}

static void vt_probes_status(struct vt_rsp *r, int err)
{
	if (err)
		vt_rsp_error(r, (u32)-err & 0xff);
	else
		vt_rsp_put(r, "OK");
}

static int vt_probes_op(struct vt_rsp *r, u32 op, u64 a, u64 b, u64 c)
{
	s32 cpu = vt_rsp_general_cpu(r);	/* whose page tables ADD and WATCH walk */

	return cpu < 0 ? -VT_EINVAL : r->ops->probe_op(r->ctx, (u32)cpu, op, a, b, c);
}

/* Hex numbers separated by commas, then the end of the packet. */
static bool vt_probes_numbers(struct vt_rsp_cursor *c, u64 *v, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if ((i && !vt_rsp_expect(c, ',')) || !vt_rsp_parse_hex(c, &v[i]))
			return false;
	return vt_rsp_at_end(c);
}

/* PID,STACK,MORE,COMM: whatever the stub armed before goes first. */
static int vt_probes_arm(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 v[3], comm[2] = { 0, 0 };
	u32 len = 0, i;
	int err;

	for (i = 0; i < 3; i++)
		if (!vt_rsp_parse_hex(c, &v[i]) || !vt_rsp_expect(c, ','))
			return -VT_EINVAL;
	if (!vt_rsp_unhex(c, (u8 *)comm, sizeof(comm), &len) || len != sizeof(comm) || v[0] > 0xffffffffu)
		return -VT_EINVAL;
	err = vt_probes_op(r, VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0);
	if (!err)
		err = vt_probes_op(r, VTICE_VMCALL_PROBE_FILTER, v[0], comm[0], comm[1]);
	if (!err)
		err = vt_probes_op(r, VTICE_VMCALL_PROBE_STACK, v[1], v[2], 0);
	if (!err)
		err = vt_probes_op(r, VTICE_VMCALL_PROBE_INTERCEPT, 1, 0, 0);
	return err;
}

/* N:OPS, every op of the program: those the packet leaves out are END. */
static int vt_probes_fetch(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 program, op;
	u32 len = 0, i;
	int err = 0;

	if (!vt_rsp_parse_hex(c, &program) || !vt_rsp_expect(c, ':') ||
	    !vt_rsp_unhex(c, r->scratch, VTICE_FETCH_OPS_MAX * 8, &len) || len % 8 || !vt_rsp_at_end(c))
		return -VT_EINVAL;
	for (i = 0; i < VTICE_FETCH_OPS_MAX && !err; i++) {
		op = 0;
		if (i * 8 < len)
			vt_memcpy(&op, r->scratch + i * 8, 8);
		err = vt_probes_op(r, VTICE_VMCALL_PROBE_FETCH, program, i, op);
	}
	return err;
}

/* STACK as ADD's and WATCH's R10 carry it: 0 or 1, else nothing valid. */
static bool vt_probes_stack_flag(u64 stack, u64 *flag)
{
	*flag = stack ? VTICE_VMCALL_PROBE_COPIES_STACK : 0;
	return stack <= 1;
}

/* ADDR,PROGRAM,STACK */
static int vt_probes_add(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 v[3], stack;

	if (!vt_probes_numbers(c, v, 3) || v[1] > VTICE_FETCH_PROGRAMS_MAX || !vt_probes_stack_flag(v[2], &stack))
		return -VT_EINVAL;
	return vt_probes_op(r, VTICE_VMCALL_PROBE_ADD, v[0], 0, v[1] | stack);
}

/* ADDR,LEN,TYPE,STACK: one watch per page the range covers, as root takes them. */
static int vt_probes_watch(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 v[4], at, next, end, stack;
	int err = 0;

	if (!vt_probes_numbers(c, v, 4) || !v[1] || v[1] > VTICE_PROBE_WATCH_LEN_MAX || v[0] + v[1] < v[0] ||
	    v[2] > VTICE_PROBE_WATCH_ACCESS || !vt_probes_stack_flag(v[3], &stack))
		return -VT_EINVAL;
	end = v[0] + v[1];
	for (at = v[0]; at < end && !err; at = next) {
		next = (at & ~(u64)(VT_PAGE_SIZE - 1)) + VT_PAGE_SIZE;
		if (next > end)
			next = end;
		err = vt_probes_op(r, VTICE_VMCALL_PROBE_WATCH, at, 0, (next - at) | v[2] << 32 | stack);
	}
	return err;
}

static int vt_probes_arming(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	if (vt_rsp_prefix(c, "arm:"))
		return vt_probes_arm(r, c);
	if (vt_rsp_prefix(c, "fetch:"))
		return vt_probes_fetch(r, c);
	if (vt_rsp_prefix(c, "add:"))
		return vt_probes_add(r, c);
	if (vt_rsp_prefix(c, "watch:"))
		return vt_probes_watch(r, c);
	if (vt_rsp_prefix(c, "off") && vt_rsp_at_end(c)) {
		int err = vt_probes_op(r, VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0);

		return err ? err : vt_probes_op(r, VTICE_VMCALL_PROBE_INTERCEPT, 0, 0, 0);
	}
	return -VT_EINVAL;
}

/* N hex numbers, each followed by a comma, then the 16 bytes of a NUL-ended COMM in hex. */
static bool vt_numbers_and_comm(struct vt_rsp_cursor *c, u64 *v, u32 n, char comm[16])
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!vt_rsp_parse_hex(c, &v[i]) || !vt_rsp_expect(c, ','))
			return false;
	return vt_rsp_unhex_exact(c, (u8 *)comm, 16) && !comm[15];
}

/* The end of the packet, or ",NRS": the set of syscalls recorded, whole. */
static bool vt_syscall_numbers(struct vt_rsp_cursor *c, struct vt_sys_numbers *set)
{
	set->chosen = !vt_rsp_at_end(c);
	if (!set->chosen)
		return true;
	return vt_rsp_expect(c, ',') && vt_rsp_unhex_exact(c, (u8 *)set->bits, sizeof(set->bits)) &&
	       vt_rsp_at_end(c);
}

/* ARM:PID,LO,HI,COMM[,NRS] or OFF. */
static int vt_syscalls_arming(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	struct vt_sys_stub_arm arm = { 0 };
	u64 v[3];

	if (vt_rsp_prefix(c, "off") && vt_rsp_at_end(c))
		return r->ops->syscall_trap(r->ctx, NULL);
	if (!vt_rsp_prefix(c, "arm:") || !vt_numbers_and_comm(c, v, 3, arm.filter.comm) ||
	    !vt_syscall_numbers(c, &arm.numbers) || v[0] > 0xffffffffu)
		return -VT_EINVAL;
	arm.filter.pid = (u32)v[0];
	arm.strings[0] = v[1];
	arm.strings[1] = v[2];
	return r->ops->syscall_trap(r->ctx, &arm);
}

/* ARM:HZ,STACK,PID,COMM or OFF. */
static int vt_profile_arming(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 v[3];
	char comm[16];

	if (vt_rsp_prefix(c, "off") && vt_rsp_at_end(c))
		return r->ops->profile(r->ctx, false, 0, 0, 0, "");
	if (!vt_rsp_prefix(c, "arm:") || !vt_numbers_and_comm(c, v, 3, comm) || !vt_rsp_at_end(c) || v[0] > 0xffffffffu ||
	    v[1] > 0xffffffffu || v[2] > 0xffffffffu)
		return -VT_EINVAL;
	return r->ops->profile(r->ctx, true, (u32)v[0], (u32)v[1], (u32)v[2], comm);
}

static void vt_profile_counts(struct vt_rsp *r)
{
	u64 armed, samples;

	r->ops->profile_counts(r->ctx, &armed, &samples);
	vt_rsp_put_hex(r, armed);
	vt_rsp_put(r, ",");
	vt_rsp_put_hex(r, samples);
}

static void vt_syscalls_counts(struct vt_rsp *r)
{
	u64 armed, seen, recorded;

	r->ops->syscall_counts(r->ctx, &armed, &seen, &recorded);
	vt_rsp_put_hex(r, armed);
	vt_rsp_put(r, ",");
	vt_rsp_put_hex(r, seen);
	vt_rsp_put(r, ",");
	vt_rsp_put_hex(r, recorded);
}

/* The times a module's going removed the probes (an error where nothing removes them). */
static void vt_probes_removed(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	if (!vt_rsp_at_end(c))
		vt_rsp_error(r, 0x16);
	else if (!r->ops->probe_removed)
		vt_rsp_error(r, 0x26);	/* ENOSYS: nothing removes them on this target */
	else
		vt_rsp_put_hex(r, r->ops->probe_removed(r->ctx));
}

/*
 * Each address's count, sum or unreadable reads (op: VTICE_VMCALL_PROBE_COUNT,
 * _SUM or _UNREADABLE), in ADD's order: at most VTICE_PROBES_MAX of 16 digits fit a reply.
 */
static void vt_probes_counts(struct vt_rsp *r, u32 op)
{
	u64 count;
	u32 i;

	for (i = 0; i < VTICE_PROBES_MAX && r->ops->probe_count(r->ctx, op, i, 0, &count); i++) {
		if (i)
			vt_rsp_put(r, ",");
		vt_rsp_put_hex(r, count);
	}
}

/* The I of qVtice:probes:hist:I and :keys:I, an armed address; else E16 and false. */
static bool vt_probes_index(struct vt_rsp *r, struct vt_rsp_cursor *c, u64 *index)
{
	u64 count;

	if (!vt_rsp_parse_hex(c, index) || !vt_rsp_at_end(c) || *index >= VTICE_PROBES_MAX ||
	    !r->ops->probe_count(r->ctx, VTICE_VMCALL_PROBE_COUNT, (u32)*index, 0, &count)) {
		vt_rsp_error(r, 0x16);
		return false;
	}
	return true;
}

/* qVtice:probes:hist:I: address I's HIST buckets, all VTICE_FETCH_HIST_BUCKETS; E16 past the last address. */
static void vt_probes_hist(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 index, count;
	u32 b;

	if (!vt_probes_index(r, c, &index))
		return;
	for (b = 0; b < VTICE_FETCH_HIST_BUCKETS; b++) {
		count = 0;	/* index answered above: the machine is stopped, it stays */
		r->ops->probe_count(r->ctx, VTICE_VMCALL_PROBE_HIST, (u32)index, b, &count);
		if (b)
			vt_rsp_put(r, ",");
		vt_rsp_put_hex(r, count);
	}
}

/* CPU, for the ring packets: a CPU the target has, else E16. */
static bool vt_ring_cpu(struct vt_rsp *r, struct vt_rsp_cursor *c, u64 *cpu)
{
	if (!vt_rsp_parse_hex(c, cpu) || *cpu >= vt_rsp_cpus(r)) {
		vt_rsp_error(r, 0x16);
		return false;
	}
	return true;
}

static void vt_ring_state(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 cpu, unread, lost;

	if (!vt_ring_cpu(r, c, &cpu))
		return;
	if (!vt_rsp_at_end(c) || !r->ops->ring_unread(r->ctx, (u32)cpu, &unread, &lost)) {
		vt_rsp_error(r, 0x16);
		return;
	}
	vt_rsp_put_hex(r, unread);
	vt_rsp_put(r, ",");
	vt_rsp_put_hex(r, lost);
}

/* qXfer:vtice-ring:read:CPU:OFF,LEN: the unread records as one object. */
static void vt_ring_read(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 cpu, off, len, unread, lost;

	if (!vt_ring_cpu(r, c, &cpu) || !vt_rsp_expect(c, ':') || !vt_rsp_xfer_window(r, c, &off, &len))
		return;
	if (!r->ops->ring_unread(r->ctx, (u32)cpu, &unread, &lost)) {
		vt_rsp_error(r, 0x16);
		return;
	}
	vt_rsp_xfer_records(r, (u32)cpu, unread, r->ops->ring_record, off, len);
}

static void vt_ring_consume(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 cpu, count;

	if (!vt_ring_cpu(r, c, &cpu))
		return;
	if (!vt_rsp_expect(c, ',') || !vt_rsp_parse_hex(c, &count) || !vt_rsp_at_end(c)) {
		vt_rsp_error(r, 0x16);
		return;
	}
	r->ops->ring_consume(r->ctx, (u32)cpu, count);
	vt_rsp_put(r, "OK");
}

/*
 * qVtice:probes:keys:I: address I's KEYED slots, all VTICE_FETCH_KEYED_SLOTS,
 * each COUNT:KEY0:KEY1:VALUE (ioctl.h's struct vtice_probe_key), or 0 while
 * free; E16 past the last address.
 */
static void vt_probes_keys(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 index, count, word;
	u32 slot, part;

	if (!vt_probes_index(r, c, &index))
		return;
	for (slot = 0; slot < VTICE_FETCH_KEYED_SLOTS; slot++) {
		count = 0;	/* index answered: the machine is stopped, it stays */
		r->ops->probe_count(r->ctx, VTICE_VMCALL_PROBE_KEY, (u32)index, slot, &count);
		if (slot)
			vt_rsp_put(r, ",");
		vt_rsp_put_hex(r, count);
		for (part = 1; count && part <= 3; part++) {
			word = 0;
			r->ops->probe_count(r->ctx, VTICE_VMCALL_PROBE_KEY, (u32)index, slot | part << 8, &word);
			vt_rsp_put(r, ":");
			vt_rsp_put_hex(r, word);
		}
	}
}

bool vt_rsp_probes(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	if (!vt_probes_supported(r))
		return false;	/* unknown here: the empty reply */
	if (vt_rsp_prefix(c, "QVtice:probes:"))
		vt_probes_status(r, vt_probes_arming(r, c));
	else if (vt_rsp_prefix(c, "QVtice:syscalls:"))
		vt_probes_status(r, vt_syscalls_arming(r, c));
	else if (vt_rsp_prefix(c, "qVtice:syscalls"))
		vt_rsp_at_end(c) ? vt_syscalls_counts(r) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "QVtice:profile:"))
		vt_probes_status(r, vt_profile_arming(r, c));
	else if (vt_rsp_prefix(c, "qVtice:profile"))
		vt_rsp_at_end(c) ? vt_profile_counts(r) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "QVtice:ring:consume:"))
		vt_ring_consume(r, c);
	else if (vt_rsp_prefix(c, "qVtice:ring:"))
		vt_ring_state(r, c);
	else if (vt_rsp_prefix(c, "qXfer:vtice-ring:read:"))
		vt_ring_read(r, c);
	else if (vt_rsp_prefix(c, "qVtice:probes:hist:"))
		vt_probes_hist(r, c);
	else if (vt_rsp_prefix(c, "qVtice:probes:keys:"))
		vt_probes_keys(r, c);
	else if (vt_rsp_prefix(c, "qVtice:probes:counts"))
		vt_rsp_at_end(c) ? vt_probes_counts(r, VTICE_VMCALL_PROBE_COUNT) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "qVtice:probes:sums"))
		vt_rsp_at_end(c) ? vt_probes_counts(r, VTICE_VMCALL_PROBE_SUM) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "qVtice:probes:unreadable"))
		vt_rsp_at_end(c) ? vt_probes_counts(r, VTICE_VMCALL_PROBE_UNREADABLE) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "qVtice:probes:removed"))
		vt_probes_removed(r, c);
	else if (vt_rsp_prefix(c, "qVtice:probes:passed"))
		vt_rsp_at_end(c) ? vt_rsp_put_hex(r, r->ops->probe_hits(r->ctx, true)) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "qVtice:tsc"))
		vt_rsp_at_end(c) ? vt_rsp_put_hex(r, r->ops->tsc_khz(r->ctx)) : vt_rsp_error(r, 0x16);
	else if (vt_rsp_prefix(c, "qVtice:probes"))
		vt_rsp_at_end(c) ? vt_rsp_put_hex(r, r->ops->probe_hits(r->ctx, false)) : vt_rsp_error(r, 0x16);
	else
		return false;
	return true;
}
