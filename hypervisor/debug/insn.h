/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 instruction lengths and branch kinds, for the branch tracer: after
 * a monitor-trap-flag step it compares the new RIP with old RIP + len to
 * tell a fall-through from a branch. 64-bit mode only; portable C with no
 * state, so it runs in VMX root and in the unit tests alike.
 */
#ifndef VT_DEBUG_INSN_H
#define VT_DEBUG_INSN_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vt_insn_kind {
	VT_INSN_OTHER,		/* falls through */
	VT_INSN_JCC,		/* conditional: Jcc rel8/rel32, LOOP*, JRCXZ, XBEGIN */
	VT_INSN_JMP,		/* direct near jmp rel8/rel32 */
	VT_INSN_JMP_INDIRECT,	/* FF /4 */
	VT_INSN_CALL,		/* E8 rel32 */
	VT_INSN_CALL_INDIRECT,	/* FF /2 */
	VT_INSN_RET,		/* C3, C2 iw */
	/*
	 * Any other deliberate non-sequential RIP: far JMP/CALL/RET, IRET,
	 * SYSCALL/SYSRET, SYSENTER/SYSEXIT, INT n/INT3/INT1, UD0/UD1/UD2,
	 * VMCALL/VMLAUNCH/VMRESUME/VMRUN/VMMCALL, UIRET, XABORT.
	 */
	VT_INSN_FAR,
};

struct vt_insn {
	u8 len;			/* 1..15 */
	enum vt_insn_kind kind;
	s64 rel;		/* direct JCC/JMP/CALL: target = rip + len + rel; else 0 */
	/* INT n, INT3, INT1, UD0/UD1/UD2 (all FAR): its own exception, through the IDT */
	bool raises;
	/*
	 * Unsafe inside a branch step (btf_block.h): it reads or loads
	 * RFLAGS.TF (PUSHF, POPF, IRET, SYSCALL, SYSRET, SYSENTER, SYSEXIT),
	 * delivers an event the exception bitmap cannot see (INT n), halts
	 * (HLT), or holds off the next debug trap (MOV to SS, SDM 3A 6.8.3).
	 */
	bool tf_hazard;
};

/*
 * Decode the instruction at bytes[0..avail). 0, or -VT_EINVAL when it is
 * not a valid 64-bit-mode instruction or does not fit in avail (or exceeds
 * 15 bytes). Never reads past bytes[avail - 1]; *out is zeroed on failure.
 */
int vt_insn_decode(const u8 *bytes, u32 avail, struct vt_insn *out);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_INSN_H */
