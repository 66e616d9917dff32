// SPDX-License-Identifier: GPL-2.0
/*
 * VTICE_IOC_LBR: one CPU's LBR support and the snapshot the debug stub took
 * at a crash (debug/lbr.h, docs/lbr.md).
 *
 * The snapshots stay on pages the shield hides from the kernel (it reads
 * the decoy there), and this file reads them through VMCALLs, one word
 * each, rather than from a page shared with the kernel: a shared page
 * would let a hostile or dying kernel rewrite the very branches that led
 * to its crash, and VMX root would have to write through a pointer the
 * kernel hands it. A word per VMCALL costs ~100 exits per CPU read, once,
 * when a person asks.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/cpumask.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include <vtice/ioctl.h>
#include <vtice/vmcall.h>
#include "vtice_linux.h"
#include "../../debug/lbr.h"

#define VT_LBR_TRIES	4	/* reads of a snapshot that changes under them */

static int vt_lbr_word(struct vt_vcpu *vcpu, u32 cpu, u32 item, u64 *out)
{
	u64 status = vt_vcpu_vmcall(vcpu, VTICE_VMCALL_LBR, (u64)cpu << 32 | item, out);

	if (status == VTICE_VMCALL_OK)
		return 0;
	/* ENOSYS: no stub took the VMCALL, or LBR recording is off. */
	return status == (u64)VTICE_VMCALL_ENOSYS ? -ENOSYS : -EINVAL;
}

static int vt_lbr_read_entries(struct vt_vcpu *vcpu, struct vtice_lbr *l)
{
	u64 word = 0;
	u32 i, item;
	int ret = 0;

	for (i = 0; i < l->count && !ret; i++) {
		item = VTICE_VMCALL_LBR_ENTRY + 3 * i;
		ret = vt_lbr_word(vcpu, l->cpu, item, &l->br[i].from);
		if (!ret)
			ret = vt_lbr_word(vcpu, l->cpu, item + 1, &l->br[i].to);
		if (!ret)
			ret = vt_lbr_word(vcpu, l->cpu, item + 2, &word);
		l->br[i].flags = (u32)word;
		l->br[i].cycles = word >> 32;
	}
	return ret;
}

static int vt_lbr_read_once(struct vt_vcpu *vcpu, struct vtice_lbr *l, u64 *seq)
{
	u64 hdr = 0;
	int ret = vt_lbr_word(vcpu, l->cpu, VTICE_VMCALL_LBR_SEQ, seq);

	if (!ret)
		ret = vt_lbr_word(vcpu, l->cpu, VTICE_VMCALL_LBR_HEADER, &hdr);
	if (!ret)
		ret = vt_lbr_word(vcpu, l->cpu, VTICE_VMCALL_LBR_TSC, &l->tsc);
	if (!ret)
		ret = vt_lbr_word(vcpu, l->cpu, VTICE_VMCALL_LBR_RIP, &l->rip);
	if (!ret)
		ret = vt_lbr_word(vcpu, l->cpu, VTICE_VMCALL_LBR_SELECT, &l->lbr_select);
	if (ret)
		return ret;
	l->event = hdr & 0xff;
	l->count = min_t(u32, (hdr >> 8) & 0xff, VTICE_LBR_MAX);
	l->flags = (hdr >> 16) & 0xffff;
	l->snapshots = hdr >> 32;
	return vt_lbr_read_entries(vcpu, l);
}

/* Through this CPU's hypervisor; again while a crash rewrites the snapshot. */
static int vt_lbr_read_snapshot(struct vtice_lbr *l)
{
	struct vt_vcpu *vcpu;
	u64 seq = 0, again = 0;
	int i, ret = -EAGAIN;

	for (i = 0; i < VT_LBR_TRIES && ret == -EAGAIN; i++) {
		vcpu = vt_linux_launched_vcpu(get_cpu());
		if (!vcpu) {
			ret = -ENODEV;
		} else {
			ret = vt_lbr_read_once(vcpu, l, &seq);
			if (!ret)
				ret = vt_lbr_word(vcpu, l->cpu, VTICE_VMCALL_LBR_SEQ, &again);
			if (!ret && ((seq & 1) || seq != again))
				ret = -EAGAIN;
		}
		put_cpu();
	}
	return ret;
}

static void vt_lbr_fill_model(struct vtice_lbr *l)
{
	struct vt_lbr_model m;

	vt_lbr_detect(&m, vt_mod.hv->caps.flags);
	l->status = m.status;
	l->entries = m.nr;
	l->format = m.format;
	l->arch_depth = m.arch_depth;
	l->model = m.model;
}

static int vt_lbr_fill(struct vtice_lbr *l)
{
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(l->cpu);
	int ret;

	vt_lbr_fill_model(l);
	if (l->status != VTICE_LBR_OK)
		return 0;
	if (!vcpu) {
		l->status = VTICE_LBR_OFFLINE;
		return 0;
	}
	ret = vt_lbr_read_snapshot(l);
	if (ret == -ENOSYS) {
		l->status = VTICE_LBR_NO_STUB;
		l->count = 0;
		return 0;
	}
	return ret;
}

long vt_ioc_lbr(void __user *uarg)
{
	struct vtice_lbr *l = kzalloc(sizeof(*l), GFP_KERNEL);
	u32 cpu;
	int ret;

	if (!l)
		return -ENOMEM;
	ret = vt_get_arg(l, sizeof(*l), uarg);
	if (ret)
		goto out_free;
	cpu = l->cpu;
	ret = -EINVAL;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		goto out_free;
	memset(l, 0, sizeof(*l));
	l->size = sizeof(*l);
	l->version = VTICE_ABI_VERSION;
	l->cpu = cpu;
	ret = vt_lbr_fill(l);
	if (!ret)
		ret = vt_put_arg(uarg, l, sizeof(*l));
out_free:
	kfree(l);
	return ret;
}
