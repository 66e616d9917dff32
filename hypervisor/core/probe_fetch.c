// SPDX-License-Identifier: GPL-2.0
/*
 * Fetch programs (probe_fetch.h). Nothing a program holds is trusted at a
 * hit beyond what vt_fetch_valid checked when it was armed: the op codes,
 * the argument, size and slot numbers. The addresses it reads are the
 * guest's own, read through the guest's page tables and EPT view.
 */
#include "probe_fetch.h"
#include "exit.h"
#include "intrin.h"
#include "syscall_trap.h"
#include <vtice/records.h>

VT_STATIC_ASSERT(VTICE_FETCH_VALUES_MAX == VTICE_PROBE_VALUES_MAX, "records.h's group counts every slot");

static struct vtice_fetch_op vt_fetch_op(u64 raw)
{
	struct vtice_fetch_op op;

	vt_memcpy(&op, &raw, sizeof(op));
	return op;
}

/* A program's value kept at its address: SUM, MIN, MAX, HIST, LHIST or KEYED. */
static bool vt_fetch_is_tally(struct vtice_fetch_op op)
{
	return op.code == VTICE_FETCH_SUM || op.code == VTICE_FETCH_MIN || op.code == VTICE_FETCH_MAX ||
	       op.code == VTICE_FETCH_HIST || op.code == VTICE_FETCH_LHIST || op.code == VTICE_FETCH_KEYED;
}

/* The ops that take an imm; only LHIST takes a base. */
static bool vt_fetch_takes_imm(struct vtice_fetch_op op)
{
	return op.code == VTICE_FETCH_ADD || op.code == VTICE_FETCH_INDEX || op.code == VTICE_FETCH_KEEP ||
	       op.code == VTICE_FETCH_LHIST || op.code == VTICE_FETCH_KEYED;
}

/* What vt_fetch_valid has seen of a program so far. */
struct vt_fetch_seen {
	u32 slots;	/* VALUE's, a bit each */
	u32 strings;
	u32 keys;	/* KEY ops */
};

/*
 * KEYED's key and imm after keys KEY ops. The imm: 0 counts alone; SUM,
 * MIN or MAX keeps the accumulator too, under a key that is not it. The
 * key's two words: with no KEY, the accumulator (VALUE, no imm) or the
 * task's or the CPU's; with one, the task's pid or tid or the CPU then
 * KEY's, or KEY's alone (VALUE, with an imm: a count under it alone is
 * VALUE without KEY); with two, KEY's both (VALUE). A comm takes both
 * words: no KEY beside it.
 */
static bool vt_fetch_keyed_valid(struct vtice_fetch_op op, u32 keys)
{
	bool keeps = op.imm == VTICE_FETCH_SUM || op.imm == VTICE_FETCH_MIN || op.imm == VTICE_FETCH_MAX;
	u32 kind = op.arg & 0xf;

	if (op.imm && !keeps)
		return false;
	switch (keys) {
	case 0:
		return !op.imm || kind != VTICE_FETCH_KEY_VALUE;
	case 1:
		return kind == VTICE_FETCH_KEY_VALUE ? keeps : kind != VTICE_FETCH_KEY_COMM;
	default:
		return kind == VTICE_FETCH_KEY_VALUE;
	}
}

/* KEYED counting alone under a key of the task's or the CPU's: it needs no operand before it. */
static bool vt_fetch_is_keyed_alone(struct vtice_fetch_op op)
{
	return op.code == VTICE_FETCH_KEYED && (op.arg & 0xf) != VTICE_FETCH_KEY_VALUE && !op.imm;
}

/* COUNT and the tallies end a program: the hit is counted in root, not recorded. */
static bool vt_fetch_is_end(struct vtice_fetch_op op)
{
	return op.code == VTICE_FETCH_COUNT || vt_fetch_is_tally(op);
}

static bool vt_fetch_is_start(struct vtice_fetch_op op)
{
	return op.code == VTICE_FETCH_ARG || op.code == VTICE_FETCH_RETVAL || op.code == VTICE_FETCH_CURTASK ||
	       op.code == VTICE_FETCH_REG;
}

