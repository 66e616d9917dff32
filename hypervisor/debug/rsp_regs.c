// SPDX-License-Identifier: GPL-2.0
/*
 * g/G/p/P: the registers of the Hg CPU in target.xml's order (rsp_xml.c).
 * Values go out little-endian, two hex digits per byte; the x87 and SSE
 * registers, which the stub does not capture, go out as "xx" (unavailable)
 * so gdb shows them as such instead of as zeros.
 */
#include "rsp_priv.h"

enum vt_reg_kind { VT_REG_FIELD, VT_REG_UNAVAILABLE };

struct vt_reg_desc {
	u8 bytes;
	u8 kind;
	u16 offset;	/* into struct vt_dbg_regs, for VT_REG_FIELD */
};

#define VT_R(field, size) { size, VT_REG_FIELD, __builtin_offsetof(struct vt_dbg_regs, field) }
#define VT_X(size) { size, VT_REG_UNAVAILABLE, 0 }

/* Must match rsp_xml.c register for register. */
static const struct vt_reg_desc vt_regs[] = {
	VT_R(gpr[0], 8), VT_R(gpr[1], 8), VT_R(gpr[2], 8), VT_R(gpr[3], 8),
	VT_R(gpr[4], 8), VT_R(gpr[5], 8), VT_R(gpr[6], 8), VT_R(gpr[7], 8),
	VT_R(gpr[8], 8), VT_R(gpr[9], 8), VT_R(gpr[10], 8), VT_R(gpr[11], 8),
	VT_R(gpr[12], 8), VT_R(gpr[13], 8), VT_R(gpr[14], 8), VT_R(gpr[15], 8),
	VT_R(rip, 8), VT_R(rflags, 4),
	VT_R(cs, 4), VT_R(ss, 4), VT_R(ds, 4), VT_R(es, 4), VT_R(fs, 4), VT_R(gs, 4),
	VT_X(10), VT_X(10), VT_X(10), VT_X(10), VT_X(10), VT_X(10), VT_X(10), VT_X(10),
	VT_X(4), VT_X(4), VT_X(4), VT_X(4), VT_X(4), VT_X(4), VT_X(4), VT_X(4),
	VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16),
	VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16), VT_X(16),
	VT_X(4),
	VT_R(fs_base, 8), VT_R(gs_base, 8), VT_R(k_gs_base, 8),
	VT_R(cr0, 8), VT_R(cr2, 8), VT_R(cr3, 8), VT_R(cr4, 8), VT_R(cr8, 8), VT_R(efer, 8),
};

#define VT_REG_COUNT	VT_ARRAY_SIZE(vt_regs)

static u64 *vt_reg_field(struct vt_dbg_regs *regs, u32 n)
{
	return (u64 *)((u8 *)regs + vt_regs[n].offset);
}

static void vt_put_reg(struct vt_rsp *r, struct vt_dbg_regs *regs, u32 n)
{
	if (vt_regs[n].kind == VT_REG_UNAVAILABLE)
		vt_rsp_put_unavailable(r, vt_regs[n].bytes);
	else
		vt_rsp_put_le(r, *vt_reg_field(regs, n), vt_regs[n].bytes);
}

/* Parse one register's bytes; "xx" leaves the value as it was. */
static bool vt_take_reg(struct vt_rsp_cursor *c, struct vt_dbg_regs *regs, u32 n)
{
	u32 bytes = vt_regs[n].bytes, i;
	u64 v = 0;

	if ((u32)(c->end - c->p) < 2 * bytes)
		return false;
	if (c->p[0] == 'x') {
		c->p += 2 * bytes;
		return true;
	}
	for (i = 0; i < bytes; i++) {
		int hi = vt_rsp_hex_digit(c->p[2 * i]), lo = vt_rsp_hex_digit(c->p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		if (i < 8)
			v |= (u64)(hi << 4 | lo) << (8 * i);
	}
	c->p += 2 * bytes;
	if (vt_regs[n].kind == VT_REG_FIELD)
		*vt_reg_field(regs, n) = bytes < 8 ? v & ((1ull << (8 * bytes)) - 1) : v;
	return true;
}

void vt_rsp_regs(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c)
{
	struct vt_dbg_regs regs;
	s32 cpu = vt_rsp_general_cpu(r);
	u64 n = 0;
	u32 i;

	if (!vt_rsp_cpu_ok(r, cpu) || r->ops->read_regs(r->ctx, (u32)cpu, &regs)) {
		vt_rsp_error(r, 0x01);
		return;
	}
	if ((cmd == 'p' || cmd == 'P') &&
	    (!vt_rsp_parse_hex(c, &n) || n >= VT_REG_COUNT)) {
		vt_rsp_error(r, 0x16);
		return;
	}
	switch (cmd) {
	case 'g':
		for (i = 0; i < VT_REG_COUNT; i++)
			vt_put_reg(r, &regs, i);
		return;
	case 'p':
		vt_put_reg(r, &regs, (u32)n);
		return;
	case 'G':
		for (i = 0; i < VT_REG_COUNT && !vt_rsp_at_end(c); i++)
			if (!vt_take_reg(c, &regs, i))
				break;
		if (!vt_rsp_at_end(c))
			break;
		goto write;
	case 'P':
		if (!vt_rsp_expect(c, '=') || !vt_take_reg(c, &regs, (u32)n) || !vt_rsp_at_end(c))
			break;
		goto write;
	}
	vt_rsp_error(r, 0x16);
	return;
write:
	if (r->ops->write_regs(r->ctx, (u32)cpu, &regs))
		vt_rsp_error(r, 0x01);
	else
		vt_rsp_put(r, "OK");
}
