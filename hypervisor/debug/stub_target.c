// SPDX-License-Identifier: GPL-2.0
/*
 * struct vt_dbg_target_ops on the stopped machine: registers from each
 * CPU's park snapshot (stop.c), memory through that CPU's page tables
 * (guest_mem.c), breakpoints and watchpoints through the hooks. Called
 * only by the RSP engine on the master CPU while every CPU is parked.
 */
#include "stub.h"
#include "hooks.h"
#include "probe_points.h"
#include "stop.h"
#include "target.h"
#include "tracer.h"
#include "../core/hv.h"
#include "../core/os.h"
#include <vtice/vmcall.h>

static u32 vt_target_cpu_count(void *ctx)
{
	return vt_stop_cpu_count();
}

static bool vt_target_cpu_online(void *ctx, u32 cpu)
{
	return vt_stop_cpu(cpu) != NULL;
}

static int vt_target_read_regs(void *ctx, u32 cpu, struct vt_dbg_regs *out)
{
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);

	if (!c)
		return -VT_EINVAL;
	*out = c->regs;
	return 0;
}

static int vt_target_write_regs(void *ctx, u32 cpu, const struct vt_dbg_regs *in)
{
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);

	if (!c)
		return -VT_EINVAL;
	c->regs = *in;
	c->regs_dirty = true;
	return 0;
}

static int vt_target_read_mem(void *ctx, u32 cpu, u64 gva, void *buf, u32 len)
{
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);

	if (!c)
		return -VT_EINVAL;
	return vt_guest_read(vt_stub_guest_mem(), &c->paging, gva, buf, len);
}

/*
 * Page by page, so that each page's breakpoint view learns its new bytes
 * (a write to text under a hidden breakpoint must show through).
 */
static int vt_target_write_mem(void *ctx, u32 cpu, u64 gva, const void *buf, u32 len)
{
	const struct vt_guest_mem *m = vt_stub_guest_mem();
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);
	u32 done = 0;

	if (!c)
		return -VT_EINVAL;
	while (done < len) {
		u64 va = gva + done, gpa;
		u32 chunk = (u32)(VT_PAGE_SIZE - (va & (VT_PAGE_SIZE - 1)));
		int n;

		if (chunk > len - done)
			chunk = len - done;
		if (vt_guest_translate(m, &c->paging, va, &gpa))
			break;
		n = vt_guest_write(m, &c->paging, va, (const u8 *)buf + done, chunk);
		if (n <= 0)
			break;
		vt_hooks_text_written(gpa, (u32)n);
		done += (u32)n;
	}
	return done ? (int)done : -VT_EFAULT;
}

static int vt_target_insert(void *ctx, u32 cpu, enum vt_dbg_point type, u64 addr, u64 len)
{
	const struct vt_guest_mem *m = vt_stub_guest_mem();
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);
	u64 gpa;

	if (!c)
		return -VT_EINVAL;
	switch (type) {
	case VT_POINT_SW:
		if (vt_guest_translate(m, &c->paging, addr, &gpa))
			return -VT_EFAULT;
		return vt_bp_insert(addr, gpa);
	case VT_POINT_HW:
		return vt_hwbp_insert(addr);
	default:
		return vt_watch_insert(type, addr, len, cpu);
	}
}

static int vt_target_remove(void *ctx, u32 cpu, enum vt_dbg_point type, u64 addr, u64 len)
{
	switch (type) {
	case VT_POINT_SW:
		return vt_bp_remove(addr);
	case VT_POINT_HW:
		return vt_hwbp_remove(addr);
	default:
		return vt_watch_remove(type, addr, len);
	}
}

/* Detach: no breakpoint, watchpoint, probe or trace outlives the debugger. */
static void vt_target_remove_all(void *ctx)
{
	vt_hooks_remove_all();
	vt_probe_stub_release();
	vt_syscall_trap_stub_set(vt_stub_hv(), NULL);
	vt_profile_stub_set(vt_stub_hv(), false, 0, 0, NULL);
	vt_tracer_disable_all();
	vt_stub_detached();
}

static int vt_target_resume(void *ctx, const enum vt_dbg_run *run, u32 count)
{
	return vt_stop_set_run(run, count);
}

