// SPDX-License-Identifier: GPL-2.0
/*
 * x86-64 instruction lengths and branch kinds (insn.h).
 *
 * An instruction is legacy prefixes, a REX prefix, an opcode of one to three
 * bytes (or a VEX/EVEX prefix and one opcode byte), then ModRM, SIB,
 * displacement and immediate (SDM Vol. 2A 2.1, Figure 2-1; 2.2.1). The
 * opcode alone decides whether ModRM and an immediate follow; the 66, 67
 * and REX.W prefixes change a few sizes. So one character per opcode, laid
 * out like the opcode maps of SDM Vol. 2 Appendix A, plus a handful of
 * exceptions, each cited where it is handled, is the whole decoder.
 *
 * Opcodes the SDM marks invalid in 64-bit mode give -VT_EINVAL. Undefined
 * opcodes inside a map decode with the map's usual layout: the CPU raises
 * #UD on them, and a step that ends in an exception handler is no
 * fall-through whatever length we report. Wrong lengths for valid
 * instructions are the failure that matters: tests/hypervisor/insn_test.cpp
 * checks every length against Zydis over the kernel's text.
 */
#include "insn.h"
#include "../core/os.h"

/* SDM Vol. 2A 2.3.11: longer instructions raise #GP. */
#define VT_INSN_LEN_MAX	15
#define VT_REX_W	0x08
#define VT_MODRM_NONE	(-1)
/* EVEX.mmm (P0 bits 2:0): 0F, 0F 38, 0F 3A, and the AVX512-FP16 maps 5, 6. */
#define VT_EVEX_MAPS	(VT_BIT(1) | VT_BIT(2) | VT_BIT(3) | VT_BIT(5) | VT_BIT(6))

/*
 * Operand layout by opcode, one string per row of the opcode map (SDM Vol. 2
 * Appendix A: Table A-2 one-byte, Table A-3 two-byte 0F xx). "Iz" is imm16
 * with 66 and imm32 otherwise, "Iv" the same but imm64 with REX.W (A.2.2).
 *
 *   .  opcode only                  b  imm8
 *   m  ModRM                        w  imm16
 *   c  ModRM, mod ignored           e  imm16, imm8 (ENTER)
 *   i  ModRM, imm8                  Z  Iz
 *   z  ModRM, Iz                    v  Iv (MOV reg, imm)
 *   t  ModRM, imm8 for /0 /1 (F6)   o  moffs: 8 bytes, 4 with 67
 *   T  ModRM, Iz for /0 /1 (F7)     j  rel8
 *   q  ModRM, 2 x imm8 with 66/F2   J  rel32
 *   x  invalid in 64-bit mode ("i64" in Table A-2) or reserved
 *   p  legacy prefix, r  REX, E  escape to another map (0F, 0F 38, 0F 3A,
 *      VEX, EVEX): these never reach the operand decoder
 */
static const char vt_map_1byte[] =
	/* 0123456789abcdef */
	"mmmmbZxxmmmmbZxE"	/* 0x: ADD OR; PUSH/POP ES, CS i64 */
	"mmmmbZxxmmmmbZxx"	/* 1x: ADC SBB; PUSH/POP SS, DS i64 */
	"mmmmbZpxmmmmbZpx"	/* 2x: AND SUB; DAA DAS i64 */
	"mmmmbZpxmmmmbZpx"	/* 3x: XOR CMP; AAA AAS i64 */
	"rrrrrrrrrrrrrrrr"	/* 4x: REX */
	"................"	/* 5x: PUSH/POP reg */
	"xxEmppppZzbi...."	/* 6x: PUSHA POPA i64, 62 EVEX, MOVSXD */
	"jjjjjjjjjjjjjjjj"	/* 7x: Jcc rel8 */
	"izximmmmmmmmmmmm"	/* 8x: group 1 (82 i64), TEST XCHG MOV LEA, 8F group 1A */
	"..........x....."	/* 9x: XCHG, CBW CWD, far CALL i64, FWAIT, PUSHF POPF */
	"oooo....bZ......"	/* Ax: MOV moffs, string ops, TEST imm */
	"bbbbbbbbvvvvvvvv"	/* Bx: MOV reg, imm */
	"iiw.EEize.w..bx."	/* Cx: shifts, RET, VEX, MOV imm, ENTER, far RET, INT, INTO i64 */
	"mmmmxxx.mmmmmmmm"	/* Dx: shifts, AAM AAD SALC i64, XLAT, x87 */
	"jjjjbbbbJJxj...."	/* Ex: LOOPcc JrCXZ, IN OUT, CALL JMP, far JMP i64 */
	"p.pp..tT......mm";	/* Fx: LOCK INT1 REP HLT CMC, group 3, flags, groups 4 5 */

