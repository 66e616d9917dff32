// SPDX-License-Identifier: GPL-2.0
/*
 * gdb's branch-trace packets (GDB manual, "Branch Trace Format" and
 * "General Query Packets"): Qbtrace:bts and Qbtrace:off for the Hg thread
 * (a CPU), qXfer:btrace:read:all as BTS blocks, qXfer:btrace-conf:read,
 * and qXfer:vtice-trace:read:CPU, the same trace as raw vtice_records with
 * their time stamps and flags, for the console.
 *
 * A BTS block is a run of sequential instructions [begin, end]; end is the
 * branch that left it. Blocks come newest first and the newest ends at the
 * current position, so block k is computed from records n-1-k and n-k:
 * nothing is stored, and every block has the same length in the XML, so
 * any window of the document is computed from its offset alone.
 */
#include "rsp_priv.h"
#include "../core/os.h"

#define VT_BTRACE_HEAD	"<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n"
#define VT_BTRACE_TAIL	"</btrace>\n"
#define VT_BLOCK_BEGIN_AT	(sizeof("<block begin=\"0x") - 1)
#define VT_BLOCK_END_AT		(VT_BLOCK_BEGIN_AT + 16 + sizeof("\" end=\"0x") - 1)
#define VT_BLOCK_LEN		(VT_BLOCK_END_AT + 16 + sizeof("\"/>\n") - 1)
#define VT_REC_SIZE	((u64)sizeof(struct vtice_record))

static bool vt_btrace_cpu(struct vt_rsp *r, u32 *cpu)
{
	s32 c = vt_rsp_general_cpu(r);

	if (!r->ops->btrace_enable || c < 0)
		return false;
	*cpu = (u32)c;
	return true;
}

/* Qbtrace:bts / Qbtrace:off. gdb shows the text of an "E." reply. */
static void vt_btrace_enable(struct vt_rsp *r, bool on)
{
	u32 cpu;
	int ret;

	if (!vt_btrace_cpu(r, &cpu)) {
		vt_rsp_put(r, "E.no branch tracer in this stub");
		return;
	}
	ret = r->ops->btrace_enable(r->ctx, cpu, on);
	if (!ret && cpu < VT_RSP_MAX_CPUS)
		r->btrace_seen[cpu] = 0;	/* a new trace: "new" serves it whole */
	if (!ret)
		vt_rsp_put(r, "OK");
	else if (ret == -VT_EOPNOTSUPP)
		vt_rsp_put(r, "E.this CPU has neither the monitor trap flag nor interrupt exiting for TF steps: "
			   "the hypervisor cannot trace it");
	else
		vt_rsp_put(r, "E.no such CPU");
}

static void vt_put_hex16(char *out, u64 v)
{
	int i;

	for (i = 15; i >= 0; i--, v >>= 4)
		out[i] = "0123456789abcdef"[v & 0xf];
}

/* Block k of n + 1 (newest first); false when there is none. */
static bool vt_btrace_block(struct vt_rsp *r, u32 cpu, u64 n, u64 k, u64 *begin, u64 *end)
{
	struct vtice_record newer, older;
	u64 first, last;

	r->ops->btrace_span(r->ctx, cpu, &first, &last);
	if (k == 0) {
		*end = last;
		if (!r->ops->btrace_record(r->ctx, cpu, n - 1, &older))
			return false;
		*begin = older.u.branch.to;
		return true;
	}
	if (!r->ops->btrace_record(r->ctx, cpu, n - k, &newer))
		return false;
	*end = newer.u.branch.from;
	if (k == n) {
		*begin = first;
		return true;
	}
	if (!r->ops->btrace_record(r->ctx, cpu, n - 1 - k, &older))
		return false;
	*begin = older.u.branch.to;
	return true;
}

static void vt_btrace_block_text(char *out, u64 begin, u64 end)
{
	static const char tmpl[] = "<block begin=\"0x0000000000000000\" end=\"0x0000000000000000\"/>\n";

	vt_memcpy(out, tmpl, VT_BLOCK_LEN);
	vt_put_hex16(out + VT_BLOCK_BEGIN_AT, begin);
	vt_put_hex16(out + VT_BLOCK_END_AT, end);
}

/* The byte at offset `at` of the document (head, n blocks, tail). */
static bool vt_btrace_byte(struct vt_rsp *r, u32 cpu, u64 n, u64 at, char *block, u64 *cached,
			   char *out)
{
	u64 head = sizeof(VT_BTRACE_HEAD) - 1, k, begin, end;

	if (at < head) {
		*out = VT_BTRACE_HEAD[at];
		return true;
	}
	at -= head;
	if (at >= n * VT_BLOCK_LEN) {
		*out = VT_BTRACE_TAIL[at - n * VT_BLOCK_LEN];
		return true;
	}
	k = at / VT_BLOCK_LEN;
	if (*cached != k) {
		if (!vt_btrace_block(r, cpu, n - 1, k, &begin, &end))
			return false;
		vt_btrace_block_text(block, begin, end);
		*cached = k;
	}
	*out = block[at % VT_BLOCK_LEN];
	return true;
}

/*
 * Whether a "new" read starting now finds cpu's trace as it was last served
 * (GDB manual, "qXfer:btrace:read": "new" returns the whole trace if it
 * changed since the last read request, else nothing). The answer holds for
 * the later windows of the same read; every read leaves the trace marked
 * as served.
 */
