// SPDX-License-Identifier: GPL-2.0
/*
 * Branch steps (btf_block.h): the straight-line code one runs, decoded
 * with insn.c from a buffer read through the vCPU's own page tables.
 */
#include "btf_block.h"
#include "insn.h"
#include "../core/os.h"

#define VT_BTF_INSN_MAX		15
#define VT_BTF_READ		128	/* a typical block in one read */

struct vt_btf_code {
	const struct vt_vcpu *vcpu;
	vt_own_mem_fn mem;
	u64 base;		/* gva of buf[0] */
	u32 have;		/* bytes read into buf */
	u8 buf[VT_BTF_READ];
};

/* The instruction at ip; reads on from ip when the buffer holds too little of it. */
static int vt_btf_decode(struct vt_btf_code *c, u64 ip, struct vt_insn *insn)
{
	u64 off = ip - c->base;
	int n;

	if (ip < c->base || off + VT_BTF_INSN_MAX > c->have) {
		n = c->mem(c->vcpu, ip, c->buf, sizeof(c->buf), false);
		if (n <= 0)
			return -VT_EFAULT;
		c->base = ip;
		c->have = (u32)n;
		off = 0;
	}
	return vt_insn_decode(c->buf + off, c->have - (u32)off, insn);
}

/* Every kind but a plain instruction and a Jcc changes RIP every time. */
static bool vt_btf_always_branches(const struct vt_insn *insn)
{
	return insn->kind != VT_INSN_OTHER && insn->kind != VT_INSN_JCC;
}

bool vt_btf_block_safe(const struct vt_vcpu *vcpu, vt_own_mem_fn mem, u64 rip)
{
	struct vt_btf_code code = { .vcpu = vcpu, .mem = mem };
	struct vt_insn insn;
	u64 ip = rip;
	u32 i;

	for (i = 0; i < VT_BTF_BLOCK_MAX; i++) {
		if (vt_btf_decode(&code, ip, &insn) || insn.tf_hazard)
			return false;
		if (vt_btf_always_branches(&insn))
			return true;
		ip += insn.len;
	}
	return false;
}

int vt_btf_block_branch(const struct vt_vcpu *vcpu, vt_own_mem_fn mem, u64 start, u64 to, u64 *from,
			u32 *insns)
{
	struct vt_btf_code code = { .vcpu = vcpu, .mem = mem };
	struct vt_insn insn;
	u64 ip = start;
	u32 i;
	int ret;

	for (i = 0; i < VT_BTF_BLOCK_MAX; i++) {
		ret = vt_btf_decode(&code, ip, &insn);
		if (ret)
			return ret;
		if (vt_btf_always_branches(&insn) ||
		    (insn.kind == VT_INSN_JCC && ip + insn.len + (u64)insn.rel == to)) {
			*from = ip;
			*insns = i + 1;
			return 0;
		}
		ip += insn.len;
	}
	return -VT_EINVAL;
}