static const char vt_map_0f[] =
	/* 0123456789abcdef */
	"mmmmx.....x.xm.i"	/* 0x: groups 6 7, SYSCALL..UD2, PREFETCH, FEMMS, 3DNow! */
	"mmmmmmmmmmmmmmmm"	/* 1x: SSE moves, hint NOPs, MPX, ENDBR */
	"ccccxxxxmmmmmmmm"	/* 2x: MOV CR/DR (TR i64), SSE */
	"......x.ExExxxxx"	/* 3x: WRMSR..SYSEXIT, GETSEC, three-byte escapes */
	"mmmmmmmmmmmmmmmm"	/* 4x: CMOVcc */
	"mmmmmmmmmmmmmmmm"	/* 5x: SSE */
	"mmmmmmmmmmmmmmmm"	/* 6x: MMX/SSE */
	"iiiimmm.qmxxmmmm"	/* 7x: PSHUF, groups 12-14, EMMS, VMREAD VMWRITE */
	"JJJJJJJJJJJJJJJJ"	/* 8x: Jcc rel32 */
	"mmmmmmmmmmmmmmmm"	/* 9x: SETcc */
	"...mimmm...mimmm"	/* Ax: PUSH/POP FS GS, CPUID, BT, SHLD, VIA PadLock, RSM, SHRD, group 15 */
	"mmmmmmmmmmimmmmm"	/* Bx: CMPXCHG..MOVSX, UD1, group 8 */
	"mmimiiim........"	/* Cx: XADD, CMPPS, PINSRW.., group 9, BSWAP */
	"mmmmmmmmmmmmmmmm"	/* Dx: SSE */
	"mmmmmmmmmmmmmmmm"	/* Ex: SSE */
	"mmmmmmmmmmmmmmmm";	/* Fx: SSE, UD0 */

VT_STATIC_ASSERT(sizeof(vt_map_1byte) == 257, "one entry per opcode");
VT_STATIC_ASSERT(sizeof(vt_map_0f) == 257, "one entry per opcode");

struct vt_insn_cur {
	const u8 *bytes;
	u32 limit;		/* min(avail, 15): nothing at or past it is read */
	u32 pos;
	int modrm;		/* VT_MODRM_NONE until read */
	bool opsize;		/* 66 */
	bool adsize;		/* 67 */
	bool simd_prefix;	/* 66, F0, F2 or F3: #UD before VEX/EVEX */
	u8 rep;			/* the last F2/F3, 0 if none */
	u8 rex;			/* the REX right before the opcode, 0 if none */
	u8 seg;			/* the last FS or GS override prefix, 0 if none (SDM Vol. 1 3.4.2.1) */
	u8 ext_x, ext_b;	/* 8 when REX.X / REX.B (or VEX's, EVEX's) extends index / base */
	bool evex;		/* EVEX: a disp8 is scaled by a size the opcode decides */
	struct vt_insn_mem mem;
};

static int vt_insn_byte(struct vt_insn_cur *c)
{
	if (c->pos >= c->limit)
		return -VT_EINVAL;
	return c->bytes[c->pos++];
}

static int vt_insn_skip(struct vt_insn_cur *c, u32 n)
{
	if (n > c->limit - c->pos)
		return -VT_EINVAL;
	c->pos += n;
	return 0;
}

