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
#include "probe_fetch.h"
#include <vtice/vmcall.h>

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

void vt_put_data(struct vtice_record *rec, const struct vtice_record *head, u32 kind, u64 a, u64 b)
{
	*rec = *head;
	rec->type = VTICE_REC_SYSCALL_DATA;
	rec->flags = kind;
	rec->u.raw[0] = a;
	rec->u.raw[1] = b;
}

/* TASK and COMM behind the head; n is the group's size so far. */
static u32 vt_put_task(struct vtice_record *recs, u32 n, const struct vt_sys_task *t)
{
	u64 comm[2];

	vt_memcpy(comm, t->comm, sizeof(comm));
	vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_TASK, t->pid | (u64)t->tgid << 32, t->task);
	vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_COMM, comm[0], comm[1]);
	return n;
}

u32 vt_put_current_task(const struct vt_vcpu *vcpu, const struct vt_sys_filter *filter,
			struct vtice_record *recs, u32 n)
{
	struct vt_sys_task t = { 0 };
	bool known = vt_read_task(vcpu, &t);

	if (!vt_filter_match(filter, &t, known))
		return 0;
	return known ? vt_put_task(recs, n, &t) : n;
}

/* The head's flags count the DATA records; they were copied before it was set. */
static bool vt_push_event(struct vt_vcpu *vcpu, struct vtice_record *recs, u32 n)
{
	recs[0].flags |= n - 1;	/* beside what the head says of itself (records.h) */
	return vt_ring_push_group(&vcpu->ring, recs, n);
}

/*
 * The string at gva as STRING records from recs[n]: up to and with its
 * NUL, or VTICE_PROBE_STR_MAX bytes, as far as it is mapped. The new n.
 */
u32 vt_put_string(const struct vt_vcpu *vcpu, u64 gva, struct vtice_record *recs, u32 n)
{
	u64 words[VTICE_PROBE_STR_MAX / 8] = { 0 };
	const char *bytes = (const char *)words;
	int got = vt_own_mem(vcpu, gva, words, sizeof(words), false);
	u32 len, i;

	if (got <= 0)
		return n;
	for (len = 0; len < (u32)got && bytes[len]; len++)
		;
	if (len < (u32)got)
		len++;	/* the NUL, so the console knows the string ended */
	for (i = 0; i < len; i += 16)
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_STRING, words[i / 8], words[i / 8 + 1]);
	return n;
}

/*
 * VTICE_VMCALL_SYSCALL_STRINGS (vmcall.h): RDX and R8 hold four 16-bit
 * slots each, number | N << 12.
 */
u64 vt_syscall_strings_set(struct vt_hv *hv, u64 rdx, u64 r8)
{
	u16 slots[VT_SYS_STRING_SLOTS];
	u32 i;

	for (i = 0; i < VT_SYS_STRING_SLOTS; i++) {
		slots[i] = (u16)((i < 4 ? rdx : r8) >> (16 * (i % 4)));
		if ((slots[i] >> 12) > VTICE_PROBE_ARGS)
			return (u64)VTICE_VMCALL_EINVAL;
	}
	vt_memcpy(hv->sys_strings, slots, sizeof(slots));
	return VTICE_VMCALL_OK;
}

/*
 * VTICE_VMCALL_SYSCALL_NUMBERS (vmcall.h): one word of the set, or every
 * syscall. Like the strings, taken while no CPU is armed (the OS layer and
 * the stub arm after it), so no event reads it half-written.
 */
u64 vt_syscall_numbers_set(struct vt_hv *hv, u64 word, u64 bits)
{
	struct vt_sys_numbers *set = &hv->sys_numbers;

	if (word == VTICE_VMCALL_SYSCALL_NUMBERS_ALL) {
		set->chosen = false;
		vt_memset(set->bits, 0, sizeof(set->bits));
		return VTICE_VMCALL_OK;
	}
	if (word >= VT_SYS_NR_WORDS)
		return (u64)VTICE_VMCALL_EINVAL;
	set->bits[word] = bits;
	set->chosen = true;
	return VTICE_VMCALL_OK;
}

/*
 * The number of the syscall a SYSRET ends: what the entry code saved in
 * the task's pt_regs (orig_ax; RAX holds the return value by now), read
 * through the task's stack pointer. ~0 when it cannot be read.
 */
static u64 vt_syscall_exit_nr(const struct vt_vcpu *vcpu, const struct vt_sys_task *t)
{
	const struct vt_task_layout *l = &vcpu->hv->task_layout;
	u64 stack, nr;

	if (vt_own_mem(vcpu, t->task + l->stack, &stack, sizeof(stack), false) != (int)sizeof(stack) ||
	    vt_own_mem(vcpu, stack + l->orig_ax, &nr, sizeof(nr), false) != (int)sizeof(nr))
		return ~0ull;
	return nr;
}

