// SPDX-License-Identifier: GPL-2.0
/*
 * The RSP engine's framing and dispatch (GDB manual, "Remote Protocol":
 * "Overview", "Packet Acknowledgment", "Interrupts"). Bytes come one at a
 * time from the line; a packet is '$' body '#' two hex digits, the modulo
 * 256 sum of the body. A good packet is acknowledged with '+' and a bad
 * one with '-' (until QStartNoAckMode), '-' from the debugger asks for the
 * last reply again, and 0x03 outside a packet is a break-in.
 */
#include "rsp_priv.h"

void vt_rsp_init(struct vt_rsp *r, const struct vt_dbg_target_ops *ops, void *ctx,
		 void (*put_byte)(void *ctx, u8 byte))
{
	vt_memset(r, 0, sizeof(*r));
	r->ops = ops;
	r->ctx = ctx;
	r->put_byte = put_byte;
	r->c_cpu = -1;
}

static void vt_rsp_send_byte(struct vt_rsp *r, u8 b)
{
	r->put_byte(r->ctx, b);
}

/*
 * Replies go out run-length encoded (GDB manual, "Overview"): a run of one
 * character is the character, '*', and the number of further repeats plus
 * 29. Counts of 6 and 7 would encode as '#' and '$' and are not used, nor
 * counts above 97 ('~'). A register set of unavailable x87/SSE registers
 * shrinks from ~1 KiB to a few bytes, which matters on a 115200 baud line.
 */
struct vt_rsp_sender {
	struct vt_rsp *r;
	u8 sum;
};

static void vt_rsp_emit(struct vt_rsp_sender *s, u8 b)
{
	s->sum += b;
	vt_rsp_send_byte(s->r, b);
}

static void vt_rsp_emit_run(struct vt_rsp_sender *s, u8 c, u32 len)
{
	while (len) {
		u32 more = len - 1;

		vt_rsp_emit(s, c);
		if (more < 3) {
			len--;
			continue;
		}
		if (more > 97)
			more = 97;
		if (more == 6 || more == 7)
			more = 5;
		vt_rsp_emit(s, '*');
		vt_rsp_emit(s, (u8)(more + 29));
		len -= more + 1;
	}
}

static void vt_rsp_send_reply(struct vt_rsp *r)
{
	static const char digits[] = "0123456789abcdef";
	struct vt_rsp_sender s = { r, 0 };
	u32 i = 0, run;

	vt_rsp_send_byte(r, '$');
	while (i < r->out_len) {
		for (run = 1; i + run < r->out_len && r->out[i + run] == r->out[i]; run++)
			;
		vt_rsp_emit_run(&s, r->out[i], run);
		i += run;
	}
	vt_rsp_send_byte(r, '#');
	vt_rsp_send_byte(r, digits[s.sum >> 4]);
	vt_rsp_send_byte(r, digits[s.sum & 15]);
}

static void vt_rsp_ack(struct vt_rsp *r, bool good)
{
	if (!r->no_ack)
		vt_rsp_send_byte(r, good ? '+' : '-');
}

/* One complete, checksummed packet, handled while the machine is stopped. */
static enum vt_rsp_action vt_rsp_dispatch(struct vt_rsp *r)
{
	struct vt_rsp_cursor c = { r->in + 1, r->in + r->in_len };
	enum vt_rsp_action action = VT_RSP_STAY;
	u8 cmd = r->in[0];

	vt_rsp_reply_reset(r);
	switch (cmd) {
	case '?':
		/* As gdbserver: the stop's CPU is the selected one again. */
		if (r->have_stop)
			r->g_cpu = (s32)r->last_stop.cpu;
		vt_rsp_stop_reply(r, r->have_stop ? &r->last_stop : NULL);
		break;
	case 'q':
	case 'Q':
		c.p = r->in;
		action = vt_rsp_query(r, &c);
		break;
	case 'g': case 'G': case 'p': case 'P':
		vt_rsp_regs(r, cmd, &c);
		break;
	case 'm': case 'M': case 'X':
		vt_rsp_mem(r, cmd, &c);
		break;
	case 'Z': case 'z':
		vt_rsp_points(r, cmd, &c);
		break;
	case 'H': case 'T':
		vt_rsp_threads(r, cmd, &c);
		break;
	case 'c': case 's': case 'v': case 'D': case 'k':
		action = vt_rsp_run(r, cmd, &c);
		break;
	default:
		break;	/* unsupported: the empty reply */
	}
	if (r->out_overflow)
		vt_rsp_error(r, 0x0c);	/* ENOMEM: never a truncated reply */
	/* 'k' and a resumed vCont/c/s without a reply owe nothing now. */
	if (cmd != 'k' && !(action == VT_RSP_RESUMED && cmd != 'D'))
		vt_rsp_send_reply(r);
	if (cmd == 'D' || cmd == 'k')
		r->no_ack = false;	/* the next debugger starts in ack mode */
	return action;
}

