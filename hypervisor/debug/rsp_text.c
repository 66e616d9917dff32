// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing packet bodies and building replies for the RSP engine. Every
 * read is bounded by the cursor's end and every write by the reply buffer;
 * a reply that would not fit is marked and later answered with an error
 * instead of being cut (a truncated register set would mislead gdb).
 */
#include "rsp_priv.h"

static const char vt_hex_digits[] = "0123456789abcdef";

int vt_rsp_hex_digit(u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool vt_rsp_parse_hex(struct vt_rsp_cursor *c, u64 *value)
{
	u64 v = 0;
	u32 digits = 0;
	int d;

	while (c->p < c->end && (d = vt_rsp_hex_digit(*c->p)) >= 0) {
		if (++digits > 16)
			return false;
		v = v << 4 | (u64)d;
		c->p++;
	}
	*value = v;
	return digits > 0;
}

bool vt_rsp_expect(struct vt_rsp_cursor *c, u8 ch)
{
	if (c->p >= c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

bool vt_rsp_prefix(struct vt_rsp_cursor *c, const char *s)
{
	const u8 *p = c->p;

	for (; *s; s++, p++)
		if (p >= c->end || *p != (u8)*s)
			return false;
	c->p = p;
	return true;
}

bool vt_rsp_at_end(const struct vt_rsp_cursor *c)
{
	return c->p >= c->end;
}

bool vt_rsp_unhex(struct vt_rsp_cursor *c, u8 *out, u32 max, u32 *len)
{
	u32 n = 0;

	while (c->p < c->end) {
		int hi, lo;

		if (c->end - c->p < 2 || n >= max)
			return false;
		hi = vt_rsp_hex_digit(c->p[0]);
		lo = vt_rsp_hex_digit(c->p[1]);
		if (hi < 0 || lo < 0)
			return false;
		out[n++] = (u8)(hi << 4 | lo);
		c->p += 2;
	}
	*len = n;
	return true;
}

bool vt_rsp_unhex_exact(struct vt_rsp_cursor *c, u8 *out, u32 n)
{
	struct vt_rsp_cursor field = { .p = c->p, .end = c->p + 2 * n };
	u32 len = 0;

	if (c->end - c->p < 2 * n || !vt_rsp_unhex(&field, out, n, &len) || len != n)
		return false;
	c->p = field.end;
	return true;
}

void vt_rsp_reply_reset(struct vt_rsp *r)
{
	r->out_len = 0;
	r->out_overflow = false;
}

void vt_rsp_put_raw(struct vt_rsp *r, const void *data, u32 len)
{
	if (len > sizeof(r->out) - r->out_len) {
		r->out_overflow = true;
		return;
	}
	vt_memcpy(r->out + r->out_len, data, len);
	r->out_len += len;
}

void vt_rsp_put(struct vt_rsp *r, const char *s)
{
	u32 len = 0;

	while (s[len])
		len++;
	vt_rsp_put_raw(r, s, len);
}

void vt_rsp_put_hex_bytes(struct vt_rsp *r, const void *data, u32 len)
{
	const u8 *b = data;
	u32 i;

	for (i = 0; i < len; i++) {
		u8 pair[2] = { vt_hex_digits[b[i] >> 4], vt_hex_digits[b[i] & 15] };

		vt_rsp_put_raw(r, pair, 2);
	}
}

void vt_rsp_put_hex(struct vt_rsp *r, u64 value)
{
	char digits[17];
	int i = 16;

	digits[16] = 0;
	do {
		digits[--i] = vt_hex_digits[value & 15];
		value >>= 4;
	} while (value);
	vt_rsp_put(r, &digits[i]);
}

void vt_rsp_put_le(struct vt_rsp *r, u64 value, u32 bytes)
{
	u8 b[8];
	u32 i;

	for (i = 0; i < bytes && i < 8; i++)
		b[i] = (u8)(value >> (8 * i));
	vt_rsp_put_hex_bytes(r, b, i);
}

void vt_rsp_put_unavailable(struct vt_rsp *r, u32 bytes)
{
	while (bytes--)
		vt_rsp_put(r, "xx");
}

void vt_rsp_error(struct vt_rsp *r, u32 code)
{
	u8 e[3] = { 'E', vt_hex_digits[(code >> 4) & 15], vt_hex_digits[code & 15] };

	vt_rsp_reply_reset(r);
	vt_rsp_put_raw(r, e, 3);
}

u32 vt_rsp_cpus(struct vt_rsp *r)
{
	u32 n = r->ops->cpu_count(r->ctx);

	return n < VT_RSP_MAX_CPUS ? n : VT_RSP_MAX_CPUS;
}

bool vt_rsp_cpu_ok(struct vt_rsp *r, s32 cpu)
{
	return cpu >= 0 && (u32)cpu < vt_rsp_cpus(r) && r->ops->cpu_online(r->ctx, (u32)cpu);
}

s32 vt_rsp_general_cpu(struct vt_rsp *r)
{
	return vt_rsp_cpu_ok(r, r->g_cpu) ? r->g_cpu : (s32)r->last_stop.cpu;
}

bool vt_rsp_parse_thread(struct vt_rsp_cursor *c, s32 *cpu)
{
	u64 tid;

	if (vt_rsp_prefix(c, "-1")) {
		*cpu = -1;
		return true;
	}
	if (vt_rsp_prefix(c, "p")) {	/* multiprocess form pPID.TID: one process */
		if (!vt_rsp_parse_hex(c, &tid) || !vt_rsp_expect(c, '.'))
			return false;
		if (vt_rsp_prefix(c, "-1")) {
			*cpu = -1;
			return true;
		}
	}
	if (!vt_rsp_parse_hex(c, &tid) || tid > VT_RSP_MAX_CPUS)
		return false;
	*cpu = tid ? (s32)tid - 1 : -1;
	return true;
}

/* Binary data in a reply: '#', '$', '}' and '*' go as '}' then the byte ^ 0x20. */
void vt_rsp_put_escaped(struct vt_rsp *r, const u8 *p, u32 len)
{
	u8 esc[2];
	u32 i;

	for (i = 0; i < len; i++) {
		if (p[i] == '#' || p[i] == '$' || p[i] == '}' || p[i] == '*') {
			esc[0] = '}';
			esc[1] = p[i] ^ 0x20;
			vt_rsp_put_raw(r, esc, 2);
		} else {
			vt_rsp_put_raw(r, p + i, 1);
		}
	}
}
