// SPDX-License-Identifier: GPL-2.0
/*
 * Branch tracing by stepping every instruction with the monitor trap flag
 * (tracer.h), or every branch with TF and DEBUGCTL.BTF (see "Branch
 * steps" below). Between two VM entries an MTF-traced CPU runs exactly one
 * instruction, delivers one event, or does one iteration of a REP string
 * instruction (SDM Vol. 3C 26.7.2, 25.5.2). So at each MTF exit the RIP of
 * the last entry and the RIP now tell what happened:
 *   - RIP past the instruction: it fell through (a Jcc not taken too);
 *   - RIP unchanged: one REP iteration;
 *   - elsewhere, after an instruction that branches there: a taken branch;
 *   - elsewhere, after one that does not (or at an IDT handler the
 *     instruction did not call): an interrupt or exception was delivered.
 * Exits the handlers emulate (CPUID, MSRs) move RIP between the exit and
 * the next entry; the entry RIP is taken at every entry, so they look like
 * any other instruction that fell through.
 *
 * Branch steps: a TF step (single_step.h, hidden from the guest) with
 * BTF set ends after the next taken branch (SDM Vol. 3B 18.4.3), having
 * run straight-line code from the entry RIP; btf_block.h names the branch.
 * Where BTF is not honoured, or the code before the branch reads or loads
 * RFLAGS, the TF step is a plain one: one instruction, judged as above.
 * Events never land inside a TF step: interrupts are held and exceptions
 * exit, and each is delivered as a step of its own into its handler. A
 * CPU about to halt is not stepped (nothing would end the step).
 *
 * Either way the tracer gates a traced CPU's interrupts and NMIs
 * (core/events.c) and lets them in itself, at most once per event_gap
 * steps (tracer.h), at once on a halted CPU.
 */
#include "tracer_priv.h"
#include "single_step.h"
#include "../core/exit.h"
#include "../core/hv.h"
#include "../core/os.h"
#include "../core/intrin.h"

struct vt_tracer vt_tracer VT_ROOT_STATE;

VT_STATIC_ASSERT(VT_IDT_GATES * sizeof(u64) <= VT_PAGE_SIZE, "handlers fit in one page");

/* The mechanism for the mode asked, or 0 where the CPU has none of it. */
static u32 vt_trace_pick(const struct vt_hv *hv, enum vt_trace_mode mode)
{
	bool mtf = hv->caps.flags & VTICE_CAP_MTF, tf = vt_can_hold_events(hv);
	u32 stepped = vt_single_step_has_btf(hv) ? VTICE_TRACE_BTF : VTICE_TRACE_TF;

	switch (mode) {
	case VT_TRACE_MODE_MTF:
		return mtf ? VTICE_TRACE_MTF : 0;
	case VT_TRACE_MODE_TF:
		return tf ? stepped : 0;
	default:
		if (tf && stepped == VTICE_TRACE_BTF)
			return VTICE_TRACE_BTF;
		return mtf ? VTICE_TRACE_MTF : tf ? VTICE_TRACE_TF : 0;
	}
}