static int vt_target_btrace_enable(void *ctx, u32 cpu, bool on)
{
	if (!vt_stop_cpu(cpu))
		return -VT_EINVAL;
	return on ? vt_tracer_enable(cpu) : vt_tracer_disable(cpu);
}

static u64 vt_target_btrace_count(void *ctx, u32 cpu)
{
	return vt_tracer_count(cpu);
}

static bool vt_target_btrace_record(void *ctx, u32 cpu, u64 index, struct vtice_record *out)
{
	const struct vtice_record *r = vt_tracer_record(cpu, index);

	if (r)
		*out = *r;
	return r != NULL;
}

static void vt_target_btrace_span(void *ctx, u32 cpu, u64 *first_ip, u64 *last_ip)
{
	vt_tracer_span(cpu, first_ip, last_ip);
}

static u32 vt_target_btrace_size(void *ctx, u32 cpu)
{
	struct vt_tracer_stats s;

	if (!vt_tracer_enabled(cpu))
		return 0;
	vt_tracer_get_stats(&s);
	return s.capacity;
}

/* ADD and WATCH get the frame of their gva through cpu's page tables (R9). */
static int vt_target_probe_op(void *ctx, u32 cpu, u32 op, u64 a, u64 b, u64 c)
{
	struct vt_stop_cpu *sc = vt_stop_cpu(cpu);
	u64 gpa;

	if (op == VTICE_VMCALL_PROBE_ADD || op == VTICE_VMCALL_PROBE_WATCH) {
		if (!sc || vt_guest_translate(vt_stub_guest_mem(), &sc->paging, a, &gpa))
			return -VT_EFAULT;
		/* PROBE_WATCH takes the page's frame, as the kernel side passes it. */
		b = op == VTICE_VMCALL_PROBE_ADD ? gpa : gpa & ~(u64)(VT_PAGE_SIZE - 1);
	}
	return vt_probe_stub_op(op, a, b, c, NULL);
}

static u64 vt_target_probe_hits(void *ctx, bool passed_over)
{
	return vt_probe_hits(passed_over);
}

static u64 vt_target_probe_removed(void *ctx)
{
	return vt_probe_removed();
}

static bool vt_target_probe_count(void *ctx, u32 op, u32 index, u32 b, u64 *count)
{
	return vt_probe_stub_op(op, index, b, 0, count) == 0;
}

static u64 vt_target_tsc_khz(void *ctx)
{
	return vt_stop_tsc_khz();
}

/*
 * The kernel side's trap (VTICE_IOC_SYSCALLS, the path tracer) is armed on
 * some CPU, or some CPU cannot arm one: the stub leaves it alone.
 */
static int vt_target_syscall_check(const struct vt_hv *hv)
{
	struct vt_stop_cpu *sc;
	u32 cpu;

	for (cpu = 0; cpu < vt_stop_cpu_count(); cpu++) {
		sc = vt_stop_cpu(cpu);
		if (!sc || !sc->vcpu)
			continue;
		if (vt_syscall_trap_kernel_armed(sc->vcpu))
			return -VT_EBUSY;
		if (!vt_syscall_trap_can_arm(hv, sc->regs.cr4))
			return -VT_EOPNOTSUPP;
	}
	return 0;
}

static int vt_target_syscall_trap(void *ctx, const struct vt_sys_stub_arm *arm)
{
	struct vt_hv *hv = vt_stub_hv();
	int err = arm ? vt_target_syscall_check(hv) : 0;

	return err ? err : vt_syscall_trap_stub_set(hv, arm);
}

/* cpu's vCPU while it is parked, else NULL. */
static struct vt_vcpu *vt_target_vcpu(u32 cpu)
{
	struct vt_stop_cpu *c = vt_stop_cpu(cpu);

	return c ? c->vcpu : NULL;
}

static void vt_target_syscall_counts(void *ctx, u64 *armed, u64 *seen, u64 *recorded)
{
	struct vt_vcpu *vcpu;
	u32 cpu;

	*armed = *seen = *recorded = 0;
	for (cpu = 0; cpu < vt_stop_cpu_count(); cpu++) {
		vcpu = vt_target_vcpu(cpu);
		if (vcpu) {
			*armed += vcpu->sys.armed;
			*seen += VT_READ_ONCE(vcpu->counts->syscalls_seen);
			*recorded += VT_READ_ONCE(vcpu->counts->syscalls_recorded);
		}
	}
}

