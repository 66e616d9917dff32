// SPDX-License-Identifier: GPL-2.0
/*
 * m/M/X (memory) and Z/z (breakpoints and watchpoints). Addresses are
 * guest-virtual, in the Hg CPU's address space. An address the target
 * cannot read answers E14 (EFAULT), as gdb expects for unmapped memory.
 */
#include "rsp_priv.h"
#include "../core/os.h"

#define VT_EFAULT_CODE	VT_EFAULT	/* E0e */
#define VT_EINVAL_CODE	VT_EINVAL	/* E16 */

static bool vt_parse_addr_len(struct vt_rsp_cursor *c, u64 *addr, u64 *len)
{
	return vt_rsp_parse_hex(c, addr) && vt_rsp_expect(c, ',') && vt_rsp_parse_hex(c, len);
}

static void vt_mem_read(struct vt_rsp *r, s32 cpu, u64 addr, u64 len)
{
	u32 max = (sizeof(r->out) - 1) / 2;
	int n;

	if (len > max)
		len = max;	/* gdb asks again for the rest */
	if (len == 0)
		return;
	n = r->ops->read_mem(r->ctx, (u32)cpu, addr, r->scratch, (u32)len);
	if (n <= 0) {
		vt_rsp_error(r, VT_EFAULT_CODE);
		return;
	}
	vt_rsp_put_hex_bytes(r, r->scratch, (u32)n);
}

/* X data: 0x7d escapes the next byte, XORed with 0x20 ('#', '$', '}', '*'). */
static bool vt_unescape(struct vt_rsp_cursor *c, u8 *out, u32 max, u32 *len)
{
	u32 n = 0;

	while (c->p < c->end) {
		u8 b = *c->p++;

		if (b == 0x7d) {
			if (c->p >= c->end)
				return false;
			b = *c->p++ ^ 0x20;
		}
		if (n >= max)
			return false;
		out[n++] = b;
	}
	*len = n;
	return true;
}

static void vt_mem_write(struct vt_rsp *r, u8 cmd, s32 cpu, u64 addr, u64 len,
			 struct vt_rsp_cursor *c)
{
	u32 got = 0;
	bool ok = cmd == 'M' ? vt_rsp_unhex(c, r->scratch, sizeof(r->scratch), &got) :
			       vt_unescape(c, r->scratch, sizeof(r->scratch), &got);
	int n;

	if (!ok || got != len) {
		vt_rsp_error(r, VT_EINVAL_CODE);
		return;
	}
	if (len) {
		n = r->ops->write_mem(r->ctx, (u32)cpu, addr, r->scratch, (u32)len);
		if (n != (int)len) {
			vt_rsp_error(r, VT_EFAULT_CODE);
			return;
		}
	}
	vt_rsp_put(r, "OK");
}

void vt_rsp_mem(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c)
{
	s32 cpu = vt_rsp_general_cpu(r);
	u64 addr, len;

	if (!vt_parse_addr_len(c, &addr, &len) || (cmd != 'm' && !vt_rsp_expect(c, ':')) ||
	    (cmd == 'm' && !vt_rsp_at_end(c))) {
		vt_rsp_error(r, VT_EINVAL_CODE);
		return;
	}
	if (!vt_rsp_cpu_ok(r, cpu)) {
		vt_rsp_error(r, 0x01);
		return;
	}
	if (cmd == 'm')
		vt_mem_read(r, cpu, addr, len);
	else
		vt_mem_write(r, cmd, cpu, addr, len, c);
}

/* Z/z TYPE,ADDR,KIND: KIND is the length for watchpoints (GDB manual "Z0"). */
void vt_rsp_points(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c)
{
	s32 cpu = vt_rsp_general_cpu(r);
	u64 type, addr, kind;
	int ret;

	if (!vt_rsp_parse_hex(c, &type) || type > VT_POINT_ACCESS || !vt_rsp_expect(c, ',') ||
	    !vt_parse_addr_len(c, &addr, &kind) || kind == 0) {
		vt_rsp_error(r, VT_EINVAL_CODE);
		return;
	}
	/* Conditions and commands (";X..", ";cmds") are the console's job. */
	if (!vt_rsp_cpu_ok(r, cpu)) {
		vt_rsp_error(r, 0x01);
		return;
	}
	if (cmd == 'Z')
		ret = r->ops->insert_point(r->ctx, (u32)cpu, (enum vt_dbg_point)type, addr, kind);
	else
		ret = r->ops->remove_point(r->ctx, (u32)cpu, (enum vt_dbg_point)type, addr, kind);
	if (ret == -VT_EOPNOTSUPP)
		return;		/* empty: this type is not supported */
	if (ret == -VT_EFAULT)
		vt_rsp_error(r, VT_EFAULT_CODE);
	else if (ret)
		vt_rsp_error(r, (u32)(-ret) & 0xff);
	else
		vt_rsp_put(r, "OK");
}
