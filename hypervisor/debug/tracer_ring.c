// SPDX-License-Identifier: GPL-2.0
/*
 * A ring trace's records on their way to the reader (tracer.h): the
 * CPU's ring, which `vtice trace syscall` drains from user space every
 * few milliseconds, and behind it the CPU's spill, root-private, for the
 * records that come while the ring is full.
 *
 * A stepping tracer owns the CPU it traces, so one path's trace loses
 * nothing at any ring size:
 *  - while the ring is full, records wait in the spill, in order, and go
 *    into the ring as the reader makes room;
 *  - when the spill is full too, the traced CPU waits in VMX root for the
 *    reader (a hold). The traced task runs nowhere else meanwhile, so the
 *    other CPUs run unstepped, their interrupts let in, and the reader
 *    drains at full speed.
 * The spill exists because a hold alone deadlocks: the traced CPU may
 * hold a kernel lock the reader's CPU needs (seen in Bochs: a timer
 * wakeup on the traced CPU holds its runqueue lock while the reader's CPU,
 * going idle, wants it to pull work). Every wait is bounded (hold_ticks):
 * a reader that is gone or stuck costs records, counted, never the
 * machine. The bound is short in a call (VT_TRACE_RING_HOLD_MS: the CPU may
 * hold a lock) and longer at its boundaries, its SYSCALL and its SYSRET
 * (VT_TRACE_RING_BOUNDARY_MS), where it holds none and a reader that was
 * starved while every CPU was stepped may need long to come back.
 */
#include "tracer_priv.h"
#include "../core/hv.h"
#include "../core/intrin.h"

static u64 vt_spilled(const struct vt_trace_cpu *c)
{
	return c->spill_in - c->spill_out;
}

static bool vt_spill_full(const struct vt_trace_cpu *c)
{
	return vt_spilled(c) >= vt_tracer.capacity;
}

/* Into the ring, oldest first, as far as it has room. */
void vt_trace_spill_flush(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	while (vt_spilled(c) && vt_ring_has_room(&vcpu->ring, 1)) {
		vt_ring_push(&vcpu->ring, &c->rec[c->spill_out % vt_tracer.capacity]);
		c->spill_out++;
		c->hold_gave_up = false;	/* the reader is back */
	}
}

static void vt_spill_append(struct vt_trace_cpu *c, const struct vtice_record *rec)
{
	c->rec[c->spill_in % vt_tracer.capacity] = *rec;
	c->spill_in++;
}

/*
 * Each CPU but this one that runs as a guest: it follows at its next
 * entry. One NMI per kick: a CPU takes an NMI as the tracer's only while
 * its kick is pending, and one NMI ends that, so a second NMI sent before
 * the first was taken would reach the kernel as an unknown NMI. A kick
 * still on its way does the job of a new one.
 */
void vt_trace_kick_others(struct vt_vcpu *me)
{
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++) {
		struct vt_vcpu *other = vt_tracer.vcpus ? vt_tracer.vcpus[i] : NULL;

		if (i == me->cpu || !other || !VT_READ_ONCE(other->launched))
			continue;
		if (!__atomic_exchange_n(&vt_tracer.cpu[i].kick, true, __ATOMIC_ACQ_REL))
			vt_send_nmi(me, other);
	}
}

static bool vt_trace_kicks_pending(const struct vt_vcpu *me)
{
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++)
		if (i != me->cpu && VT_LOAD_ACQUIRE(vt_tracer.cpu[i].kick))
			return true;
	return false;
}

/*
 * The hold is over: the others step again before the traced task runs on
 * (it could move to one of them). Each takes its kick at an NMI exit and
 * arms its step at the entry right after; a CPU that does not answer
 * within the hold's bound (stuck in root itself) is not waited for.
 */
static void vt_trace_end_hold(struct vt_vcpu *me)
{
	u64 start = vt_rdtsc();

	VT_STORE_RELEASE(vt_tracer.ring.holding, false);
	vt_trace_kick_others(me);
	while (vt_trace_kicks_pending(me) && vt_rdtsc() - start < vt_tracer.hold_ticks)
		vt_pause();
}