/*
 * Legacy prefixes come in any order and number (2.1.1). A REX prefix counts
 * only right before the opcode: one followed by a legacy prefix is ignored
 * (2.2.1), and of several in a row the last one is used.
 */
static int vt_insn_prefixes(struct vt_insn_cur *c)
{
	int b;

	while ((b = vt_insn_byte(c)) >= 0) {
		if (vt_map_1byte[b] == 'r') {
			c->rex = b;
			continue;
		}
		if (vt_map_1byte[b] != 'p')
			break;
		c->rex = 0;
		if (b == 0x66)
			c->opsize = true;
		else if (b == 0x67)
			c->adsize = true;
		else if (b == 0xf2 || b == 0xf3)
			c->rep = b;
		else if (b == 0x64 || b == 0x65)	/* CS, DS, ES and SS overrides count for nothing in 64-bit mode */
			c->seg = b;
		if (b == 0x66 || b == 0xf0 || b == 0xf2 || b == 0xf3)
			c->simd_prefix = true;
	}
	return b;
}

/* The size (1..8) bytes just read, little-endian. */
static u64 vt_insn_le(const struct vt_insn_cur *c, u32 size)
{
	const u8 *end = c->bytes + c->pos;
	u64 v = 0;
	u32 i;

	for (i = 1; i <= size; i++)
		v = v << 8 | end[-(int)i];
	return v;
}

/* The same, sign-extended from size (1..4) bytes. */
static s64 vt_insn_le_signed(const struct vt_insn_cur *c, u32 size)
{
	u64 sign = 1ull << (8 * size - 1);

	return (s64)(vt_insn_le(c, size) ^ sign) - (s64)sign;
}

/* A memory operand begins: no base or index yet, the prefixes' segment and address size. */
static void vt_insn_mem_start(struct vt_insn_cur *c)
{
	c->mem = (struct vt_insn_mem){
		.present = true, .exact = true, .addr32 = c->adsize, .base = VT_INSN_REG_NONE,
		.index = VT_INSN_REG_NONE, .scale = 1, .seg = c->seg == 0x64 || c->seg == 0x65 ? c->seg : 0,
	};
}

/*
 * ModRM, SIB and displacement (Tables 2-2 and 2-3). The 67 prefix selects
 * 32-bit addressing, which in 64-bit mode has the same layout (2.2.1.3);
 * REX.B does not change it either: rm 101 with mod 00 is RIP + disp32
 * (2.2.1.6), SIB base 101 with mod 00 is disp32 with no base, r13 included.
 */
static int vt_insn_modrm(struct vt_insn_cur *c)
{
	int modrm = vt_insn_byte(c), mod, sib, ret;
	struct vt_insn_mem *m = &c->mem;
	u32 disp;

	if (modrm < 0)
		return modrm;
	mod = modrm >> 6;
	if (mod == 3)
		return modrm;
	vt_insn_mem_start(c);
	m->base = (s8)((modrm & 7) | c->ext_b);
	disp = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	if ((modrm & 7) == 4) {
		sib = vt_insn_byte(c);
		if (sib < 0)
			return sib;
		/* Index 100 without REX.X is "none", and the scale then counts for nothing (Table 2-3); with it, R12. */
		m->index = ((sib >> 3) & 7) == 4 && !c->ext_x ? VT_INSN_REG_NONE : (s8)(((sib >> 3) & 7) | c->ext_x);
		m->scale = m->index == VT_INSN_REG_NONE ? 1 : (u8)(1 << (sib >> 6));
		m->base = (s8)((sib & 7) | c->ext_b);
		if (mod == 0 && (sib & 7) == 5) {
			disp = 4;
			m->base = VT_INSN_REG_NONE;
		}
	} else if (mod == 0 && (modrm & 7) == 5) {
		disp = 4;
		m->base = VT_INSN_REG_RIP;
	}
	ret = vt_insn_skip(c, disp);
	if (ret < 0)
		return ret;
	m->disp = disp ? vt_insn_le_signed(c, disp) : 0;
	m->exact = !(c->evex && disp == 1);	/* EVEX disp8*N (SDM Vol. 2A 2.7.5) */
	return modrm;
}