static bool vt_fetch_op_valid(struct vtice_fetch_op op, struct vt_fetch_seen *seen)
{
	if ((op.base && op.code != VTICE_FETCH_LHIST) || (op.imm && !vt_fetch_takes_imm(op)))
		return false;
	switch (op.code) {
	case VTICE_FETCH_ARG:
		return op.arg < VTICE_PROBE_ARGS;
	case VTICE_FETCH_ADD:
		return !op.arg;
	case VTICE_FETCH_LOAD:
		return op.arg == 1 || op.arg == 2 || op.arg == 4 || op.arg == 8;
	case VTICE_FETCH_VALUE:
		if (op.arg >= VTICE_FETCH_VALUES_MAX || (seen->slots & (1u << op.arg)))
			return false;
		seen->slots |= 1u << op.arg;
		return true;
	case VTICE_FETCH_STRING:
		return !op.arg && ++seen->strings == 1;
	case VTICE_FETCH_RETVAL:
	case VTICE_FETCH_CURTASK:
		return !op.arg;
	case VTICE_FETCH_REG:
		return op.arg < VTICE_FETCH_REGS;
	case VTICE_FETCH_INDEX:
		return (op.arg >> 4) < VTICE_FETCH_INDEX_WIDTHS && op.imm > 0;
	case VTICE_FETCH_KEEP:
		return (op.arg & 0xf) < VTICE_FETCH_CMPS && (op.arg >> 4) < VTICE_FETCH_INDEX_WIDTHS;
	case VTICE_FETCH_COUNT:
		return !op.arg;
	case VTICE_FETCH_SUM:
	case VTICE_FETCH_MIN:
	case VTICE_FETCH_MAX:
	case VTICE_FETCH_HIST:
		return !(op.arg & 0xf) && (op.arg >> 4) < VTICE_FETCH_INDEX_WIDTHS;
	case VTICE_FETCH_LHIST:
		return !(op.arg & 0xf) && (op.arg >> 4) < VTICE_FETCH_INDEX_WIDTHS && op.imm > 0;
	case VTICE_FETCH_KEYED:
		return (op.arg & 0xf) < VTICE_FETCH_KEYS && (op.arg >> 4) < VTICE_FETCH_INDEX_WIDTHS &&
		       vt_fetch_keyed_valid(op, seen->keys);
	case VTICE_FETCH_KEY:
		return !(op.arg & 0xf) && (op.arg >> 4) < VTICE_FETCH_INDEX_WIDTHS && ++seen->keys <= 2;
	default:
		return false;
	}
}

bool vt_fetch_valid(const struct vt_fetch_program *prog)
{
	struct vt_fetch_seen seen = { 0 };
	u32 i;

	struct vtice_fetch_op first = vt_fetch_op(prog->ops[0]);

	if (!vt_fetch_is_start(first) && first.code != VTICE_FETCH_COUNT && !vt_fetch_is_keyed_alone(first))
		return false;	/* the accumulator is never read before it is set */
	for (i = 0; i < VTICE_FETCH_OPS_MAX; i++) {
		struct vtice_fetch_op op = vt_fetch_op(prog->ops[i]);

		if (op.code == VTICE_FETCH_END)
			return !prog->ops[i] && !seen.keys;	/* a KEY with no KEYED after it */
		if (!vt_fetch_op_valid(op, &seen))
			return false;
		if (vt_fetch_is_end(op))	/* the last: nothing after it runs; a KEY's is a KEYED (checked) */
			return (op.code == VTICE_FETCH_KEYED || !seen.keys) &&
			       (i + 1 == VTICE_FETCH_OPS_MAX || !prog->ops[i + 1]);
	}
	return !seen.keys;
}

/* A general register at the hit, by enum vtice_fetch_reg (checked: below VTICE_FETCH_REGS). */
static u64 vt_fetch_reg(const struct vt_guest_regs *r, u32 n)
{
	const u64 regs[VTICE_FETCH_REGS] = {
		r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9, r->rax, r->rbx,
		0, r->rbp, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
	};

	if (n == VTICE_FETCH_RSP)
		return vt_vmread_or0(GUEST_RSP);	/* the VMCS holds the guest's RSP, not the saved GPRs */
	return n < VTICE_FETCH_REGS ? regs[n] : 0;
}

