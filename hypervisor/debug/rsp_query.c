// SPDX-License-Identifier: GPL-2.0
/*
 * General queries (q/Q, GDB manual "General Query Packets"): features,
 * the target description, threads, monitor commands and no-ack mode.
 */
#include "rsp_priv.h"

static void vt_supported(struct vt_rsp *r)
{
	vt_rsp_put(r, "PacketSize=");
	vt_rsp_put_hex(r, VT_RSP_PACKET_MAX);
	vt_rsp_put(r, ";swbreak+;hwbreak+;qXfer:features:read+;vContSupported+;"
		      "QStartNoAckMode+");
	if (r->ops->btrace_enable)
		vt_rsp_put(r, ";Qbtrace:bts+;Qbtrace:off+;qXfer:btrace:read+;qXfer:btrace-conf:read+;"
			      "qXfer:vtice-trace:read+");
	if (r->ops->probe_op)
		vt_rsp_put(r, ";QVtice:probes+");
}

bool vt_rsp_xfer_window(struct vt_rsp *r, struct vt_rsp_cursor *c, u64 *off, u64 *len)
{
	if (!vt_rsp_parse_hex(c, off) || !vt_rsp_expect(c, ',') || !vt_rsp_parse_hex(c, len) ||
	    !vt_rsp_at_end(c)) {
		vt_rsp_error(r, 0x16);
		return false;
	}
	if (*len > sizeof(r->out) - 2)
		*len = sizeof(r->out) - 2;
	return true;
}

bool vt_rsp_xfer_begin(struct vt_rsp *r, u64 size, u64 off, u64 *len)
{
	if (off >= size) {
		vt_rsp_put(r, "l");
		return false;
	}
	if (*len > size - off)
		*len = size - off;
	vt_rsp_put(r, off + *len < size ? "m" : "l");
	return true;
}

void vt_rsp_xfer_records(struct vt_rsp *r, u32 cpu, u64 count, vt_rsp_record_fn read, u64 off, u64 len)
{
	const u64 size = sizeof(struct vtice_record);
	struct vtice_record rec;
	u64 at;

	len /= 2;	/* escaping may double each byte */
	if (!vt_rsp_xfer_begin(r, count * size, off, &len))
		return;
	for (at = off; at < off + len;) {
		u64 in = at % size, n = size - in;

		if (n > off + len - at)
			n = off + len - at;
		if (!read(r->ctx, cpu, at / size, &rec)) {
			vt_rsp_reply_reset(r);
			vt_rsp_error(r, 0x0e);
			return;
		}
		vt_rsp_put_escaped(r, (const u8 *)&rec + in, (u32)n);
		at += n;
	}
}

/* qXfer:features:read:ANNEX:OFFSET,LENGTH -> 'm' DATA (more) or 'l' DATA (last). */
static void vt_xfer_features(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u32 size;
	u64 off, len;
	const char *xml = vt_rsp_target_xml(&size);

	if (!vt_rsp_prefix(c, "target.xml:")) {
		vt_rsp_error(r, 0x00);
		return;
	}
	/* The XML holds none of '$', '#', '}' or '*', so it needs no escaping. */
	if (vt_rsp_xfer_window(r, c, &off, &len) && vt_rsp_xfer_begin(r, size, off, &len))
		vt_rsp_put_raw(r, xml + off, (u32)len);
}

/* qfThreadInfo/qsThreadInfo: all online CPUs in one 'm' list, then 'l'. */
static void vt_thread_info(struct vt_rsp *r, bool first)
{
	u32 cpu, n = 0;

	if (!first) {
		vt_rsp_put(r, "l");
		return;
	}
	vt_rsp_put(r, "m");
	for (cpu = 0; cpu < vt_rsp_cpus(r); cpu++) {
		if (!r->ops->cpu_online(r->ctx, cpu))
			continue;
		if (n++)
			vt_rsp_put(r, ",");
		vt_rsp_put_hex(r, (u64)cpu + 1);
	}
	if (!n)
		vt_rsp_error(r, 0x01);
}

static void vt_thread_extra(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	char text[16] = "CPU ";
	s32 cpu;
	u32 i = 4, digits = 0, v;

	if (!vt_rsp_parse_thread(c, &cpu) || cpu < 0) {
		vt_rsp_error(r, 0x16);
		return;
	}
	for (v = (u32)cpu; v || !digits; v /= 10)
		digits++;
	for (v = (u32)cpu; digits; v /= 10)
		text[i + --digits] = (char)('0' + v % 10);
	while (text[i])
		i++;
	vt_rsp_put_hex_bytes(r, text, i);
}

/* qRcmd,HEX: the answer goes back hex-encoded, as gdb prints it. */
static void vt_monitor(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	u32 len = 0, out_len = 0;

	if (!vt_rsp_unhex(c, r->scratch, sizeof(r->monitor) - 1, &len)) {
		vt_rsp_error(r, 0x16);
		return;
	}
	vt_memcpy(r->monitor, r->scratch, len);
	r->monitor[len] = 0;
	if (!r->ops->monitor || r->ops->monitor(r->ctx, r->monitor, (char *)r->scratch,
						  sizeof(r->monitor))) {
		vt_rsp_error(r, 0x01);
		return;
	}
	while (out_len < sizeof(r->monitor) && r->scratch[out_len])
		out_len++;
	if (!out_len)
		vt_rsp_put(r, "OK");
	else
		vt_rsp_put_hex_bytes(r, r->scratch, out_len);
}

enum vt_rsp_action vt_rsp_query(struct vt_rsp *r, struct vt_rsp_cursor *c)
{
	if (vt_rsp_btrace(r, c) || vt_rsp_probes(r, c))
		return VT_RSP_STAY;
	if (vt_rsp_prefix(c, "qSupported"))
		vt_supported(r);
	else if (vt_rsp_prefix(c, "qXfer:features:read:"))
		vt_xfer_features(r, c);
	else if (vt_rsp_prefix(c, "qfThreadInfo"))
		vt_thread_info(r, true);
	else if (vt_rsp_prefix(c, "qsThreadInfo"))
		vt_thread_info(r, false);
	else if (vt_rsp_prefix(c, "qC") && vt_rsp_at_end(c)) {
		vt_rsp_put(r, "QC");
		vt_rsp_put_hex(r, (u64)(r->have_stop ? r->last_stop.cpu : 0) + 1);
	} else if (vt_rsp_prefix(c, "qAttached"))
		vt_rsp_put(r, "1");
	else if (vt_rsp_prefix(c, "qThreadExtraInfo,"))
		vt_thread_extra(r, c);
	else if (vt_rsp_prefix(c, "qRcmd,"))
		vt_monitor(r, c);
	else if (vt_rsp_prefix(c, "qSymbol"))
		vt_rsp_put(r, "OK");
	else if (vt_rsp_prefix(c, "QStartNoAckMode")) {
		vt_rsp_put(r, "OK");
		r->no_ack = true;	/* after this reply's own '+' exchange */
	}
	return VT_RSP_STAY;
}