/*
 * qSupported is a debugger's first packet, and a new session starts in ack
 * mode (GDB manual, "Packet Acknowledgment"). On a serial line nothing else
 * tells the stub that the debugger changed: gdb's "disconnect" leaves
 * without D or k, and the next debugger would wait for an ack forever.
 */
static bool vt_rsp_opens_session(const struct vt_rsp *r)
{
	struct vt_rsp_cursor c = { r->in, r->in + r->in_len };

	return vt_rsp_prefix(&c, "qSupported");
}

static enum vt_rsp_action vt_rsp_packet_end(struct vt_rsp *r, u8 lo_digit, bool stopped)
{
	int hi = r->csum_hi, lo = vt_rsp_hex_digit(lo_digit);

	r->state = VT_RSP_IDLE;
	if (hi < 0 || lo < 0 || r->in_overflow || r->in_len == 0 ||
	    (u8)(hi << 4 | lo) != r->in_sum) {
		vt_rsp_ack(r, false);
		return VT_RSP_STAY;
	}
	if (vt_rsp_opens_session(r))
		r->no_ack = false;
	vt_rsp_ack(r, true);
	if (!stopped) {
		/* The caller could not stop the machine: ask again, do nothing. */
		return VT_RSP_BREAK;
	}
	return vt_rsp_dispatch(r);
}

static enum vt_rsp_action vt_rsp_idle_byte(struct vt_rsp *r, u8 byte, bool stopped)
{
	switch (byte) {
	case '$':
		r->state = VT_RSP_DATA;
		r->in_len = 0;
		r->in_sum = 0;
		r->in_overflow = false;
		/* gdb connecting to a running machine: its first packet stops it. */
		return stopped ? VT_RSP_STAY : VT_RSP_BREAK;
	case 0x03:
		if (stopped)
			return VT_RSP_STAY;
		r->stop_wanted = true;
		return VT_RSP_BREAK;
	case '-':
		if (r->out_len && !r->no_ack)
			vt_rsp_send_reply(r);
		return VT_RSP_STAY;
	default:
		return VT_RSP_STAY;	/* '+' and line noise */
	}
}

enum vt_rsp_action vt_rsp_feed(struct vt_rsp *r, u8 byte, bool machine_stopped)
{
	switch (r->state) {
	case VT_RSP_IDLE:
		return vt_rsp_idle_byte(r, byte, machine_stopped);
	case VT_RSP_DATA:
		if (byte == '$')
			return vt_rsp_idle_byte(r, byte, machine_stopped);
		if (byte == '#') {
			r->state = VT_RSP_CSUM_HI;
			return VT_RSP_STAY;
		}
		r->in_sum += byte;
		if (r->in_len < sizeof(r->in))
			r->in[r->in_len++] = byte;
		else
			r->in_overflow = true;
		return VT_RSP_STAY;
	case VT_RSP_CSUM_HI:
		r->csum_hi = (u8)vt_rsp_hex_digit(byte);
		if (vt_rsp_hex_digit(byte) < 0) {
			r->state = VT_RSP_IDLE;
			vt_rsp_ack(r, false);
			return VT_RSP_STAY;
		}
		r->state = VT_RSP_CSUM_LO;
		return VT_RSP_STAY;
	default:
		return vt_rsp_packet_end(r, byte, machine_stopped);
	}
}

void vt_rsp_report_stop(struct vt_rsp *r, const struct vt_dbg_stop *stop)
{
	r->last_stop = *stop;
	r->have_stop = true;
	r->g_cpu = (s32)stop->cpu;
	if (!r->stop_wanted)
		return;
	r->stop_wanted = false;
	vt_rsp_reply_reset(r);
	vt_rsp_stop_reply(r, stop);
	vt_rsp_send_reply(r);
}
