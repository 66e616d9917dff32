/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 instruction lengths and branch kinds, for the branch tracer: after
 * a monitor-trap-flag step it compares the new RIP with old RIP + len to
 * tell a fall-through from a branch; and the explicit memory operand's
 * address form, for a recorder that copies what a step touched. 64-bit
 * mode only; portable C with no state, so it runs in VMX root and in the
 * unit tests alike.
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

/* A register number in struct vt_insn_mem: RAX..R15 are 0..15 (SDM Vol. 2A Table 2-2's order). */
#define VT_INSN_REG_NONE	(-1)
#define VT_INSN_REG_RSP		4
#define VT_INSN_REG_RDI		7
#define VT_INSN_REG_RIP		16

/*
 * The explicit memory operand of a ModRM (SDM Vol. 2A 2.1.5, 2.2.1) or a
 * moffs (MOV A0-A3): its address is the segment's base (FS or GS, the only
 * ones with a base in 64-bit mode, 3.4.2.1; none otherwise) + base + index *
 * scale + disp, where RIP-relative means the address of the next
 * instruction, cut to 32 bits with the 67 prefix. What the instruction does
 * there (read, write, or nothing: LEA, NOP) is not decoded.
 */
struct vt_insn_mem {
	bool present;
	/*
	 * False when the address cannot be worked out from these fields: an
	 * EVEX disp8 (scaled by a size the opcode decides) or a VSIB index (a
	 * vector register).
	 */
	bool exact;
	bool addr32;		/* 67: the address is 32 bits wide */
	s8 base;		/* 0..15, VT_INSN_REG_RIP or VT_INSN_REG_NONE */
	s8 index;		/* 0..15 or VT_INSN_REG_NONE */
	u8 scale;		/* 1, 2, 4 or 8 */
	u8 seg;			/* 0, or the prefix: 0x64 (FS), 0x65 (GS) */
	s64 disp;		/* sign-extended; a moffs's 64-bit address */
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
	/* A string store (MOVS, STOS): one element to [RDI], an implicit operand mem does not give. */
	bool stores_rdi;
	struct vt_insn_mem mem;	/* its ModRM or moffs memory operand, if any */
};

/*
 * Decode the instruction at bytes[0..avail). 0, or -VT_EINVAL when it is
 * not a valid 64-bit-mode instruction or does not fit in avail (or exceeds
 * 15 bytes). Never reads past bytes[avail - 1]; *out is zeroed on failure.
 */
int vt_insn_decode(const u8 *bytes, u32 avail, struct vt_insn *out);

/*
 * The linear address mem names (present and exact) when the general
 * registers hold gpr[] (RAX..R15, RSP included), the next instruction
 * starts at next_rip and FS and GS have the bases fs_base and gs_base:
 * base + index * scale + disp, cut to 32 bits with 67 (SDM Vol. 1 3.3.7),
 * then the segment's base.
 */
u64 vt_insn_mem_address(const struct vt_insn_mem *mem, const u64 gpr[16], u64 next_rip, u64 fs_base, u64 gs_base);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_INSN_H */