/* v cut to an enum vtice_fetch_index_width (checked) and extended. */
static u64 vt_fetch_cut(u64 v, u32 width)
{
	switch (width) {
	case VTICE_FETCH_INDEX_S32:
		return (u64)(s64)(s32)v;
	case VTICE_FETCH_INDEX_U32:
		return (u32)v;
	case VTICE_FETCH_INDEX_S16:
		return (u64)(s64)(s16)v;
	case VTICE_FETCH_INDEX_U16:
		return (u16)v;
	case VTICE_FETCH_INDEX_S8:
		return (u64)(s64)(s8)v;
	case VTICE_FETCH_INDEX_U8:
		return (u8)v;
	default:
		return v;
	}
}

/* INDEX's index: its register (arg's bits 0-3), cut to its width (bits 4-6). */
static u64 vt_fetch_index(const struct vt_guest_regs *r, u8 arg)
{
	return vt_fetch_cut(vt_fetch_reg(r, arg & 0xf), arg >> 4);
}

/* KEEP: whether acc, cut to its width (arg's bits 4-6), compares to imm as bits 0-3 say. */
static bool vt_fetch_holds(u64 acc, struct vtice_fetch_op op)
{
	s64 v = (s64)vt_fetch_cut(acc, op.arg >> 4), c = op.imm;

	switch (op.arg & 0xf) {
	case VTICE_FETCH_EQ:
		return v == c;
	case VTICE_FETCH_NE:
		return v != c;
	case VTICE_FETCH_LT:
		return v < c;
	case VTICE_FETCH_LE:
		return v <= c;
	case VTICE_FETCH_GT:
		return v > c;
	default:
		return v >= c;	/* GE: the last of the checked comparisons */
	}
}

/* The bytes at gva, zero-extended; false when any of them is unmapped. */
static bool vt_fetch_load(const struct vt_vcpu *vcpu, u64 gva, u32 bytes, u64 *out)
{
	u64 v = 0;

	if (vt_own_mem(vcpu, gva, &v, bytes, false) != (int)bytes)
		return false;
	*out = v;
	return true;
}

/*
 * 1 when a value the program uses (a KEEP's, a VALUE's, a KEY's or its
 * tally's operand) came from a LOAD that faulted and was not counted at
 * an earlier use: a counted hit's share of the console's "unreadable_reads".
 */
static u32 vt_fetch_use(bool readable, bool *used)
{
	bool first = !*used;

	*used = true;
	return first && !readable;
}

/* Whether the op that ends a counted hit takes the accumulator: as its operand, or as KEYED's key. */
static bool vt_fetch_end_uses_acc(struct vtice_fetch_op op, u32 nkeys)
{
	if (op.code != VTICE_FETCH_KEYED)
		return true;	/* SUM, MIN, MAX, HIST, LHIST */
	return op.imm || ((op.arg & 0xf) == VTICE_FETCH_KEY_VALUE && !nkeys);
}

/*
 * The record budget is enforced here too, not only by vt_fetch_valid: the
 * group's buffer holds VTICE_FETCH_VALUES_MAX values and one string, and
 * nothing a program holds may write past it.
 */
