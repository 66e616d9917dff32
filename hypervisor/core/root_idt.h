/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMX root's own IDT and GDT. A VM exit loads IDTR and GDTR from the host
 * state (SDM Vol. 3C 28.5.2); pointing them at the kernel's tables would
 * make every NMI or fault in root run the kernel's handlers, which a
 * hostile kernel can rewrite. Root's IDT (one page for all CPUs) sends
 * every vector to os/linux/root_entry.S, and each CPU's GDT is a copy of
 * the kernel's taken when it is virtualized (IRETQ reads CS and SS from
 * it). Both pages are hidden from the guest (shield.h).
 */
#ifndef VT_CORE_ROOT_IDT_H
#define VT_CORE_ROOT_IDT_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_hv;
struct vt_vcpu;

/* What a root_entry.S stub hands vt_root_trap(), lowest address first. */
struct vt_root_frame {
	u64 r11, r10, r9, r8, rdi, rsi, rdx, rcx, rax;
	u64 vector;
	u64 error;		/* 0 where the CPU pushes no error code */
	u64 rip, cs, rflags, rsp, ss;	/* pushed by the CPU */
};

/* root_entry.S */
extern const u64 vt_root_vectors[256];	/* each vector's entry point */
extern const u64 vt_root_fixups[];	/* (instruction, continuation) pairs, then 0, 0 */
void vt_root_nmi_entry(void);

/* Build the IDT page (hv->root_idt), at load. */
int vt_root_idt_init(struct vt_hv *hv);
void vt_root_idt_fini(struct vt_hv *hv);
/* Copy this CPU's GDT to vcpu->host_gdt: on that CPU, when virtualizing. */
void vt_root_gdt_copy(struct vt_vcpu *vcpu);

/*
 * The vCPU whose host stack holds rsp: the stack is VT_HOST_STACK_PAGES
 * pages aligned to its size, the vCPU pointer 16 bytes below its top.
 */
struct vt_vcpu *vt_root_vcpu(u64 rsp);

/* root_entry.S calls these, in VMX root. */
void vt_root_nmi(u64 rsp);
/*
 * A fault in root: true when it was a RDMSR/WRMSR's #GP, and f->rip now
 * points at its continuation; otherwise the fault is reported in the vCPU's
 * root log (VT_RE_ROOT_FAULT) and false tells the stub to halt this CPU.
 */
bool vt_root_trap(struct vt_root_frame *f);

#ifdef __cplusplus
}
#endif

#endif
