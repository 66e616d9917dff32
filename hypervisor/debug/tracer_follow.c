// SPDX-License-Identifier: GPL-2.0
/*
 * Which CPUs a ring trace steps (tracer.h): only the one that runs the
 * traced task while it runs, every CPU while it runs nowhere.
 *
 * A task is current on one CPU at a time, and it cannot start on another
 * before the CPU it leaves has finished switching away from it (the
 * scheduler waits for that CPU to clear the task's on_cpu, which it does
 * after its per-CPU current pointer changed). So:
 *  - the CPU that steps and finds the task current owns the trace; the
 *    others stop stepping at their next entry and run at full speed, their
 *    interrupts going in as they come;
 *  - the owner that finds another task current (it switched away) gives
 *    the trace up, sends the others an NMI and waits in root, bounded,
 *    until each has taken it: from their next entry they step again, so
 *    wherever the task runs next, its first instruction is stepped.
 * Stepping every CPU all along, as the tracer did before, slowed the
 * reader's CPU a thousandfold: in Bochs its stepped timer interrupt took
 * so long (~150 ms) that the kernel judged the interrupt hung and put off
 * every timer of that CPU by 100 ms (kernel/time/hrtimer.c, "hrtimer:
 * interrupt took"), and the reader, asleep on one, did not drain in time.
 */
#include "tracer_priv.h"
#include "../core/hv.h"
#include "../core/intrin.h"

void vt_trace_kick(struct vt_vcpu *me, u32 cpu)
{
	struct vt_vcpu *other = vt_tracer.vcpus ? vt_tracer.vcpus[cpu] : NULL;

	if (cpu == me->cpu || !other || !VT_READ_ONCE(other->launched))
		return;
	VT_STORE_RELEASE(vt_tracer.cpu[cpu].kick, true);
	vt_send_nmi(me, other);
}

void vt_trace_kick_others(struct vt_vcpu *me)
{
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++)
		vt_trace_kick(me, i);
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
 * Each other CPU takes its kick at an NMI exit and decides at the entry
 * right after whether to step (vt_tracer_pre_entry). One that does not
 * answer within the hold's bound (stuck in root itself) is not waited for.
 */
void vt_trace_others_follow(struct vt_vcpu *me)
{
	u64 start = vt_rdtsc();

	vt_trace_kick_others(me);
	while (vt_trace_kicks_pending(me) && vt_rdtsc() - start < vt_tracer.hold_ticks)
		vt_pause();
}

void vt_trace_owner_start(struct vt_vcpu *me)
{
	VT_STORE_RELEASE(vt_tracer.ring.owner, me->cpu);
}

void vt_trace_owner_check(struct vt_vcpu *me, bool task_current)
{
	u32 owner = VT_LOAD_ACQUIRE(vt_tracer.ring.owner);

	if (task_current && owner != me->cpu)
		VT_STORE_RELEASE(vt_tracer.ring.owner, me->cpu);
	else if (!task_current && owner == me->cpu) {
		VT_STORE_RELEASE(vt_tracer.ring.owner, VT_TRACE_NO_OWNER);
		vt_trace_others_follow(me);
	}
}

/*
 * The task runs on another CPU: this one need not step. Records it took
 * for the task that still wait in its spill go into its ring at its
 * entries; the trace's end kicks it for them (vt_tracer_ring_settle).
 */
bool vt_trace_runs_elsewhere(const struct vt_vcpu *me)
{
	u32 owner = VT_LOAD_ACQUIRE(vt_tracer.ring.owner);

	return owner != VT_TRACE_NO_OWNER && owner != me->cpu;
}

bool vt_trace_owns(const struct vt_vcpu *me)
{
	return VT_LOAD_ACQUIRE(vt_tracer.ring.owner) == me->cpu;
}
