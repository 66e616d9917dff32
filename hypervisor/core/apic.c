// SPDX-License-Identifier: GPL-2.0
/*
 * An NMI to another CPU, sent from VMX root by this CPU's local APIC, never
 * through the kernel's APIC driver: VMX root must not run the kernel's code
 * (docs/hypervisor.md, "Self-protection"). In x2APIC mode the ICR is MSR
 * 0x830 (SDM Vol. 3A 11.12.9); in xAPIC mode it is two registers in the
 * APIC page (11.6.1), mapped uncached through this CPU's second host-window
 * slot. Destination mode physical, by the APIC ID each vCPU read of itself
 * when it was virtualized.
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

static int vt_xapic_send(struct vt_vcpu *from, u32 dest, u32 low)
{
	u64 base = 0;
	volatile u32 *apic;
	u32 i;

	if (vt_rdmsr_safe(MSR_IA32_APICBASE, &base) || !(base & MSR_IA32_APICBASE_ENABLE))
		return -VT_EIO;
	apic = vt_window_map_uncached(&from->hv->window, from->cpu, base & MSR_IA32_APICBASE_BASE);
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