/*
 * Whether the set chose this event's syscall. An exit whose number cannot
 * be read (or that seccomp or ptrace made -1) is kept: the console pairs
 * it with its entry, or counts it unpaired, but never loses one it asked for.
 */
static bool vt_syscall_chosen(const struct vt_vcpu *vcpu, const struct vt_guest_regs *r,
			      enum vt_sys_edge edge, const struct vt_sys_task *t, bool known)
{
	const struct vt_sys_numbers *set = &vcpu->hv->sys_numbers;
	u64 nr;

	if (!set->chosen)
		return true;
	if (edge == VT_SYS_ENTER)
		nr = r->rax;
	else if (!known || (nr = vt_syscall_exit_nr(vcpu, t)) == ~0ull)
		return true;
	return nr < 64 * VT_SYS_NR_WORDS && (set->bits[nr / 64] >> (nr % 64) & 1);
}

/* 0, or N: syscall nr's entry copies the string at argument N - 1. */
static u32 vt_syscall_string_arg(const struct vt_hv *hv, u64 nr)
{
	u32 i;

	for (i = 0; i < VT_SYS_STRING_SLOTS; i++)
		if ((hv->sys_strings[i] >> 12) && (hv->sys_strings[i] & 0xfff) == nr)
			return hv->sys_strings[i] >> 12;
	return 0;
}

/* A syscall's argument i (0..5): RDI, RSI, RDX, R10, R8, R9 (R10 for RCX, which SYSCALL takes). */
static u64 vt_syscall_arg(const struct vt_guest_regs *r, u32 i)
{
	const u64 args[VTICE_PROBE_ARGS] = { r->rdi, r->rsi, r->rdx, r->r10, r->r8, r->r9 };

	return i < VTICE_PROBE_ARGS ? args[i] : 0;
}

/*
 * The string a syscall's argument names, if it was asked for and the
 * pointer is a user one (the lower half: a syscall's string argument is
 * the caller's memory; a kernel address there is never copied).
 */
static u32 vt_put_syscall_string(const struct vt_vcpu *vcpu, const struct vt_guest_regs *r,
				 struct vtice_record *recs, u32 n)
{
	u32 arg = vt_syscall_string_arg(vcpu->hv, r->rax);
	u64 gva;

	if (!arg)
		return n;
	gva = vt_syscall_arg(r, arg - 1);
	return (s64)gva >= 0 ? vt_put_string(vcpu, gva, recs, n) : n;
}

void vt_syscall_event(struct vt_vcpu *vcpu, const struct vt_guest_regs *r, enum vt_sys_edge edge)
{
	struct vtice_record recs[VTICE_SYSCALL_GROUP_MAX];
	struct vt_sys_task t = { 0 };
	bool known = vt_read_task(vcpu, &t);
	u32 n = 1;

	if (!vcpu->ring.hdr || !vt_filter_match(&vcpu->hv->sys_filter, &t, known) ||
	    !vt_syscall_chosen(vcpu, r, edge, &t, known))
		return;
	vt_memset(recs, 0, sizeof(recs));
	recs[0].cpu = (u16)vcpu->cpu;
	recs[0].tsc = vt_guest_tsc(vcpu);
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
	if (known)
		n = vt_put_task(recs, n, &t);
	if (edge == VT_SYS_ENTER)
		n = vt_put_syscall_string(vcpu, r, recs, n);
	if (vt_push_event(vcpu, recs, n))
		vcpu->counts->syscalls_recorded++;
}

u64 vt_call_arg(const struct vt_guest_regs *r, u32 i)
{
	const u64 args[VTICE_PROBE_ARGS] = { r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9 };

	return i < VTICE_PROBE_ARGS ? args[i] : 0;
}

/* The GPRS records (records.h): the registers a hit's other records leave out. */
static u32 vt_put_more_regs(const struct vt_guest_regs *r, struct vtice_record *recs, u32 n)
{
	const u64 regs[2 * VTICE_GPRS_RECORDS] = {
		r->rbx, vt_vmread_or0(GUEST_RSP), r->rbp, r->r10, r->r11,
		r->r12, r->r13, r->r14, r->r15, vt_vmread_or0(GUEST_RFLAGS),
	};
	u32 i;

	for (i = 0; i < VTICE_GPRS_RECORDS; i++)
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_GPRS, regs[2 * i], regs[2 * i + 1]);
	return n;
}

