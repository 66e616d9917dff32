// SPDX-License-Identifier: GPL-2.0
/*
 * VMX root's IDT and GDT (root_idt.h), and what root does with an NMI or a
 * fault that arrives while it runs.
 */
#include "root_idt.h"
#include "exit.h"
#include "hv.h"
#include "intrin.h"
#include "os.h"
#include "root_log.h"
#include "segment.h"

#define VT_IDT_VECTORS		256
#define VT_GATE_INTERRUPT	0xeull		/* 64-bit interrupt gate: IF cleared on entry */
#define VT_GATE_PRESENT		VT_BIT(47)

/*
 * A 16-byte 64-bit interrupt gate (SDM Vol. 3A 6.14.1): DPL 0, IST 0 (stay
 * on the host stack: root never runs at CPL 3 and needs no stack switch).
 */
static void vt_idt_gate(u64 *gate, u64 entry, u16 cs)
{
	gate[0] = (entry & 0xffff) | (u64)cs << 16 | VT_GATE_INTERRUPT << 40 | VT_GATE_PRESENT |
		  ((entry >> 16) & 0xffff) << 48;
	gate[1] = entry >> 32;
}

int vt_root_idt_init(struct vt_hv *hv)
{
	u16 cs = vt_read_cs() & ~SEG_SELECTOR_RPL_TI_MASK;
	u64 *idt = vt_os_alloc_pages(1);
	u32 v;

	if (!idt)
		return -VT_ENOMEM;
	for (v = 0; v < VT_IDT_VECTORS; v++)
		vt_idt_gate(idt + 2 * v, v == X86_TRAP_NMI ? (u64)vt_root_nmi_entry : vt_root_vectors[v],
			    cs);
	hv->root_idt = idt;
	return 0;
}

void vt_root_idt_fini(struct vt_hv *hv)
{
	if (hv->root_idt)
		vt_os_free_pages(hv->root_idt, 1);
	hv->root_idt = NULL;
}

void vt_root_gdt_copy(struct vt_vcpu *vcpu)
{
	struct vt_desc_ptr gdt;
	u32 bytes;

	vt_sgdt(&gdt);
	bytes = (u32)gdt.limit + 1;
	vt_memcpy(vcpu->host_gdt, (const void *)gdt.base, bytes < VT_PAGE_SIZE ? bytes : VT_PAGE_SIZE);
}

struct vt_vcpu *vt_root_vcpu(u64 rsp)
{
	u64 top = (rsp | (VT_HOST_STACK_PAGES * VT_PAGE_SIZE - 1)) + 1;

	return *(struct vt_vcpu **)(top - 16);
}

/*
 * Noted for the next VM entry (exit.c), and an NMI window asked for in case
 * this NMI came after the exit handler last looked: the guest then exits
 * again as soon as it can take an NMI (SDM 3C 25.2). NMI exiting and
 * virtual NMIs are always on (vmx_caps.c), as the window requires. The
 * VMCS is current in root until the kernel's IDT is back (vcpu.c).
 */
void vt_root_nmi(u64 rsp)
{
	struct vt_vcpu *vcpu = vt_root_vcpu(rsp);

	__atomic_store_n(&vcpu->root_nmi, true, __ATOMIC_RELEASE);
	vcpu->counts->root_nmis++;
	vt_update_control(CPU_BASED_VM_EXEC_CONTROL, CPU_BASED_NMI_WINDOW_EXITING, true);
}

static bool vt_root_fixup(struct vt_root_frame *f)
{
	const u64 *pair;

	for (pair = vt_root_fixups; pair[0]; pair += 2) {
		if (f->rip == pair[0]) {
			f->rip = pair[1];
			return true;
		}
	}
	return false;
}

bool vt_root_trap(struct vt_root_frame *f)
{
	if (f->vector == X86_TRAP_GP && vt_root_fixup(f))
		return true;
	vt_root_report(vt_root_vcpu((u64)f), VT_RE_ROOT_FAULT, f->vector, f->rip, f->error,
		       f->vector == X86_TRAP_PF ? vt_read_cr2() : 0);
	return false;
}