static bool vt_btrace_unchanged(struct vt_rsp *r, u32 cpu, bool is_new, u64 off, u64 count)
{
	u64 first, last;

	if (cpu >= VT_RSP_MAX_CPUS)
		return false;
	r->ops->btrace_span(r->ctx, cpu, &first, &last);
	if (is_new && off == 0)
		r->btrace_new_unchanged = r->btrace_seen[cpu] == count + 1 &&
					  r->btrace_seen_ip[cpu] == last;
	r->btrace_seen[cpu] = count + 1;
	r->btrace_seen_ip[cpu] = last;
	return is_new && r->btrace_new_unchanged;
}

/*
 * qXfer:btrace:read:all|new:OFF,LEN. "delta" is refused and gdb then asks
 * for "new"; answering that with an empty document while nothing changed
 * keeps gdb from discarding and re-reading the whole trace (hundreds of KB,
 * minutes on a 115200 baud line) for each of its record commands.
 */
static void vt_btrace_read(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 off, len, n, size, i, cached = ~0ull;
	char block[VT_BLOCK_LEN], ch;
	bool is_new = false;
	u32 cpu;

	if (vt_rsp_prefix(c, "new:")) {
		is_new = true;
	} else if (!vt_rsp_prefix(c, "all:")) {
		vt_rsp_error(r, 0x01);
		return;
	}
	if (!vt_rsp_xfer_window(r, c, &off, &len))
		return;
	if (!vt_btrace_cpu(r, &cpu)) {
		vt_rsp_error(r, 0x01);
		return;
	}
	n = r->ops->btrace_count(r->ctx, cpu);
	if (vt_btrace_unchanged(r, cpu, is_new, off, n))
		n = 0;
	else
		n = n ? n + 1 : 0;	/* blocks: one more than the branches between them */
	size = sizeof(VT_BTRACE_HEAD) - 1 + n * VT_BLOCK_LEN + sizeof(VT_BTRACE_TAIL) - 1;
	/* Only '<', '>', '"', '/', '=', '!', letters and digits: no escaping. */
	if (!vt_rsp_xfer_begin(r, size, off, &len))
		return;
	for (i = 0; i < len; i++) {
		if (!vt_btrace_byte(r, cpu, n, off + i, block, &cached, &ch)) {
			vt_rsp_reply_reset(r);
			vt_rsp_error(r, 0x0e);
			return;
		}
		vt_rsp_put_raw(r, &ch, 1);
	}
}

/*
 * qXfer:btrace-conf:read::OFF,LEN for the Hg CPU: a <bts> element with the
 * buffer size while it is traced, none while it is not. gdb reads this when
 * it connects and, finding a format, takes the target to be recording.
 */
static void vt_btrace_conf(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	static const char head[] = "<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n"
				   "<btrace-conf version=\"1.0\">\n";
	static const char bts[] = "<bts size=\"0x";
	static const char bts_end[] = "\"/>\n";
	static const char tail[] = "</btrace-conf>\n";
	char doc[sizeof(head) + sizeof(bts) + 16 + sizeof(bts_end) + sizeof(tail)];
	u64 off, len, size, records;
	u32 cpu;

	if (!vt_rsp_prefix(c, ":") || !vt_rsp_xfer_window(r, c, &off, &len))
		return;
	if (!vt_btrace_cpu(r, &cpu)) {
		vt_rsp_error(r, 0x01);
		return;
	}
	records = r->ops->btrace_size(r->ctx, cpu);
	vt_memcpy(doc, head, sizeof(head) - 1);
	size = sizeof(head) - 1;
	if (records) {
		vt_memcpy(doc + size, bts, sizeof(bts) - 1);
		size += sizeof(bts) - 1;
		vt_put_hex16(doc + size, records * VT_REC_SIZE);
		size += 16;
		vt_memcpy(doc + size, bts_end, sizeof(bts_end) - 1);
		size += sizeof(bts_end) - 1;
	}
	vt_memcpy(doc + size, tail, sizeof(tail) - 1);
	size += sizeof(tail) - 1;
	if (vt_rsp_xfer_begin(r, size, off, &len))
		vt_rsp_put_raw(r, doc + off, (u32)len);
}

/* qXfer:vtice-trace:read:CPU:OFF,LEN: the records themselves, oldest first. */
static void vt_vtice_trace_read(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u64 cpu, off, len;

	if (!vt_rsp_parse_hex(c, &cpu) || !vt_rsp_expect(c, ':') || !vt_rsp_xfer_window(r, c, &off, &len))
		return;
	if (!r->ops->btrace_enable || cpu >= vt_rsp_cpus(r)) {
		vt_rsp_error(r, 0x16);
		return;
	}
	vt_rsp_xfer_records(r, (u32)cpu, r->ops->btrace_count(r->ctx, (u32)cpu), r->ops->btrace_record, off, len);
}

bool vt_rsp_btrace(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	if (vt_rsp_prefix(c, "Qbtrace:bts") && vt_rsp_at_end(c))
		vt_btrace_enable(r, true);
	else if (vt_rsp_prefix(c, "Qbtrace:off") && vt_rsp_at_end(c))
		vt_btrace_enable(r, false);
	else if (vt_rsp_prefix(c, "qXfer:btrace:read:"))
		vt_btrace_read(r, c);
	else if (vt_rsp_prefix(c, "qXfer:btrace-conf:read:"))
		vt_btrace_conf(r, c);
	else if (vt_rsp_prefix(c, "qXfer:vtice-trace:read:"))
		vt_vtice_trace_read(r, c);
	else
		return false;
	return true;
}