int vt_tracer_init(struct vt_hv *hv, const struct vt_tracer_config *cfg)
{
	u32 i, per_page = VT_PAGE_SIZE / sizeof(struct vtice_record);
	u8 *mem;

	vt_memset(&vt_tracer, 0, sizeof(vt_tracer));
	vt_tracer.mechanism = vt_trace_pick(hv, cfg->mode);
	if (!vt_tracer.mechanism)
		return 0;	/* no tracer: the packets answer that it is unsupported */
	vt_lbr_detect(&vt_tracer.lbr, hv->caps.flags);
	vt_lbr_hide_stack(hv, &vt_tracer.lbr);
	vt_tracer.event_gap = cfg->event_gap ? cfg->event_gap : VT_TRACE_EVENT_GAP;
	vt_tracer.hold_ticks = vt_os_tsc_khz() * VT_TRACE_RING_HOLD_MS;
	vt_tracer.boundary_ticks = vt_os_tsc_khz() * VT_TRACE_RING_BOUNDARY_MS;
	vt_tracer.nr_cpus = cfg->nr_cpus < VT_TRACE_MAX_CPUS ? cfg->nr_cpus : VT_TRACE_MAX_CPUS;
	vt_tracer.capacity = cfg->records_per_cpu / per_page * per_page;
	vt_tracer.pages = 1 + vt_tracer.capacity / per_page;
	vt_tracer.mem = cfg->mem;
	vt_tracer.vcpus = cfg->vcpus;
	for (i = 0; i < vt_tracer.nr_cpus; i++) {
		mem = vt_os_alloc_pages(vt_tracer.pages);
		if (!mem) {
			vt_tracer_fini();
			return -VT_ENOMEM;
		}
		vt_tracer.cpu[i].handlers = (u64 *)mem;
		vt_tracer.cpu[i].rec = (struct vtice_record *)(mem + VT_PAGE_SIZE);
		if (cfg->current_task)
			vt_tracer.task_ptr[i] = cfg->current_task[i];
	}
	vt_tracer.hv = hv;
	return 0;
}

int vt_tracer_shield(void)
{
	u32 i;
	int ret;

	if (!vt_tracer.hv)
		return 0;
	for (i = 0; i < vt_tracer.nr_cpus; i++) {
		ret = vt_hv_hide(vt_tracer.hv, vt_tracer.cpu[i].handlers, vt_tracer.pages);
		if (ret)
			return ret;
	}
	return vt_os_shield_image(&vt_tracer, sizeof(vt_tracer));
}

void vt_tracer_fini(void)
{
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++)
		if (vt_tracer.cpu[i].handlers)
			vt_os_free_pages(vt_tracer.cpu[i].handlers, vt_tracer.pages);
	vt_memset(&vt_tracer, 0, sizeof(vt_tracer));
}

bool vt_tracer_supported(void)
{
	return vt_tracer.hv != NULL;
}

u32 vt_tracer_mechanism(void)
{
	return vt_tracer.hv ? vt_tracer.mechanism : 0;
}

bool vt_tracer_uses_tf(void)
{
	return vt_tracer.hv && vt_tracer.mechanism != VTICE_TRACE_MTF;
}

/*
 * While a trace steps with TF, every step on the machine is a TF step
 * (single_step.h): the debugger's trace on some CPU, or a ring trace.
 */
static void vt_trace_sync_step_kind(void)
{
	bool on = VT_LOAD_ACQUIRE(vt_tracer.ring.active);
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++)
		on |= vt_tracer.cpu[i].on && !vt_tracer.cpu[i].to_ring;
	if (vt_tracer_uses_tf())
		vt_single_step_trace_tf(on);
}

static struct vt_trace_cpu *vt_trace_cpu(u32 cpu)
{
	return vt_tracer.hv && cpu < vt_tracer.nr_cpus ? &vt_tracer.cpu[cpu] : NULL;
}

void vt_tracer_set_filter(u64 task)
{
	vt_tracer.filter = task;
}

int vt_tracer_set_recording(bool on)
{
	if (on && vt_tracer.mechanism != VTICE_TRACE_MTF)
		return -VT_EOPNOTSUPP;
	vt_tracer.record = on;
	return 0;
}

u64 vt_tracer_filter(void)
{
	return vt_tracer.filter;
}

/* A new trace of task on this CPU; it starts at the CPU's next VM entry. */
static void vt_trace_reset(struct vt_trace_cpu *c, u64 task, bool to_ring)
{
	c->on = true;
	c->to_ring = to_ring;
	c->started = c->have_entry = false;
	c->task = task;
	c->count = c->first_ip = c->last_ip = 0;
	c->steps = c->dropped = c->async = c->filtered = c->undecoded = 0;
	c->branch_steps = c->btf_ignored = c->lbr_branches = c->events_let_in = 0;
	c->hold_gave_up = false;
	c->since_event = vt_tracer.event_gap;	/* the first held event may go in at once */
	c->recording = to_ring && vt_tracer.record;	/* path traces only (VTICE_PATH_RECORD) */
	c->rec_open = c->rec_have_regs = false;
}