/* The kernel side's profiler (VTICE_IOC_PROFILE) samples on some CPU: the stub leaves it alone. */
static bool vt_target_profile_busy(void)
{
	struct vt_vcpu *vcpu;
	u32 cpu;

	for (cpu = 0; cpu < vt_stop_cpu_count(); cpu++) {
		vcpu = vt_target_vcpu(cpu);
		if (vcpu && vt_profile_kernel_sampling(vcpu))
			return true;
	}
	return false;
}

static int vt_target_profile(void *ctx, bool on, u32 hz, u32 stack_bytes, u32 pid, const char comm[16])
{
	struct vt_hv *hv = vt_stub_hv();
	struct vt_sys_filter filter = { .pid = pid };

	if (on && vt_target_profile_busy())
		return -VT_EBUSY;
	if (on && (!hz || hz > VTICE_PROFILE_HZ_MAX))
		return -VT_EINVAL;
	vt_memcpy(filter.comm, comm, sizeof(filter.comm));
	return vt_profile_stub_set(hv, on, on ? vt_stop_tsc_khz() * 1000 / hz : 0, stack_bytes, &filter);
}

static void vt_target_profile_counts(void *ctx, u64 *armed, u64 *samples)
{
	struct vt_vcpu *vcpu;
	u32 cpu;

	*armed = *samples = 0;
	for (cpu = 0; cpu < vt_stop_cpu_count(); cpu++) {
		vcpu = vt_target_vcpu(cpu);
		if (vcpu) {
			*armed += vcpu->timer.sample_ticks != 0;
			*samples += VT_READ_ONCE(vcpu->counts->profile_samples);
		}
	}
}

static struct vt_ring *vt_target_ring(u32 cpu)
{
	struct vt_vcpu *vcpu = vt_target_vcpu(cpu);

	return vcpu && vcpu->ring.hdr ? &vcpu->ring : NULL;
}

static bool vt_target_ring_unread(void *ctx, u32 cpu, u64 *unread, u64 *lost)
{
	struct vt_ring *ring = vt_target_ring(cpu);

	if (!ring)
		return false;
	*unread = vt_ring_unread(ring);
	*lost = VT_READ_ONCE(ring->hdr->lost);
	return true;
}

static bool vt_target_ring_record(void *ctx, u32 cpu, u64 index, struct vtice_record *out)
{
	struct vt_ring *ring = vt_target_ring(cpu);
	const struct vtice_record *r = ring ? vt_ring_peek(ring, index) : NULL;

	if (r)
		*out = *r;
	return r != NULL;
}

static void vt_target_ring_consume(void *ctx, u32 cpu, u64 count)
{
	struct vt_ring *ring = vt_target_ring(cpu);

	if (ring)
		vt_ring_consume(ring, count);
}

const struct vt_dbg_target_ops vt_stub_target_ops = {
	.cpu_count = vt_target_cpu_count,
	.cpu_online = vt_target_cpu_online,
	.read_regs = vt_target_read_regs,
	.write_regs = vt_target_write_regs,
	.read_mem = vt_target_read_mem,
	.write_mem = vt_target_write_mem,
	.insert_point = vt_target_insert,
	.remove_point = vt_target_remove,
	.remove_all = vt_target_remove_all,
	.resume = vt_target_resume,
	.monitor = vt_stub_monitor,
	.btrace_enable = vt_target_btrace_enable,
	.btrace_count = vt_target_btrace_count,
	.btrace_record = vt_target_btrace_record,
	.btrace_span = vt_target_btrace_span,
	.btrace_size = vt_target_btrace_size,
	.probe_op = vt_target_probe_op,
	.probe_hits = vt_target_probe_hits,
	.probe_removed = vt_target_probe_removed,
	.probe_count = vt_target_probe_count,
	.tsc_khz = vt_target_tsc_khz,
	.syscall_trap = vt_target_syscall_trap,
	.syscall_counts = vt_target_syscall_counts,
	.profile = vt_target_profile,
	.profile_counts = vt_target_profile_counts,
	.ring_unread = vt_target_ring_unread,
	.ring_record = vt_target_ring_record,
	.ring_consume = vt_target_ring_consume,
};