/* REX.W (64-bit operands) beats 66, and then Iz stays imm32 (2.2.1.5). */
static u32 vt_insn_iz(const struct vt_insn_cur *c)
{
	return c->opsize && !(c->rex & VT_REX_W) ? 2 : 4;
}

/* Only MOV reg, imm takes a 64-bit immediate (2.2.1.5). */
static u32 vt_insn_iv(const struct vt_insn_cur *c)
{
	if (c->rex & VT_REX_W)
		return 8;
	return c->opsize ? 2 : 4;
}

/*
 * 0F 78 is VMREAD without a prefix; AMD's SSE4a gives it two imm8 after
 * ModRM as 66 0F 78 (EXTRQ) and F2 0F 78 (INSERTQ) (AMD APM Vol. 4). As
 * for any SSE opcode the last F2/F3 is the mandatory prefix, else 66.
 */
static u32 vt_insn_sse4a_imm(const struct vt_insn_cur *c)
{
	return c->rep == 0xf2 || (!c->rep && c->opsize) ? 2 : 0;
}

static u32 vt_insn_imm_size(const struct vt_insn_cur *c, char shape)
{
	/* Group 3 (Table A-6): only /0 and /1, TEST, have an immediate. */
	bool test = ((c->modrm >> 3) & 7) < 2;

	switch (shape) {
	case 'i':
	case 'b':
	case 'j':
		return 1;
	case 'w':
		return 2;
	case 'e':
		return 3;
	case 'J':
		return 4;
	case 'z':
	case 'Z':
		return vt_insn_iz(c);
	case 'v':
		return vt_insn_iv(c);
	case 'o':
		return c->adsize ? 4 : 8;
	case 't':
		return test ? 1 : 0;
	case 'T':
		return test ? vt_insn_iz(c) : 0;
	case 'q':
		return vt_insn_sse4a_imm(c);
	}
	return 0;
}

static bool vt_insn_has_modrm(char shape)
{
	switch (shape) {
	case 'm':
	case 'c':
	case 'i':
	case 'z':
	case 't':
	case 'T':
	case 'q':
		return true;
	}
	return false;
}

/* The ModRM, SIB, displacement and immediate a table entry calls for. */
static int vt_insn_operands(struct vt_insn_cur *c, char shape)
{
	int modrm, ret;

	if (shape == 'x')
		return -VT_EINVAL;
	if (vt_insn_has_modrm(shape)) {
		/* MOV CR/DR: "the 2 bits in the mod field are ignored" (SDM Vol. 2B MOV). */
		modrm = shape == 'c' ? vt_insn_byte(c) : vt_insn_modrm(c);
		if (modrm < 0)
			return modrm;
		c->modrm = modrm;
	}
	ret = vt_insn_skip(c, vt_insn_imm_size(c, shape));
	if (ret < 0 || shape != 'o')
		return ret;
	/* MOV A0-A3: a 64-bit address (32 with 67) in place of ModRM (SDM Vol. 2B MOV, "moffs"). */
	vt_insn_mem_start(c);
	c->mem.disp = (s64)vt_insn_le(c, c->adsize ? 4 : 8);
	return 0;
}

/*
 * A direct branch's displacement: the instruction's last size bytes,
 * little-endian, sign-extended by (v ^ sign) - sign.
 */
static s64 vt_insn_rel(const struct vt_insn_cur *c, u32 size)
{
	return vt_insn_le_signed(c, size);
}

/*
 * Group 5 (Table A-6): /2 and /4 are near indirect CALL and JMP; /3 and /5
 * far ones through a memory pointer, invalid with a register; /7 reserved.
 */