/*
 * Wait in root, at most bound TSC ticks, until the ring has room for n (the
 * other CPUs paused: vt_trace_pause_cpu). A wait that runs out means the
 * reader is gone or cannot run: the trace waits no more until it makes
 * room again.
 */
static bool vt_trace_hold(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u32 n, u64 bound)
{
	u64 start, now;
	bool room;

	if (vt_ring_has_room(&vcpu->ring, n))
		return true;
	if (c->hold_gave_up || n + VT_RING_RESERVE > vcpu->ring.nr_records)
		return false;	/* no reader can make room for more than the ring */
	start = vt_rdtsc();
	VT_STORE_RELEASE(vt_tracer.ring.holding, true);
	do {
		vt_pause();
		now = vt_rdtsc();
		room = vt_ring_has_room(&vcpu->ring, n);
	} while (!room && now - start < bound);
	c->hold_gave_up = !room;
	vt_ring_count_wait(&vcpu->ring, room);
	vt_trace_end_hold(vcpu);
	return room;
}

void vt_trace_ring_store(struct vt_trace_cpu *c, struct vt_vcpu *vcpu,
			 const struct vtice_record *rec)
{
	do {
		vt_trace_spill_flush(c, vcpu);
		if (!vt_spilled(c) && vt_ring_has_room(&vcpu->ring, 1)) {
			vt_ring_push(&vcpu->ring, rec);
			c->hold_gave_up = false;	/* the reader made room */
			return;
		}
		if (!vt_spill_full(c)) {
			vt_spill_append(c, rec);
			return;
		}
	} while (vt_trace_hold(c, vcpu, 1, vt_tracer.hold_ticks));
	c->dropped++;
	vt_ring_lose(&vcpu->ring, 1);
}

/* This CPU's part of the trace ended: what the ring cannot take is lost, counted. */
void vt_trace_spill_end(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	u64 left;

	vt_trace_spill_flush(c, vcpu);
	left = vt_spilled(c);
	if (left) {
		c->dropped += left;
		vt_ring_lose(&vcpu->ring, (u32)left);
	}
	c->spill_in = c->spill_out = 0;
}

bool vt_tracer_wait_for_room(struct vt_vcpu *vcpu, u32 n)
{
	struct vt_trace_cpu *c;

	if (vcpu->cpu >= vt_tracer.nr_cpus)
		return vt_ring_has_room(&vcpu->ring, n);
	c = &vt_tracer.cpu[vcpu->cpu];
	do {
		vt_trace_spill_flush(c, vcpu);
		if (!vt_spilled(c) && vt_ring_has_room(&vcpu->ring, n))
			return true;
	} while (vt_trace_hold(c, vcpu, vt_spilled(c) ? 1 : n, vt_tracer.boundary_ticks));
	return false;
}

void vt_tracer_ring_put(struct vt_vcpu *vcpu, const struct vtice_record *rec)
{
	if (vcpu->cpu < vt_tracer.nr_cpus)
		vt_trace_ring_store(&vt_tracer.cpu[vcpu->cpu], vcpu, rec);
	else
		vt_ring_push(&vcpu->ring, rec);
}

static bool vt_trace_others_spilled(const struct vt_vcpu *me)
{
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++)
		if (i != me->cpu && VT_LOAD_ACQUIRE(vt_tracer.cpu[i].spill_in) !=
				    VT_LOAD_ACQUIRE(vt_tracer.cpu[i].spill_out))
			return true;
	return false;
}

/*
 * Before the record that ends the trace: this CPU's spill in its ring, and
 * the spills of the CPUs the task ran on before (they flush at each of
 * their entries, stepped until the trace stops) in theirs, so the reader
 * has the whole call when it reads the end. Bounded like a hold.
 */
void vt_tracer_ring_settle(struct vt_vcpu *me)
{
	u64 start = vt_rdtsc();

	vt_tracer_wait_for_room(me, 0);
	while (vt_trace_others_spilled(me) && vt_rdtsc() - start < vt_tracer.boundary_ticks)
		vt_pause();
}
