// SPDX-License-Identifier: GPL-2.0
/*
 * Syscall events into the CPU's ring (records.h describes the group). The
 * task is read from guest memory through the guest's own page tables: the
 * CPU's current-task pointer (a per-CPU variable the OS layer located),
 * then pid, tgid and comm at the task_struct offsets it supplied. Nothing
 * the guest put there is trusted beyond being copied: a read that fails
 * leaves the task out, and a filter then matches nothing.
 */
#include "exit.h"
#include "intrin.h"

struct vt_sys_task {
	u64 task;
	u32 pid, tgid;
	char comm[16];
};

static bool vt_read_u32(const struct vt_vcpu *vcpu, u64 gva, u32 *out)
{
	return vt_own_mem(vcpu, gva, out, sizeof(*out), false) == (int)sizeof(*out);
}

static bool vt_read_task(const struct vt_vcpu *vcpu, struct vt_sys_task *t)
{
	const struct vt_task_layout *l = &vcpu->hv->task_layout;

	if (!l->known || !vcpu->sys.current_task)
		return false;
	if (vt_own_mem(vcpu, vcpu->sys.current_task, &t->task, sizeof(t->task), false) !=
	    (int)sizeof(t->task))
		return false;
	return vt_read_u32(vcpu, t->task + l->pid, &t->pid) &&
	       vt_read_u32(vcpu, t->task + l->tgid, &t->tgid) &&
	       vt_own_mem(vcpu, t->task + l->comm, t->comm, sizeof(t->comm), false) ==
		       (int)sizeof(t->comm);
}

/* comm compares up to its first NUL (the kernel pads with NULs, but need not). */
static bool vt_comm_equal(const char *a, const char *b)
{
	u32 i;

	for (i = 0; i < 16; i++) {
		if (a[i] != b[i])
			return false;
		if (!a[i])
			return true;
	}
	return true;
}

static bool vt_filter_match(const struct vt_sys_filter *f, const struct vt_sys_task *t, bool known)
{
	if (!f->pid && !f->comm[0])
		return true;
	if (!known)
		return false;
	if (f->pid && t->pid != f->pid && t->tgid != f->pid)
		return false;
	return !f->comm[0] || vt_comm_equal(f->comm, t->comm);
}

bool vt_syscall_task_passes(const struct vt_vcpu *vcpu, u64 *task)
{
	struct vt_sys_task t = { 0 };
	bool known = vt_read_task(vcpu, &t);

	*task = t.task;
	return known && t.task && vt_filter_match(&vcpu->hv->sys_filter, &t, known);
}

static void vt_put_data(struct vtice_record *rec, const struct vtice_record *head, u32 kind,
			u64 a, u64 b)
{
	*rec = *head;
	rec->type = VTICE_REC_SYSCALL_DATA;
	rec->flags = kind;
	rec->u.raw[0] = a;
	rec->u.raw[1] = b;
}

void vt_syscall_event(struct vt_vcpu *vcpu, const struct vt_guest_regs *r, enum vt_sys_edge edge)
{
	struct vtice_record recs[VTICE_SYSCALL_GROUP_MAX];
	struct vt_sys_task t = { 0 };
	bool known = vt_read_task(vcpu, &t);
	u32 n = 1;
	u64 comm[2];

	if (!vcpu->ring.hdr || !vt_filter_match(&vcpu->hv->sys_filter, &t, known))
		return;
	vt_memset(recs, 0, sizeof(recs));
	recs[0].cpu = (u16)vcpu->cpu;
	recs[0].tsc = vt_rdtsc();
	if (edge == VT_SYS_ENTER) {
		recs[0].type = VTICE_REC_SYSCALL_ENTER;
		recs[0].u.syscall.nr = r->rax;
		recs[0].u.syscall.arg = r->rdi;
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_ARGS12, r->rsi, r->rdx);
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_ARGS34, r->r10, r->r8);
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_ARG5, r->r9, 0);
	} else {
		recs[0].type = VTICE_REC_SYSCALL_EXIT;
		recs[0].u.syscall.nr = VTICE_SYSCALL_NR_UNKNOWN;
		recs[0].u.syscall.arg = r->rax;
	}
	if (known) {
		vt_memcpy(comm, t.comm, sizeof(comm));
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_TASK,
			    t.pid | (u64)t.tgid << 32, t.task);
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_COMM, comm[0], comm[1]);
	}
	/* The head record was copied into each DATA record before its flags were set. */
	recs[0].flags = n - 1;
	if (vt_ring_push_group(&vcpu->ring, recs, n))
		vcpu->counts->syscalls_recorded++;
}
