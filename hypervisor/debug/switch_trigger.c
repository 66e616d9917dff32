// SPDX-License-Identifier: GPL-2.0
/* The switch trigger's place in __switch_to (switch_trigger.h). */
#include "switch_trigger.h"
#include "insn.h"
#include "../core/os.h"

#define VT_PREFIX_GS		0x65
#define VT_OPCODE_MOV_RM_R	0x89	/* MOV r/m(16/32/64), r */
#define VT_REX_W		0x08

static s64 vt_disp32(const u8 *p)
{
	return (s32)((u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24);
}

static bool vt_is_legacy_prefix(u8 b)
{
	return b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
	       b == 0x26 || b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67;
}

bool vt_insn_gs_store(const u8 *b, u32 len, u64 ip, struct vt_gs_store *out)
{
	u32 i = 0;
	bool gs = false, other_size = false;
	u8 modrm, rex;

	for (; i < len && vt_is_legacy_prefix(b[i]); i++) {
		gs |= b[i] == VT_PREFIX_GS;
		other_size |= b[i] == 0x66 || b[i] == 0x67;
	}
	if (!gs || other_size || i + 2 > len || (b[i] & 0xf0) != 0x40 || !(b[i] & VT_REX_W) ||
	    b[i + 1] != VT_OPCODE_MOV_RM_R)
		return false;
	rex = b[i];
	i += 2;
	if (i >= len)
		return false;
	modrm = b[i++];
	if (modrm >> 6)
		return false;		/* mod 00 only: a bare disp32 has no base register */
	/* ModRM.reg, extended by REX.R (SDM 2A 2.2.1.2). */
	out->reg = ((modrm >> 3) & 7) | (rex & 4 ? 8 : 0);
	if ((modrm & 7) == 5 && i + 4 == len) {
		/* RIP-relative (SDM 2A 2.2.1.6): from the next instruction. */
		out->gs_offset = ip + len + (u64)vt_disp32(b + i);
		return true;
	}
	if ((modrm & 7) == 4 && i + 5 == len && (b[i] & 0x3f) == 0x25 && !(rex & 2)) {
		/*
		 * SIB, any scale, no index (100b, and REX.X clear: with it 100b
		 * is R12), no base (101b at mod 00): disp32 alone (SDM 2A 2.2.1.2).
		 */
		out->gs_offset = (u64)vt_disp32(b + i + 1);
		return true;
	}
	return false;
}

int vt_switch_trigger_find(const u8 *text, u32 size, u64 text_va, u64 gs_base, u64 current_ptr,
			   u64 *store)
{
	struct vt_gs_store st;
	struct vt_insn insn;
	u64 found = 0;
	u32 at = 0;

	while (at < size) {
		if (vt_insn_decode(text + at, size - at, &insn))
			return -VT_EINVAL;
		if (vt_insn_gs_store(text + at, insn.len, text_va + at, &st) &&
		    gs_base + st.gs_offset == current_ptr) {
			if (found)
				return -VT_EINVAL;
			found = text_va + at;
		}
		at += insn.len;
	}
	if (!found)
		return -VT_ENOENT;
	*store = found;
	return 0;
}