int vt_tracer_enable(u32 cpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(cpu);

	if (!vt_tracer.hv || !vt_tracer.capacity)
		return -VT_EOPNOTSUPP;
	if (!c)
		return -VT_EINVAL;
	if (VT_LOAD_ACQUIRE(vt_tracer.ring.active))
		return -VT_EBUSY;
	vt_trace_reset(c, vt_tracer.filter, false);
	vt_trace_sync_step_kind();
	return 0;
}

int vt_tracer_disable(u32 cpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(cpu);

	if (!c)
		return vt_tracer.hv ? -VT_EINVAL : -VT_EOPNOTSUPP;
	/*
	 * MTF stays set until the next exit, which no one claims: the core
	 * clears it. A TF step ends the same way; the CPU drops its interrupt
	 * interception at its next entry.
	 */
	c->on = false;
	vt_trace_sync_step_kind();
	return 0;
}

void vt_tracer_disable_all(void)
{
	u32 i;

	for (i = 0; i < vt_tracer.nr_cpus; i++)
		vt_tracer.cpu[i].on = false;
	vt_trace_sync_step_kind();
}

bool vt_tracer_enabled(u32 cpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(cpu);

	return c && c->on;
}

u64 vt_tracer_task_pointer(u32 cpu)
{
	return vt_trace_cpu(cpu) ? vt_tracer.task_ptr[cpu] : 0;
}

u64 vt_tracer_count(u32 cpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(cpu);

	return c ? c->count : 0;
}

const struct vtice_record *vt_tracer_record(u32 cpu, u64 index)
{
	struct vt_trace_cpu *c = vt_trace_cpu(cpu);

	return c && index < c->count ? &c->rec[index] : NULL;
}

void vt_tracer_span(u32 cpu, u64 *first_ip, u64 *last_ip)
{
	struct vt_trace_cpu *c = vt_trace_cpu(cpu);

	*first_ip = c ? c->first_ip : 0;
	*last_ip = c ? c->last_ip : 0;
}

/*
 * The task the vCPU runs now, by the kernel's per-CPU pointer; false when
 * it cannot be read through the CPU's page tables now (with page-table
 * isolation, user CR3 maps no per-CPU data: SYSCALL's first instructions).
 */
static bool vt_trace_read_current(struct vt_vcpu *vcpu, u64 *task)
{
	u64 ptr = vt_tracer.task_ptr[vcpu->cpu];

	*task = 0;
	return ptr && vt_tracer.mem(vcpu, ptr, task, sizeof(*task), false) == sizeof(*task);
}

/* The task the vCPU runs now; 0 if unknown. */
static u64 vt_trace_current(struct vt_vcpu *vcpu)
{
	u64 task;

	return vt_trace_read_current(vcpu, &task) ? task : 0;
}

/* Gate offsets: bytes 0-1, 6-7 and 8-11 (SDM 3A 6.14.1, 64-bit IDT gate). */
static u64 vt_gate_handler(const u8 *g)
{
	return (u64)g[0] | (u64)g[1] << 8 | (u64)g[6] << 16 | (u64)g[7] << 24 |
	       (u64)g[8] << 32 | (u64)g[9] << 40 | (u64)g[10] << 48 | (u64)g[11] << 56;
}

static void vt_trace_insert_sorted(struct vt_trace_cpu *c, u64 handler)
{
	u32 i = c->nr_handlers++;

	while (i && c->handlers[i - 1] > handler) {
		c->handlers[i] = c->handlers[i - 1];
		i--;
	}
	c->handlers[i] = handler;
}

/*
 * Where interrupts and exceptions land: the handlers of this CPU's IDT as
 * it is when the trace starts.
 */