static int vt_insn_group5(const struct vt_insn_cur *c, struct vt_insn *out)
{
	static const enum vt_insn_kind kinds[8] = {
		[2] = VT_INSN_CALL_INDIRECT, [3] = VT_INSN_FAR,
		[4] = VT_INSN_JMP_INDIRECT, [5] = VT_INSN_FAR,
	};
	int reg = (c->modrm >> 3) & 7;

	if (reg == 7 || (kinds[reg] == VT_INSN_FAR && (c->modrm >> 6) == 3))
		return -VT_EINVAL;
	out->kind = kinds[reg];
	return 0;
}

/*
 * Near direct branches: rel8 or rel32. Intel ignores 66 on them in 64-bit
 * mode (SDM Vol. 2A Jcc, JMP, CALL: "operand size fixed at 64 bits"), so
 * E8, E9 and 0F 8x always carry rel32; AMD would take rel16.
 */
static void vt_insn_direct(const struct vt_insn_cur *c, u8 op, char shape, struct vt_insn *out)
{
	out->rel = vt_insn_rel(c, shape == 'j' ? 1 : 4);
	if (op == 0xe8)
		out->kind = VT_INSN_CALL;
	else if (op == 0xe9 || op == 0xeb)
		out->kind = VT_INSN_JMP;
	else
		out->kind = VT_INSN_JCC;	/* 7x, 0F 8x, LOOPcc, JrCXZ */
}

/* One-byte opcodes a multi-instruction TF step must not run (insn.h). */
static bool vt_insn_tf_hazard_1byte(const struct vt_insn_cur *c, u8 op)
{
	switch (op) {
	case 0x9c:	/* PUSHF */
	case 0x9d:	/* POPF */
	case 0xcd:	/* INT n */
	case 0xcf:	/* IRET */
	case 0xf4:	/* HLT */
		return true;
	case 0x8e:	/* MOV Sreg, r/m: /2 is SS */
		return ((c->modrm >> 3) & 7) == 2;
	}
	return false;
}

static int vt_insn_kind_1byte(const struct vt_insn_cur *c, u8 op, struct vt_insn *out)
{
	out->tf_hazard = vt_insn_tf_hazard_1byte(c, op);
	out->stores_rdi = op == 0xa4 || op == 0xa5 || op == 0xaa || op == 0xab;	/* MOVS, STOS (SDM Vol. 2B) */
	switch (op) {
	case 0x8f:
		/* Group 1A: only /0 (POP) exists; AMD's XOP takes the rest. */
		return (c->modrm >> 3) & 7 ? -VT_EINVAL : 0;
	case 0xc2:
	case 0xc3:
		out->kind = VT_INSN_RET;
		break;
	case 0xc6:
		/* XABORT (C6 F8 ib) resumes at the XBEGIN fallback. */
		if (c->modrm == 0xf8)
			out->kind = VT_INSN_FAR;
		break;
	case 0xc7:
		/* XBEGIN (C7 F8 rel16/32) may go on at its fallback address. */
		if (c->modrm == 0xf8) {
			out->kind = VT_INSN_JCC;
			out->rel = vt_insn_rel(c, vt_insn_iz(c));
		}
		break;
	case 0xcc:	/* INT3, INT n, INT1 */
	case 0xcd:
	case 0xf1:
		out->raises = true;
		out->kind = VT_INSN_FAR;
		break;
	case 0xca:	/* far RET, IRET */
	case 0xcb:
	case 0xcf:
		out->kind = VT_INSN_FAR;
		break;
	case 0xff:
		return vt_insn_group5(c, out);
	}
	return 0;
}

static int vt_insn_map_1byte(struct vt_insn_cur *c, u8 op, struct vt_insn *out)
{
	char shape = vt_map_1byte[op];
	int ret = vt_insn_operands(c, shape);

	if (ret < 0)
		return ret;
	if (op == 0x8d)
		c->mem.seg = 0;	/* LEA: the offset alone, no segment (SDM Vol. 2A LEA) */
	if (shape == 'j' || shape == 'J') {
		vt_insn_direct(c, op, shape, out);
		return 0;
	}
	return vt_insn_kind_1byte(c, op, out);
}