/*
 * KEYED's key for a hit of the task t (known: t could be read) on cpu:
 * the task's comm (zero past its NUL, so that one comm is one key), or
 * its pid or tid or the CPU, then a KEY's value when the program set one;
 * a VALUE key is vt_fetch_run's, left as it is. False when the key is
 * the task's and the task is not known.
 */
static bool vt_probe_key(struct vt_fetch_end *end, const struct vt_sys_task *t, bool known, u32 cpu)
{
	u32 i;

	if (end->key_kind == VTICE_FETCH_KEY_VALUE)
		return true;
	end->key[1] = end->keys ? end->key[0] : 0;	/* checked: one KEY at most beside these */
	end->key[0] = 0;
	switch (end->key_kind) {
	case VTICE_FETCH_KEY_CPU:
		end->key[0] = cpu;
		return true;
	case VTICE_FETCH_KEY_PID:
		end->key[0] = t->tgid;
		return known;
	case VTICE_FETCH_KEY_TID:
		end->key[0] = t->pid;
		return known;
	default:	/* VTICE_FETCH_KEY_COMM: no KEY beside it (checked) */
		end->key[1] = 0;
		for (i = 0; i < sizeof(t->comm) && t->comm[i]; i++)
			end->key[i / 8] |= (u64)(u8)t->comm[i] << (8 * (i % 8));
		return known;
	}
}

/* A hit its program counted in root (VT_FETCH_COUNTED): false if it is to be recorded after all. */
static bool vt_probe_counted(struct vt_fetch_end *end, const struct vt_probe_capture *cap,
			     const struct vt_sys_task *t, bool known, u32 cpu)
{
	if (!cap->totals)
		return true;	/* nowhere to count it: as before, not recorded */
	if (end->op == VTICE_FETCH_KEYED && !vt_probe_key(end, t, known, cpu))
		return false;
	return vt_fetch_tally(end, cap->totals);
}

/* Built in the vCPU's capture space: with its stack, too big for root's stack. */
bool vt_probe_event(struct vt_vcpu *vcpu, const struct vt_guest_regs *r, u64 addr,
		    const struct vt_sys_filter *filter, const struct vt_probe_capture *cap)
{
	struct vtice_record *recs = vcpu->profile.recs;
	struct vt_sys_task t = { 0 };
	bool known = vt_read_task(vcpu, &t);
	struct vt_fetch_end end = { 0 };
	u64 rsp;
	u32 n = 1;

	if (!vcpu->ring.hdr)
		return false;
	if (!vt_filter_match(filter, &t, known))
		goto passed_over;
	vt_memset(recs, 0, sizeof(recs[0]) * VTICE_SYSCALL_GROUP_MAX);
	recs[0].type = VTICE_REC_PROBE_HIT;
	recs[0].cpu = (u16)vcpu->cpu;
	recs[0].tsc = vt_guest_tsc(vcpu);
	recs[0].u.syscall.nr = addr;
	recs[0].u.syscall.arg = vt_call_arg(r, 0);
	vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_ARGS12, vt_call_arg(r, 1), vt_call_arg(r, 2));
	vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_ARGS34, vt_call_arg(r, 3), vt_call_arg(r, 4));
	vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_ARG5, vt_call_arg(r, 5), r->rax);
	if (known)
		n = vt_put_task(recs, n, &t);
	if (cap->watch_access) {
		recs[0].flags = cap->watch_access;
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_WATCH, cap->watch_ip, cap->watch_addr);
	}
	if (cap->fetch) {
		n = vt_fetch_run(vcpu, r, known ? t.task : 0, cap->fetch, recs, n, &end);
		if (!n)
			goto passed_over;	/* the program's predicate, like the filter's */
		if (n == VT_FETCH_COUNTED) {
			if (vt_probe_counted(&end, cap, &t, known, vcpu->cpu))
				return false;	/* counted in root */
			n = end.records;	/* no slot for its key: recorded, so that no count is lost */
		}
	}
	if (cap->more_regs)
		n = vt_put_more_regs(r, recs, n);
	if (cap->stack_bytes) {
		/* At the hit: a fn: probe's entry, before its first instruction moved RSP. */
		rsp = vt_vmread_or0(GUEST_RSP);
		vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_REGS, r->rbp, rsp);
		n = vt_put_stack(vcpu, rsp, cap->stack_bytes, n);
	}
	return vt_push_event(vcpu, recs, n);
passed_over:
	if (cap->passed_over)
		__atomic_fetch_add(cap->passed_over, 1, __ATOMIC_RELAXED);
	return false;
}