u32 vt_fetch_run(const struct vt_vcpu *vcpu, const struct vt_guest_regs *r, u64 task,
		 const struct vt_fetch_program *prog, struct vtice_record *recs, u32 n, struct vt_fetch_end *end)
{
	u64 acc = 0, keys[2] = { 0, 0 };
	bool readable = true, used = false, string_done = false;
	u32 i, values = 0, nkeys = 0, unreadable = 0;

	for (i = 0; i < VTICE_FETCH_OPS_MAX; i++) {
		struct vtice_fetch_op op = vt_fetch_op(prog->ops[i]);

		switch (op.code) {
		case VTICE_FETCH_ARG:
			acc = vt_call_arg(r, op.arg);
			readable = true;
			used = false;
			break;
		case VTICE_FETCH_RETVAL:
			acc = r->rax;
			readable = true;
			used = false;
			break;
		case VTICE_FETCH_CURTASK:
			acc = task;
			readable = task != 0;
			used = false;
			break;
		case VTICE_FETCH_REG:
			acc = vt_fetch_reg(r, op.arg);
			readable = true;
			used = false;
			break;
		case VTICE_FETCH_ADD:
			acc += (u64)(s64)op.imm;
			break;
		case VTICE_FETCH_INDEX:	/* wraps as the guest's own a[i] would: only guest reads follow */
			acc += vt_fetch_index(r, op.arg) * (u64)(s64)op.imm;
			break;
		case VTICE_FETCH_KEEP:
			if (!vt_fetch_holds(acc, op))
				return 0;
			unreadable += vt_fetch_use(readable, &used);
			break;
		case VTICE_FETCH_COUNT:
			*end = (struct vt_fetch_end){ .op = op.code, .unreadable = unreadable };
			return VT_FETCH_COUNTED;
		case VTICE_FETCH_KEY:	/* a LOAD that faulted left 0: the key is 0, as the console's */
			if (nkeys < 2)
				keys[nkeys++] = vt_fetch_cut(acc, op.arg >> 4);
			unreadable += vt_fetch_use(readable, &used);
			break;
		case VTICE_FETCH_SUM:	/* a LOAD that faulted left 0: it adds nothing */
		case VTICE_FETCH_MIN:
		case VTICE_FETCH_MAX:
		case VTICE_FETCH_HIST:
		case VTICE_FETCH_LHIST:
		case VTICE_FETCH_KEYED:
			*end = (struct vt_fetch_end){
				.op = op.code, .key_kind = op.arg & 0xf, .value = vt_fetch_cut(acc, op.arg >> 4),
				.base = op.base, .imm = (u64)op.imm, .records = n,
			};
			/* KEY's words, or the accumulator; a task's or the CPU's the caller puts first */
			end->key[0] = nkeys ? keys[0] : end->value;
			end->key[1] = keys[1];
			end->keys = nkeys;
			if (vt_fetch_end_uses_acc(op, nkeys))
				unreadable += vt_fetch_use(readable, &used);
			end->unreadable = unreadable;
			return VT_FETCH_COUNTED;
		case VTICE_FETCH_LOAD:
			if (readable)
				readable = op.arg <= sizeof(acc) && vt_fetch_load(vcpu, acc, op.arg, &acc);
			if (!readable)
				acc = 0;
			used = false;
			break;
		case VTICE_FETCH_VALUE:
			if (values++ == VTICE_FETCH_VALUES_MAX)
				return n;
			unreadable += vt_fetch_use(readable, &used);
			vt_put_data(&recs[n++], &recs[0], VTICE_SYSCALL_DATA_VALUE, acc,
				    op.arg | (readable ? 0 : VTICE_PROBE_VALUE_UNREADABLE));
			break;
		case VTICE_FETCH_STRING:
			if (string_done)
				return n;
			string_done = true;
			if (readable)
				n = vt_put_string(vcpu, acc, recs, n);
			break;
		default:
			return n;	/* END */
		}
	}
	return n;
}

/* The op that ends prog: COUNT or a tally; END when none does (walked once, at ADD). */
static u32 vt_fetch_end_code(const struct vt_fetch_program *prog)
{
	u32 i;

	for (i = 0; i < VTICE_FETCH_OPS_MAX; i++) {
		struct vtice_fetch_op op = vt_fetch_op(prog->ops[i]);

		if (op.code == VTICE_FETCH_END || vt_fetch_is_end(op))
			return op.code;
	}
	return VTICE_FETCH_END;
}

void vt_fetch_totals_start(const struct vt_fetch_program *prog, struct vt_fetch_totals *t)
{
	vt_memset(t, 0, sizeof(*t));
	switch (prog ? vt_fetch_end_code(prog) : VTICE_FETCH_END) {
	case VTICE_FETCH_MIN:
		t->kept = VT_BIT(63) - 1;	/* INT64_MAX */
		break;
	case VTICE_FETCH_MAX:
		t->kept = VT_BIT(63);	/* INT64_MIN */
		break;
	default:
		break;
	}
}

u32 vt_fetch_hist_bucket(u64 value)
{
	if ((s64)value < 0)
		return 0;
	return value ? 65 - (u32)__builtin_clzll(value) : 1;
}

u32 vt_fetch_lhist_bucket(u64 value, s64 base, u64 width)
{
	u64 k;

	if ((s64)value < base)
		return 0;
	k = (value - (u64)base) / width;	/* value >= base: the difference fits in a u64 */
	return k >= VTICE_FETCH_HIST_BUCKETS - 2 ? VTICE_FETCH_HIST_BUCKETS - 1 : (u32)k + 1;
}