/*
 * Group 7 register forms (Table A-6, 0F 01 with mod 11) that leave for the
 * VMM or return from a user interrupt (F3 0F 01 EC, UIRET). The others, VMXOFF,
 * SWAPGS, MWAIT, RDTSCP and so on, fall through.
 */
static enum vt_insn_kind vt_insn_kind_0f01(const struct vt_insn_cur *c)
{
	switch (c->modrm) {
	case 0xc1:	/* VMCALL */
	case 0xc2:	/* VMLAUNCH */
	case 0xc3:	/* VMRESUME */
	case 0xd8:	/* VMRUN (AMD) */
	case 0xd9:	/* VMMCALL (AMD) */
		return VT_INSN_FAR;
	case 0xec:
		return c->rep == 0xf3 ? VT_INSN_FAR : VT_INSN_OTHER;
	}
	return VT_INSN_OTHER;
}

static void vt_insn_kind_0f(const struct vt_insn_cur *c, u8 op, struct vt_insn *out)
{
	switch (op) {
	case 0x01:
		out->kind = vt_insn_kind_0f01(c);
		break;
	case 0x0b:	/* UD2, UD1, UD0: raise #UD on purpose */
	case 0xb9:
	case 0xff:
		out->raises = true;
		out->kind = VT_INSN_FAR;
		break;
	case 0x05:	/* SYSCALL */
	case 0x07:	/* SYSRET */
	case 0x34:	/* SYSENTER */
	case 0x35:	/* SYSEXIT */
		out->kind = VT_INSN_FAR;
		out->tf_hazard = true;	/* each loads or saves RFLAGS */
		break;
	}
}

/*
 * 0F 38 xx always has ModRM and 0F 3A xx ModRM and imm8 (Tables );
 * neither map holds a branch. 0F 0F is 3DNow!: ModRM, then the imm8 that
 * names the operation (AMD APM Vol. 3), which the 'i' entry covers.
 */
static int vt_insn_map_0f(struct vt_insn_cur *c, struct vt_insn *out)
{
	int op = vt_insn_byte(c), ret;
	char shape;

	if (op < 0)
		return op;
	if (op == 0x38 || op == 0x3a) {
		shape = op == 0x3a ? 'i' : 'm';
		op = vt_insn_byte(c);
		return op < 0 ? op : vt_insn_operands(c, shape);
	}
	shape = vt_map_0f[op];
	ret = vt_insn_operands(c, shape);
	if (ret < 0)
		return ret;
	if (op == 0x1a || op == 0x1b)
		c->mem.addr32 = false;	/* MPX's BND* ignore 67 in 64-bit mode (SDM Vol. 1, Intel MPX) */
	if (shape == 'J')
		vt_insn_direct(c, op, shape, out);
	else
		vt_insn_kind_0f(c, op, out);
	return 0;
}

/*
 * The gathers, scatters and their prefetches (0F 38 90-93, A0-A3, C6, C7):
 * a VSIB memory operand, whose index is a vector register (SDM Vol. 2A 2.3.12).
 */
static bool vt_insn_vsib(int map, int op)
{
	return map == 2 && ((op >= 0x90 && op <= 0x93) || (op >= 0xa0 && op <= 0xa3) || op == 0xc6 || op == 0xc7);
}

/*
 * After a VEX or EVEX prefix: opcode, ModRM (all but VZEROUPPER/VZEROALL,
 * VEX.0F 77), and an imm8 in map 3 (0F 3A) always, in map 1 (0F) where
 * the legacy 0F opcode has one, in maps 2, 5 and 6 never (SDM Vol. 2A
 * 2.3.5 and "Intel AVX-512 Encoding"; maps 5 and 6 hold AVX512-FP16 only).
 * None of it branches.
 */
static int vt_insn_vex_opcode(struct vt_insn_cur *c, int map, bool evex)
{
	int op = vt_insn_byte(c), ret;
	char shape = 'm';

	if (op < 0)
		return op;
	if (map == 1 && op == 0x77 && !evex)
		return 0;
	if (map == 3 || (map == 1 && vt_map_0f[op] == 'i'))
		shape = 'i';
	ret = vt_insn_operands(c, shape);
	if (ret >= 0 && vt_insn_vsib(map, op))
		c->mem.exact = false;
	return ret;
}

