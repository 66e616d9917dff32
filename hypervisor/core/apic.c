// SPDX-License-Identifier: GPL-2.0
/*
 * An NMI to another CPU, sent from VMX root by this CPU's local APIC, never
 * through the kernel's APIC driver: VMX root must not run the kernel's code
 * (docs/hypervisor.md, "Self-protection"). In x2APIC mode the ICR is MSR
 * 0x830 (SDM Vol. 3A 11.12.9); in xAPIC mode it is two registers in the
 * APIC page (11.6.1), mapped uncached through this CPU's second host-window
 * slot. Destination mode physical, by the APIC ID each vCPU read of itself
 * when it was virtualized. Also read from root: whether the local APIC
 * timer can still interrupt the CPU (the stub's lockup watch).
 */
#include "exit.h"
#include "intrin.h"
#include "os.h"

#define VT_ICR_WAIT	10000	/* polls of a busy xAPIC ICR before giving up */

/* On the vCPU's own CPU, at virtualization. */
void vt_apic_read_id(struct vt_vcpu *vcpu)
{
	u64 base = 0;
	struct vt_cpuid_regs r;

	vcpu->x2apic = !vt_rdmsr_safe(MSR_IA32_APICBASE, &base) && (base & MSR_IA32_APICBASE_EXTD);
	if (vcpu->x2apic && !vt_rdmsr_safe(MSR_X2APIC_APICID, &base)) {
		vcpu->apic_id = (u32)base;
		return;
	}
	/* xAPIC: the initial APIC ID, which Linux never changes (CPUID.1:EBX[31:24]). */
	vt_cpuid(1, 0, &r);
	vcpu->apic_id = r.ebx >> 24;
}

/* This CPU's xAPIC page, uncached in its second window slot; NULL if disabled. */
static volatile u32 *vt_xapic_page(struct vt_vcpu *vcpu)
{
	u64 base = 0;

	if (vt_rdmsr_safe(MSR_IA32_APICBASE, &base) || !(base & MSR_IA32_APICBASE_ENABLE))
		return NULL;
	return vt_window_map_uncached(&vcpu->hv->window, vcpu->cpu, base & MSR_IA32_APICBASE_BASE);
}

static int vt_xapic_send(struct vt_vcpu *from, u32 dest, u32 low)
{
	volatile u32 *apic = vt_xapic_page(from);
	u32 i;

	if (!apic)
		return -VT_EIO;
	for (i = 0; i < VT_ICR_WAIT && (apic[APIC_ICR / 4] & APIC_ICR_BUSY); i++)
		vt_pause();
	if (i == VT_ICR_WAIT)
		return -VT_EBUSY;
	apic[APIC_ICR2 / 4] = dest << 24;
	apic[APIC_ICR / 4] = low;
	return 0;
}

int vt_send_nmi(struct vt_vcpu *from, const struct vt_vcpu *to)
{
	if (from->x2apic)
		return vt_wrmsr_safe(MSR_X2APIC_ICR, (u64)to->apic_id << 32 | APIC_DM_NMI) ? -VT_EIO : 0;
	return vt_xapic_send(from, to->apic_id, APIC_DM_NMI);
}

bool vt_apic_timer_live(struct vt_vcpu *vcpu)
{
	volatile u32 *apic;
	u64 lvt, spiv;

	if (vcpu->x2apic) {
		if (vt_rdmsr_safe(MSR_X2APIC_LVTT, &lvt) || vt_rdmsr_safe(MSR_X2APIC_SPIV, &spiv))
			return true;
	} else {
		apic = vt_xapic_page(vcpu);
		if (!apic)
			return true;
		lvt = apic[APIC_LVTT / 4];
		spiv = apic[APIC_SPIV / 4];
	}
	return !(lvt & APIC_LVT_MASKED) && (spiv & APIC_SPIV_APIC_ENABLED);
}