/* *kept = the least (or greatest) of it and v as signed numbers, against other CPUs' hits. */
static void vt_fetch_keep(u64 *kept, u64 v, bool least)
{
	u64 old = __atomic_load_n(kept, __ATOMIC_RELAXED);

	while (least ? (s64)v < (s64)old : (s64)v > (s64)old)
		if (__atomic_compare_exchange_n(kept, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return;
}

/* The hit's value into a counting slot's kept, as KEYED's imm says (0: nothing kept). */
static void vt_fetch_keep_in_slot(struct vt_fetch_key_slot *s, const struct vt_fetch_end *end)
{
	if (end->imm == VTICE_FETCH_SUM)
		__atomic_fetch_add(&s->kept, end->value, __ATOMIC_RELAXED);
	else if (end->imm == VTICE_FETCH_MIN || end->imm == VTICE_FETCH_MAX)
		vt_fetch_keep(&s->kept, end->value, end->imm == VTICE_FETCH_MIN);
}

/*
 * 1 more under end's key, and its value kept as end's imm says: in the
 * first slot counting that key, else in the first free one, taken for it.
 * A slot another CPU is taking is passed by, so a key may end up in two
 * slots (the reader adds them). False when every slot holds another key.
 */
static bool vt_fetch_count_key(struct vt_fetch_totals *t, const struct vt_fetch_end *end)
{
	u32 i;

	for (i = 0; i < VTICE_FETCH_KEYED_SLOTS; i++) {
		struct vt_fetch_key_slot *s = &t->keys[i];
		u64 state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);

		if (state == VT_SLOT_FREE &&
		    __atomic_compare_exchange_n(&s->state, &state, VT_SLOT_TAKEN, false, __ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE)) {
			s->key[0] = end->key[0];
			s->key[1] = end->key[1];
			s->kept = end->imm ? end->value : 0;	/* the first value is the sum, the least and the greatest */
			s->count = 1;
			__atomic_store_n(&s->state, VT_SLOT_COUNTING, __ATOMIC_RELEASE);
			return true;
		}
		if (state == VT_SLOT_COUNTING && s->key[0] == end->key[0] && s->key[1] == end->key[1]) {
			vt_fetch_keep_in_slot(s, end);	/* before the count, as the totals' counted */
			__atomic_fetch_add(&s->count, 1, __ATOMIC_RELEASE);
			return true;
		}
	}
	return false;
}

bool vt_fetch_tally(const struct vt_fetch_end *end, struct vt_fetch_totals *t)
{
	switch (end->op) {
	case VTICE_FETCH_MIN:
	case VTICE_FETCH_MAX:
		vt_fetch_keep(&t->kept, end->value, end->op == VTICE_FETCH_MIN);
		break;
	case VTICE_FETCH_HIST:
		__atomic_fetch_add(&t->hist[vt_fetch_hist_bucket(end->value)], 1, __ATOMIC_RELAXED);
		break;
	case VTICE_FETCH_LHIST:
		__atomic_fetch_add(&t->hist[vt_fetch_lhist_bucket(end->value, end->base, end->imm)], 1,
				   __ATOMIC_RELAXED);
		break;
	case VTICE_FETCH_KEYED:
		if (!vt_fetch_count_key(t, end))
			return false;
		break;
	default:
		__atomic_fetch_add(&t->kept, end->value, __ATOMIC_RELAXED);	/* COUNT's value is 0 */
		break;
	}
	if (end->unreadable)
		__atomic_fetch_add(&t->unreadable, end->unreadable, __ATOMIC_RELAXED);
	/* After the table: a reader that sees the count sees its hits in the buckets and slots. */
	__atomic_fetch_add(&t->counted, 1, __ATOMIC_RELEASE);
	return true;
}

u64 vt_fetch_key_slot_read(const struct vt_fetch_totals *t, u32 slot, u32 part)
{
	const struct vt_fetch_key_slot *s = &t->keys[slot];

	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != VT_SLOT_COUNTING)
		return 0;
	if (part == 3)
		return __atomic_load_n(&s->kept, __ATOMIC_RELAXED);
	return part ? s->key[part - 1] : __atomic_load_n(&s->count, __ATOMIC_ACQUIRE);
}