/*
 * C4, C5 and 62 are always VEX and EVEX in 64-bit mode, where LES, LDS and
 * BOUND do not exist (SDM Vol. 2A 2.3.5 and "Instruction Format and EVEX").
 * A LOCK, 66, F2, F3 or REX prefix right before them is #UD (2.3.2-2.3.4);
 * a REX followed by a legacy prefix does not count, being ignored anyway.
 * VEX.mmmmm names maps 1-3 only; in EVEX P0 bit 3 must be 0 and P1 bit 2
 * must be 1, or the CPU raises #UD.
 */
static int vt_insn_vex(struct vt_insn_cur *c, u8 esc)
{
	u32 n = esc == 0xc5 ? 1 : esc == 0xc4 ? 2 : 3, i;
	int p[3], map;

	if (c->simd_prefix || c->rex)
		return -VT_EINVAL;
	for (i = 0; i < n; i++) {
		p[i] = vt_insn_byte(c);
		if (p[i] < 0)
			return p[i];
	}
	if (esc == 0xc5)
		return vt_insn_vex_opcode(c, 1, false);	/* no X or B: index and base as ModRM/SIB say */
	/* The first payload byte holds R, X and B inverted, bits 7-5 (2.3.5.3, "EVEX P0"). */
	c->ext_x = p[0] & 0x40 ? 0 : 8;
	c->ext_b = p[0] & 0x20 ? 0 : 8;
	if (esc == 0xc4) {
		map = p[0] & 0x1f;
		if (map < 1 || map > 3)
			return -VT_EINVAL;
		return vt_insn_vex_opcode(c, map, false);
	}
	map = p[0] & 7;
	if ((p[0] & 0x08) || !(p[1] & 0x04) || !(VT_EVEX_MAPS & VT_BIT(map)))
		return -VT_EINVAL;
	c->evex = true;
	return vt_insn_vex_opcode(c, map, true);
}

int vt_insn_decode(const u8 *bytes, u32 avail, struct vt_insn *out)
{
	struct vt_insn_cur c = {
		.bytes = bytes,
		.limit = avail < VT_INSN_LEN_MAX ? avail : VT_INSN_LEN_MAX,
		.modrm = VT_MODRM_NONE,
	};
	struct vt_insn insn = { .kind = VT_INSN_OTHER };
	int op = vt_insn_prefixes(&c), ret = op;

	c.ext_x = c.rex & 0x02 ? 8 : 0;	/* REX.X, REX.B (2.2.1.2) */
	c.ext_b = c.rex & 0x01 ? 8 : 0;
	if (op == 0x0f)
		ret = vt_insn_map_0f(&c, &insn);
	else if (op == 0xc4 || op == 0xc5 || op == 0x62)
		ret = vt_insn_vex(&c, op);
	else if (op >= 0)
		ret = vt_insn_map_1byte(&c, op, &insn);
	if (ret < 0) {
		*out = (struct vt_insn){ .kind = VT_INSN_OTHER };
		return ret;
	}
	insn.len = c.pos;
	insn.mem = c.mem;
	*out = insn;
	return 0;
}

u64 vt_insn_mem_address(const struct vt_insn_mem *mem, const u64 gpr[16], u64 next_rip, u64 fs_base, u64 gs_base)
{
	u64 ea = (u64)mem->disp;

	if (mem->base == VT_INSN_REG_RIP)
		ea += next_rip;
	else if (mem->base >= 0)
		ea += gpr[mem->base & 15];
	if (mem->index >= 0)
		ea += gpr[mem->index & 15] * mem->scale;
	if (mem->addr32)
		ea = (u32)ea;
	if (mem->seg == 0x64)
		ea += fs_base;
	else if (mem->seg == 0x65)
		ea += gs_base;
	return ea;
}