static void vt_trace_read_idt(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	u64 base = vt_vmread_or0(GUEST_IDTR_BASE);
	u32 v, gates = ((u32)vt_vmread_or0(GUEST_IDTR_LIMIT) + 1) / VT_IDT_GATE_SIZE;
	u8 gate[VT_IDT_GATE_SIZE];

	c->nr_handlers = 0;
	for (v = 0; v < gates && v < VT_IDT_GATES; v++) {
		if (vt_tracer.mem(vcpu, base + (u64)v * VT_IDT_GATE_SIZE, gate, sizeof(gate), false) !=
		    sizeof(gate))
			break;
		if (gate[5] & VT_GATE_PRESENT)
			vt_trace_insert_sorted(c, vt_gate_handler(gate));
	}
}

static bool vt_trace_is_handler(const struct vt_trace_cpu *c, u64 ip)
{
	u32 lo = 0, hi = c->nr_handlers;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (c->handlers[mid] == ip)
			return true;
		if (c->handlers[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* RIP moved from `from` (decoded) to `to`, not past it: did `from` branch there? */
bool vt_trace_branched(const struct vt_trace_cpu *c, const struct vt_insn *insn, u64 from,
			      u64 to)
{
	switch (insn->kind) {
	case VT_INSN_OTHER:
		return false;
	case VT_INSN_JCC:
	case VT_INSN_JMP:
	case VT_INSN_CALL:
		return to == from + insn->len + (u64)insn->rel;
	case VT_INSN_FAR:
		return !vt_trace_is_handler(c, to) || insn->raises;
	default:	/* indirect, RET: no return lands on an IDT entry point */
		return !vt_trace_is_handler(c, to);
	}
}

/*
 * The TSC, but never behind a stamp another CPU already gave: the console
 * merges the CPUs' records of one task by stamp, and TSCs that drift apart
 * between CPUs (Bochs's do) would put a task's wakeup on one CPU before its
 * sleep on the other. Where TSCs agree this is the TSC.
 */
static u64 vt_trace_stamp(const struct vt_vcpu *vcpu)
{
	u64 last = __atomic_load_n(&vt_tracer.last_stamp, __ATOMIC_RELAXED), now = vt_guest_tsc(vcpu);

	for (;;) {
		u64 stamp = now > last ? now : last + 1;

		if (__atomic_compare_exchange_n(&vt_tracer.last_stamp, &last, stamp, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return stamp;
	}
}

u64 vt_tracer_stamp(const struct vt_vcpu *vcpu)
{
	return vt_trace_stamp(vcpu);
}

/*
 * Into the ring (tracer_ring.c: the reader's pace, and the spill for when
 * it falls behind), or into the debugger's buffer, kept from the start.
 */
void vt_trace_store(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u16 type, u32 flags, u64 a,
			   u64 b)
{
	struct vtice_record rec = {
		.type = type, .cpu = (u16)vcpu->cpu, .flags = flags,
		.tsc = vt_trace_stamp(vcpu), .u.raw = { a, b },
	};

	if (c->to_ring) {
		vt_trace_ring_store(c, vcpu, &rec);
		c->count++;
		return;
	}
	if (c->count >= vt_tracer.capacity) {
		c->dropped++;
		return;
	}
	c->rec[c->count++] = rec;
}

void vt_trace_push(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 from, u64 to,
			  u32 flags)
{
	vt_trace_store(c, vcpu, VTICE_REC_BRANCH, flags, from, to);
}

/*
 * A ring trace's task ran `ran` more instructions here: past its budget,
 * or back in user mode without a SYSRET, the trace ends on this CPU.
 */
static void vt_trace_ring_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u8 cpl, u32 ran)
{
	struct vt_ring_trace *ring = &vt_tracer.ring;
	u64 insns = __atomic_add_fetch(&ring->insns, ran, __ATOMIC_RELAXED);

	if (!VT_LOAD_ACQUIRE(ring->active))
		return;
	if (!c->entry_cpl && cpl)
		ring->ended(vcpu, VT_TRACE_END_USER);
	else if (insns >= ring->max_insns)
		ring->ended(vcpu, VT_TRACE_END_MAX_INSNS);
}

/*
 * The instruction at `from`. A recorded step decoded it at its VM entry
 * (vt_trace_record_open): those bytes are the ones that ran, and reading
 * and decoding them again here would double the step's guest reads.
 */
static bool vt_trace_decode(const struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 from, struct vt_insn *insn)
{
	u8 bytes[VT_INSN_BYTES] = { 0 };
	int n;

	if (c->rec_open && c->rec_insn_ok && c->rec_rip == from) {
		vt_memcpy(insn, &c->rec_insn, sizeof(*insn));	/* root calls no memcpy */
		return true;
	}
	n = vt_tracer.mem(vcpu, from, bytes, sizeof(bytes), false);
	return n > 0 && !vt_insn_decode(bytes, (u32)n, insn);
}

/* One instruction ran from c->entry_rip and the CPU is at `to` now. */
void vt_trace_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, u64 to, u8 cpl)
{
	u64 from = c->entry_rip;
	struct vt_insn insn;

	if (to == from)
		return;		/* one iteration of a REP string instruction */
	if (!c->first_ip)
		c->first_ip = from;
	c->last_ip = to;
	if (c->entry_cpl && cpl)
		return;		/* user code: stepped, not recorded */
	if (!vt_trace_decode(c, vcpu, from, &insn)) {
		c->undecoded++;
		vt_trace_push(c, vcpu, from, to, VTICE_BRANCH_FROM_STEP);
		return;
	}
	if (to == from + insn.len)
		return;
	if (vt_trace_branched(c, &insn, from, to)) {
		vt_trace_push(c, vcpu, from, to, VTICE_BRANCH_FROM_STEP);
		return;
	}
	c->async++;
	vt_trace_push(c, vcpu, from, to, VTICE_BRANCH_FROM_STEP | VTICE_BRANCH_ASYNC);
}

bool vt_tracer_on_mtf(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_trace_cpu *c = vt_trace_cpu(vcpu->cpu);
	struct vtice_lbr_entry br[VTICE_LBR_MAX];
	bool wrapped = false;
	u32 ran = 1, n = 0;
	u64 to;
	u8 cpl;

	(void)exit;
	if (!c || !c->on || !c->armed)
		return false;
	c->armed = false;
	c->steps++;
	c->since_event++;
	if (vt_tracer_uses_tf())
		n = vt_trace_lbr_since(c, vcpu, br, &wrapped);	/* moves the mark, recorded or not */
	if (!c->have_entry)
		return true;
	if (c->task && vt_trace_current(vcpu) != c->task) {
		c->filtered++;
		vt_trace_record_drop(c);
		return true;
	}
	cpl = (u8)vt_guest_cpl();
	to = vt_vmread_or0(GUEST_RIP);
	if (vt_tracer_uses_tf())
		ran = vt_trace_tf_step(c, vcpu, to, cpl, br, n, wrapped);
	else
		vt_trace_step(c, vcpu, to, cpl);
	if (c->recording && !(c->entry_cpl && cpl))
		vt_trace_record_close(c, vcpu, to, vt_trace_is_handler(c, to));
	else
		vt_trace_record_drop(c);
	if (c->to_ring)
		vt_trace_ring_step(c, vcpu, cpl, ran);
	return c->on;	/* a ring trace that ended here: the core clears MTF */
}

/* A ring trace started or stopped since this CPU last looked: follow it. */
static void vt_trace_follow_ring(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	u32 gen = VT_LOAD_ACQUIRE(vt_tracer.ring.gen);

	if (c->ring_gen == gen)
		return;
	c->ring_gen = gen;
	if (c->to_ring)
		vt_trace_spill_end(c, vcpu);
	if (VT_READ_ONCE(vt_tracer.ring.active)) {
		vt_trace_reset(c, VT_READ_ONCE(vt_tracer.ring.task), true);
		/* The task is current where its SYSCALL started the trace. */
		c->task_here = vcpu->cpu == VT_READ_ONCE(vt_tracer.ring.start_cpu);
	} else if (c->to_ring) {
		c->on = c->to_ring = false;
	}
}

/*
 * While a CPU is traced the tracer decides when its interrupts and NMIs go
 * in (vt_trace_let_events_in): the gate is on from its first traced entry
 * to its first entry after the trace.
 */
static void vt_trace_gate(struct vt_trace_cpu *c, struct vt_vcpu *vcpu, bool on)
{
	if (c->gating != on && !vt_gate_events(vcpu, on))
		c->gating = on;
}

static void vt_trace_start_cpu(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	vt_trace_read_idt(c, vcpu);
	if (c->task == VT_TRACE_TASK_CURRENT)
		c->task = vt_trace_current(vcpu);
	c->no_btf = false;
	vt_trace_gate(c, vcpu, true);
	if (vt_tracer_uses_tf())
		vt_trace_use_lbr(c, vcpu, true);
	c->started = true;
}

/* What the trace changed on this CPU, undone: at its first entry after the end. */
static void vt_trace_stop_cpu(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	vt_trace_gate(c, vcpu, false);
	vt_trace_use_lbr(c, vcpu, false);
}

/*
 * The step armed at this CPU's last entry ends at no exit now: undo it.
 * An MTF the tracer armed but no longer claims is cleared by the core at
 * its exit (core/exit_exception.c).
 */
static void vt_trace_cancel_step(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	if (c->armed && vt_tracer_uses_tf())
		vt_single_step_suspend(vcpu);
	else if (c->armed)
		vt_set_mtf(vcpu, false);
	c->armed = false;
	c->have_entry = false;
}

/*
 * The traced task runs nowhere this CPU would see (vt_trace_task_elsewhere):
 * this CPU runs unstepped, its interrupts go in as they come, until the
 * task may run here again; then it starts afresh.
 */
static void vt_trace_pause_cpu(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	vt_trace_cancel_step(c, vcpu);
	if (c->started)
		vt_trace_stop_cpu(c, vcpu);
	c->started = false;
}

/*
 * The gate's one way in (tracer.h): what waits goes in at most once per
 * event_gap steps, never into a TF step still running (its hold), and at
 * once on a CPU that halts, which would otherwise wait for nothing.
 */
static void vt_trace_let_events_in(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	bool halted = vt_vmread_or0(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT;

	if ((c->since_event < vt_tracer.event_gap && !halted) || !vt_deliver_held_event(vcpu))
		return;
	c->since_event = 0;
	c->events_let_in++;
}

/* The step of this entry: MTF, or a TF step (a branch step where it can). */
static int vt_trace_arm(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	vt_trace_let_events_in(c, vcpu);
	if (!vt_tracer_uses_tf())
		return vt_set_mtf(vcpu, true);
	return vt_single_step_arm_trace(vcpu, vt_tracer.mechanism == VTICE_TRACE_BTF && !c->no_btf);
}

/*
 * A ring trace's task runs nowhere this CPU would see: the CPU holds for
 * its reader (the task runs nowhere else meanwhile), or, with the switch
 * trigger, the task is not this CPU's current. The trigger makes the CPU
 * that switches to the task exit at the store that makes it current (root
 * does the store), where this CPU starts stepping again at the instruction
 * the filter would have recorded first (path_trace.h).
 */
static bool vt_trace_task_elsewhere(struct vt_trace_cpu *c, struct vt_vcpu *vcpu)
{
	u64 current;

	if (VT_LOAD_ACQUIRE(vt_tracer.ring.holding))
		return true;
	if (!VT_READ_ONCE(vt_tracer.ring.task_only))
		return false;
	/*
	 * Unreadable, it has not changed: switches happen with the kernel's
	 * page tables, and the trigger's exit reads it there.
	 */
	if (vt_trace_read_current(vcpu, &current))
		c->task_here = current == c->task;
	return !c->task_here;
}

void vt_tracer_pre_entry(struct vt_vcpu *vcpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(vcpu->cpu);

	if (!c)
		return;
	if (c->to_ring)
		vt_trace_spill_flush(c, vcpu);
	vt_trace_follow_ring(c, vcpu);
	if (!c->on) {
		vt_trace_stop_cpu(c, vcpu);
		return;
	}
	if (c->to_ring && vt_trace_task_elsewhere(c, vcpu)) {
		vt_trace_pause_cpu(c, vcpu);
		return;
	}
	if (!c->started)
		vt_trace_start_cpu(c, vcpu);
	if (vt_trace_arm(c, vcpu))
		return;		/* not stepped: about to halt, say */
	c->armed = true;
	c->have_entry = true;
	c->entry_rip = vt_vmread_or0(GUEST_RIP);
	c->entry_cpl = (u8)vt_guest_cpl();
	if (c->recording && !c->entry_cpl && (!c->task || vt_trace_current(vcpu) == c->task))
		vt_trace_record_open(c, vcpu);	/* another task's step is not recorded: no "before" */
}

int vt_tracer_ring_start(struct vt_vcpu *vcpu, u64 task, u64 max_insns, vt_trace_end_fn ended)
{
	struct vt_ring_trace *ring = &vt_tracer.ring;
	u32 i;

	if (!vt_tracer.hv)
		return -VT_EOPNOTSUPP;
	for (i = 0; i < vt_tracer.nr_cpus; i++)
		if (vt_tracer.cpu[i].on && !vt_tracer.cpu[i].to_ring)
			return -VT_EBUSY;	/* the debugger's trace */
	ring->task = task;
	ring->task_only = vt_bp_switch_planted();
	ring->start_cpu = vcpu->cpu;
	ring->max_insns = max_insns;
	ring->ended = ended;
	__atomic_store_n(&ring->insns, 0, __ATOMIC_RELAXED);
	VT_STORE_RELEASE(ring->active, true);
	vt_trace_sync_step_kind();
	__atomic_add_fetch(&ring->gen, 1, __ATOMIC_RELEASE);
	vt_trace_kick_others(vcpu);
	return 0;
}

/*
 * The others stop at their next entry. This CPU stops now: MTF armed for
 * the instruction it is about to run would cost one more exit.
 */
void vt_tracer_ring_stop(struct vt_vcpu *vcpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(vcpu->cpu);

	VT_STORE_RELEASE(vt_tracer.ring.active, false);
	__atomic_add_fetch(&vt_tracer.ring.gen, 1, __ATOMIC_RELEASE);
	if (c && c->to_ring) {
		vt_trace_follow_ring(c, vcpu);
		/* Stopped at another exit (the SYSRET's #UD): the step is still armed. */
		vt_trace_cancel_step(c, vcpu);
		vt_trace_stop_cpu(c, vcpu);
	}
	vt_trace_sync_step_kind();
}

u64 vt_tracer_ring_insns(void)
{
	return __atomic_load_n(&vt_tracer.ring.insns, __ATOMIC_RELAXED);
}

bool vt_tracer_on_nmi(struct vt_vcpu *vcpu)
{
	struct vt_trace_cpu *c = vt_trace_cpu(vcpu->cpu);

	return c && __atomic_exchange_n(&c->kick, false, __ATOMIC_ACQ_REL);
}

void vt_tracer_get_stats(struct vt_tracer_stats *out)
{
	u32 i;

	vt_memset(out, 0, sizeof(*out));
	out->capacity = vt_tracer.capacity;
	for (i = 0; i < vt_tracer.nr_cpus; i++) {
		const struct vt_trace_cpu *c = &vt_tracer.cpu[i];

		out->steps += c->steps;
		out->branch_steps += c->branch_steps;
		out->btf_ignored += c->btf_ignored;
		out->lbr_branches += c->lbr_branches;
		out->events_let_in += c->events_let_in;
		out->records += c->count;
		out->dropped += c->dropped;
		out->async += c->async;
		out->filtered += c->filtered;
		out->undecoded += c->undecoded;
		out->cpus_on += c->on;
	}
}
