// SPDX-License-Identifier: GPL-2.0
/*
 * Z1: hardware breakpoints in DR0-DR3, hidden from the guest.
 *
 * While any Z1 is set the hypervisor owns the debug registers on every CPU:
 * MOV DR exits (SDM Vol. 3C 25.1.3) and is emulated against per-CPU
 * shadows, so the kernel reads back exactly what it wrote. The guest's own
 * enabled breakpoints are not dropped: each gets one of the slots the
 * debugger does not use (its address and its DR7 enable/R/W/LEN bits move
 * to that slot), and its #DB is reported back in the guest's slot number.
 * A guest breakpoint that finds no free slot stays unarmed until one frees.
 *
 * DR0-DR3 and DR6 are not switched by VM entry or exit; DR7 is, through
 * GUEST_DR7 and the load/save debug controls (SDM 3C 27.3.1, 28.5.1). So
 * each CPU loads its own registers in vt_hooks_on_resume(), and gives the
 * guest its values back there when the last Z1 goes.
 */
#include "hooks_priv.h"
#include "../core/intrin.h"

/* Merge the debugger's slots and the guest's enabled ones into the hardware. */
static void vt_dr_load(struct vt_hooks_cpu *c)
{
	u64 dr7 = DR7_FIXED_1 | (c->guest_dr7 & (DR7_LE | DR7_GE));
	u64 addr[4] = { 0, 0, 0, 0 };
	bool taken[4];
	u32 p, i;

	for (p = 0; p < 4; p++) {
		c->guest_slot[p] = -1;
		taken[p] = vt_hooks.hw_used[p];
		if (taken[p]) {
			addr[p] = vt_hooks.hw_addr[p];
			dr7 |= DR7_G(p);	/* R/W=00 LEN=00: instruction fetch */
		}
	}
	for (i = 0; i < 4; i++) {
		if (!(c->guest_dr7 & DR7_EN_MASK(i)))
			continue;
		for (p = 0; p < 4 && taken[p]; p++)
			;
		if (p == 4)
			break;
		taken[p] = true;
		c->guest_slot[p] = i;
		addr[p] = c->guest_dr[i];
		dr7 |= ((c->guest_dr7 >> DR7_EN_SHIFT(i)) & 3) << DR7_EN_SHIFT(p);
		dr7 |= ((c->guest_dr7 >> DR7_CTL_SHIFT(i)) & 0xf) << DR7_CTL_SHIFT(p);
	}
	for (p = 0; p < 4; p++)
		vt_write_dr(p, addr[p]);
	vt_vmwrite(GUEST_DR7, dr7);
}

static void vt_dr_take(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	u32 i;

	for (i = 0; i < 4; i++)
		c->guest_dr[i] = vt_read_dr(i);
	c->guest_dr6 = vt_read_dr(6);
	c->guest_dr7 = vt_vmread_or0(GUEST_DR7);
	c->dr_owned = true;
	if (vt_set_mov_dr_exiting(vcpu, true))
		vt_root_report(vcpu, VT_RE_NO_MOV_DR_EXITING, 0, 0, 0, 0);
	vt_set_exception_intercept(X86_TRAP_DB, true);
}

static void vt_dr_give_back(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	u32 i;

	for (i = 0; i < 4; i++) {
		vt_write_dr(i, c->guest_dr[i]);
		c->guest_slot[i] = -1;
	}
	vt_write_dr(6, c->guest_dr6);
	vt_vmwrite(GUEST_DR7, c->guest_dr7);
	c->dr_owned = false;
	vt_set_mov_dr_exiting(vcpu, false);
	vt_set_exception_intercept(X86_TRAP_DB, false);
}

void vt_dr_sync(struct vt_vcpu *vcpu, struct vt_hooks_cpu *c)
{
	if (VT_READ_ONCE(vt_hooks.hw_count)) {
		if (!c->dr_owned)
			vt_dr_take(vcpu, c);
		vt_dr_load(c);
	} else if (c->dr_owned) {
		vt_dr_give_back(vcpu, c);
	}
}

static void vt_dr_changed(void)
{
	__atomic_fetch_add(&vt_hooks.dr_gen, 1, __ATOMIC_RELEASE);
}

static int vt_hwbp_find(u64 gva)
{
	u32 p;

	for (p = 0; p < 4; p++)
		if (vt_hooks.hw_used[p] && vt_hooks.hw_addr[p] == gva)
			return p;
	return -1;
}

int vt_hwbp_insert(u64 gva)
{
	int ret = -VT_ENOSPC;
	u32 p;

	vt_hooks_lock();
	if (vt_hwbp_find(gva) >= 0) {
		ret = 0;	/* idempotent, as gdb asks of Z packets */
		goto out;
	}
	for (p = 0; p < 4; p++) {
		if (vt_hooks.hw_used[p])
			continue;
		vt_hooks.hw_used[p] = true;
		vt_hooks.hw_addr[p] = gva;
		vt_hooks.hw_count++;
		vt_dr_changed();
		ret = 0;
		break;
	}
out:
	vt_hooks_unlock();
	return ret;
}

int vt_hwbp_remove(u64 gva)
{
	int p;

	vt_hooks_lock();
	p = vt_hwbp_find(gva);
	if (p >= 0) {
		vt_hooks.hw_used[p] = false;
		vt_hooks.hw_count--;
		vt_dr_changed();
	}
	vt_hooks_unlock();
	return 0;
}

void vt_dr_clear_all(void)
{
	u32 p;

	for (p = 0; p < 4; p++)
		vt_hooks.hw_used[p] = false;
	vt_hooks.hw_count = 0;
	vt_dr_changed();
}

/* The guest's DR6 after a #DB that is its own: B bits in its slot numbers. */
static u64 vt_dr6_for_guest(u64 dr6, u64 trap_bits, u64 qual)
{
	dr6 = (dr6 & ~DR_TRAP_BITS) | trap_bits | (qual & (DR6_BD | DR6_BS));
	if (qual & DEBUG_EXIT_QUAL_RTM)
		dr6 &= ~DR6_RTM;
	return dr6;
}

enum vt_hook_result vt_hooks_on_debug(struct vt_vcpu *vcpu, struct vt_exit *exit,
				      u64 dr6_bits, struct vt_dbg_stop *stop)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	bool owned = c && c->dr_owned, ours = false;
	u64 guest_bits = 0;
	u32 p;

	(void)exit;
	for (p = 0; p < 4; p++) {
		if (!(dr6_bits & VT_BIT(p)))
			continue;
		if (!owned)
			guest_bits |= VT_BIT(p);
		else if (vt_hooks.hw_used[p])
			ours = true;
		else if (c->guest_slot[p] >= 0)
			guest_bits |= VT_BIT(c->guest_slot[p]);
	}
	if (ours) {
		vt_hooks.stats.hw_hits++;
		/* Instruction breakpoints are faults: RF lets the resumed insn run once. */
		vt_vmwrite(GUEST_RFLAGS, vt_vmread_or0(GUEST_RFLAGS) | X86_EFLAGS_RF);
		stop->cpu = vcpu->cpu;
		stop->reason = VT_STOP_HWBREAK;
		stop->data_addr = 0;
		return VT_HOOK_STOP;
	}
	/* A #DB that exits does not write DR6 (SDM 3C 27.1): the guest's handler reads it. */
	if (owned)
		c->guest_dr6 = vt_dr6_for_guest(c->guest_dr6, guest_bits, dr6_bits) | DR6_FIXED_1;
	else
		vt_write_dr(6, vt_dr6_for_guest(vt_read_dr(6), guest_bits, dr6_bits));
	return VT_HOOK_NOT_MINE;
}

/* DR0-DR3 0, DR6 FFFF0FF0H, DR7 400H after an INIT (SDM 3A Table 10-1). */
bool vt_hooks_on_init_signal(struct vt_vcpu *vcpu)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	u32 i;

	if (!c || !c->dr_owned)
		return false;
	for (i = 0; i < 4; i++)
		c->guest_dr[i] = 0;
	c->guest_dr6 = DR6_INIT;
	c->guest_dr7 = DR7_FIXED_1;
	vt_dr_load(c);
	return true;
}

static u64 vt_dr_get(const struct vt_hooks_cpu *c, u32 n)
{
	if (!c->dr_owned)
		return n == 7 ? vt_vmread_or0(GUEST_DR7) : vt_read_dr(n);
	if (n < 4)
		return c->guest_dr[n];
	return n == 6 ? c->guest_dr6 : c->guest_dr7;
}

static void vt_dr_set(struct vt_hooks_cpu *c, u32 n, u64 v)
{
	if (!c->dr_owned) {
		if (n == 7)
			vt_vmwrite(GUEST_DR7, v);
		else
			vt_write_dr(n, v);
		return;
	}
	if (n < 4)
		c->guest_dr[n] = v;
	else if (n == 6)
		c->guest_dr6 = v;
	else
		c->guest_dr7 = v;
	if (n != 6)
		vt_dr_load(c);
}

/*
 * DR7.GD: the hardware DR7 never has GD while we own the registers, so the
 * guest's GD is emulated: the MOV faults with #DB, DR6.BD set and GD
 * cleared, as on entry to the handler (SDM 3B 18.2.4).
 */
static enum vt_hook_result vt_dr_general_detect(struct vt_exit *exit, struct vt_hooks_cpu *c)
{
	c->guest_dr6 |= DR6_BD;
	c->guest_dr7 &= ~DR7_GD;
	vt_inject_exception(exit, X86_TRAP_DB, false, 0);
	return VT_HOOK_HANDLED;
}

/* MOV to/from DRn; exit qualification SDM 3C 28.2.1 Table 28-4. */
enum vt_hook_result vt_hooks_on_dr_access(struct vt_vcpu *vcpu, struct vt_exit *exit)
{
	struct vt_hooks_cpu *c = vt_hooks_cpu(vcpu);
	u32 n = exit->qual & DEBUG_REG_ACCESS_NUM;
	u32 reg = (exit->qual & DEBUG_REG_ACCESS_REG) >> DEBUG_REG_ACCESS_REG_SHIFT;
	u64 v;

	if (!c)
		return VT_HOOK_NOT_MINE;
	vt_hooks.stats.dr_emulated++;
	/* The exit has priority over these faults; deliver them ourselves. */
	if (vt_guest_cpl() != 0) {
		vt_inject_gp0(exit);
		return VT_HOOK_HANDLED;
	}
	if (n == 4 || n == 5) {
		if (vt_vmread_or0(GUEST_CR4) & X86_CR4_DE) {
			vt_inject_ud(exit);
			return VT_HOOK_HANDLED;
		}
		n += 2;		/* aliases of DR6/DR7 without CR4.DE */
	}
	if (c->dr_owned && (c->guest_dr7 & DR7_GD))
		return vt_dr_general_detect(exit, c);
	if (exit->qual & DEBUG_REG_ACCESS_TYPE) {
		vt_write_gpr(exit, reg, vt_dr_get(c, n));
	} else {
		v = vt_read_gpr(exit, reg);
		if (n >= 6 && (v >> 32)) {
			vt_inject_gp0(exit);
			return VT_HOOK_HANDLED;
		}
		if (n == 6)
			v = (v & DR6_VOLATILE) | DR6_FIXED_1;
		else if (n == 7)
			v = (v & ~DR7_MBZ) | DR7_FIXED_1;
		vt_dr_set(c, n, v);
	}
	vt_advance_rip(exit);
	return VT_HOOK_HANDLED;
}
