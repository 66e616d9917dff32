/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMX root's own interrupt entry points (core/root_idt.c builds the IDT
 * that points here) and its MSR accessors that survive a #GP.
 *
 * The CPU enters a gate with RSP on the host stack (every gate has IST 0,
 * and root runs at CPL 0 on that stack from VM exit to VM entry), having
 * aligned it to 16 and pushed SS, RSP, RFLAGS, CS, RIP and, for some
 * exceptions, an error code (SDM Vol. 3A 6.14.2). The stubs save the nine
 * registers a C call may clobber, which leaves RSP 16-aligned for the call
 * (SysV ABI), and return with IRETQ. No RET here goes through the kernel's
 * return thunk, and objtool does not process this file (Kbuild).
 */
#include <linux/linkage.h>
#include <asm/asm.h>
#include "compat.h"

	.text

.macro SAVE_SCRATCH
	push	%rax
	push	%rcx
	push	%rdx
	push	%rsi
	push	%rdi
	push	%r8
	push	%r9
	push	%r10
	push	%r11
.endm

.macro RESTORE_SCRATCH
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rdi
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rax
.endm

/*
 * NMI (vector 2): this CPU's NMI arrived while it was in VMX root, where
 * NMI exiting does not apply (SDM 3C 25.3). vt_root_nmi() notes it for the
 * next VM entry, which hands it to the debugger or the guest. IRETQ ends
 * NMI blocking.
 */
SYM_CODE_START(vt_root_nmi_entry)
	UNWIND_HINT_IRET_REGS
	ENDBR
	SAVE_SCRATCH
	mov	%rsp, %rdi
	call	vt_root_nmi
	RESTORE_SCRATCH
	iretq
SYM_CODE_END(vt_root_nmi_entry)

/*
 * Every other vector. The frame vt_root_trap() receives is struct
 * vt_root_frame (core/root_idt.h): the nine scratch registers, the vector,
 * the error code (0 where the CPU pushes none), then the CPU's frame. It
 * returns true when it moved RIP to a fixup (a faulting RDMSR/WRMSR).
 * Anything else is a bug in root, whose state can no longer be trusted:
 * it is in the root log, and this CPU halts for good (NMIs still come in
 * and return here). The kernel prints the record from another CPU.
 */
SYM_CODE_START_LOCAL(vt_root_trap_common)
	SAVE_SCRATCH
	mov	%rsp, %rdi
	call	vt_root_trap
	test	%al, %al
	jz	.Lhalt
	RESTORE_SCRATCH
	add	$16, %rsp	/* vector, error code */
	iretq
.Lhalt:
	hlt
	jmp	.Lhalt
SYM_CODE_END(vt_root_trap_common)

/* Exceptions that push an error code (SDM 3A 6.13, table 6-1). */
#define VT_HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || \
			 (v) == 21 || (v) == 29 || (v) == 30)

.macro VT_ROOT_STUB vector
	/* Invoked under .altmacro (below): the hints' own macros need it off. */
	.noaltmacro
SYM_CODE_START_LOCAL(vt_root_stub_\vector)
	.if VT_HAS_ERROR(\vector) == 0
	UNWIND_HINT_IRET_REGS
	.else
	UNWIND_HINT_IRET_REGS offset=8
	.endif
	ENDBR
	.if VT_HAS_ERROR(\vector) == 0
	pushq	$0
	.endif
	pushq	$\vector
	jmp	vt_root_trap_common
SYM_CODE_END(vt_root_stub_\vector)
	.altmacro
.endm

.macro VT_ROOT_STUB_ADDRESS vector
	.quad	vt_root_stub_\vector
.endm

/* One stub per vector (.altmacro: %vector is the number, not the symbol). */
	.altmacro
	vector = 0
	.rept 256
	VT_ROOT_STUB %vector
	vector = vector + 1
	.endr

	.section .rodata
	.align 8
/* vt_root_vectors[v]: the entry point of vector v (2 is vt_root_nmi_entry). */
SYM_DATA_START(vt_root_vectors)
	vector = 0
	.rept 256
	VT_ROOT_STUB_ADDRESS %vector
	vector = vector + 1
	.endr
SYM_DATA_END(vt_root_vectors)
	.noaltmacro

	.text
/*
 * int vt_rdmsr_safe(u32 msr, u64 *value) and int vt_wrmsr_safe(u32 msr,
 * u64 value): 0, or -VT_EIO (-5) when the MSR raised #GP. In the kernel's
 * context (at load) the kernel's exception table catches the #GP; in VMX
 * root vt_root_trap() finds the same pairs in vt_root_fixups.
 */
SYM_FUNC_START(vt_rdmsr_safe)
	ENDBR
	mov	%edi, %ecx
.Lrdmsr:
	ANNOTATE_NOENDBR	/* in vt_root_fixups: a #GP resumes here, never a branch */
	rdmsr
	shl	$32, %rdx
	or	%rdx, %rax
	mov	%rax, (%rsi)
	xor	%eax, %eax
	VT_RET
.Lrdmsr_fault:
	ANNOTATE_NOENDBR
	movq	$0, (%rsi)
	mov	$-5, %eax
	VT_RET
	_ASM_EXTABLE(.Lrdmsr, .Lrdmsr_fault)
SYM_FUNC_END(vt_rdmsr_safe)

SYM_FUNC_START(vt_wrmsr_safe)
	ENDBR
	mov	%edi, %ecx
	mov	%rsi, %rax
	mov	%rsi, %rdx
	shr	$32, %rdx
.Lwrmsr:
	ANNOTATE_NOENDBR
	wrmsr
	xor	%eax, %eax
	VT_RET
.Lwrmsr_fault:
	ANNOTATE_NOENDBR
	mov	$-5, %eax
	VT_RET
	_ASM_EXTABLE(.Lwrmsr, .Lwrmsr_fault)
SYM_FUNC_END(vt_wrmsr_safe)

	.section .rodata
	.align 8
/* Pairs of (faulting instruction, where to continue), then a zero pair. */
SYM_DATA_START(vt_root_fixups)
	.quad	.Lrdmsr, .Lrdmsr_fault
	.quad	.Lwrmsr, .Lwrmsr_fault
	.quad	0, 0
SYM_DATA_END(vt_root_fixups)

	.text
/*
 * void vt_parent_vmcall(struct vt_guest_regs *regs) (core/parent.c): a
 * VMCALL to the parent hypervisor with the guest's general registers, all
 * but RSP, which then receive the parent's answer. RDI is the guest's own
 * during the VMCALL, so the frame's address waits on the stack.
 */
#define REGS_RAX	0
#define REGS_RCX	8
#define REGS_RDX	16
#define REGS_RBX	24
#define REGS_RBP	40
#define REGS_RSI	48
#define REGS_RDI	56
#define REGS_R8		64
#define REGS_R9		72
#define REGS_R10	80
#define REGS_R11	88
#define REGS_R12	96
#define REGS_R13	104
#define REGS_R14	112
#define REGS_R15	120
SYM_FUNC_START(vt_parent_vmcall)
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	push	%rdi
	mov	REGS_RAX(%rdi), %rax
	mov	REGS_RCX(%rdi), %rcx
	mov	REGS_RDX(%rdi), %rdx
	mov	REGS_RBX(%rdi), %rbx
	mov	REGS_RBP(%rdi), %rbp
	mov	REGS_RSI(%rdi), %rsi
	mov	REGS_R8(%rdi), %r8
	mov	REGS_R9(%rdi), %r9
	mov	REGS_R10(%rdi), %r10
	mov	REGS_R11(%rdi), %r11
	mov	REGS_R12(%rdi), %r12
	mov	REGS_R13(%rdi), %r13
	mov	REGS_R14(%rdi), %r14
	mov	REGS_R15(%rdi), %r15
	mov	REGS_RDI(%rdi), %rdi
	vmcall
	xchg	%rdi, (%rsp)		/* the frame back; the answer's RDI saved */
	mov	%rax, REGS_RAX(%rdi)
	mov	%rcx, REGS_RCX(%rdi)
	mov	%rdx, REGS_RDX(%rdi)
	mov	%rbx, REGS_RBX(%rdi)
	mov	%rbp, REGS_RBP(%rdi)
	mov	%rsi, REGS_RSI(%rdi)
	mov	%r8, REGS_R8(%rdi)
	mov	%r9, REGS_R9(%rdi)
	mov	%r10, REGS_R10(%rdi)
	mov	%r11, REGS_R11(%rdi)
	mov	%r12, REGS_R12(%rdi)
	mov	%r13, REGS_R13(%rdi)
	mov	%r14, REGS_R14(%rdi)
	mov	%r15, REGS_R15(%rdi)
	pop	%rax
	mov	%rax, REGS_RDI(%rdi)
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	VT_RET
SYM_FUNC_END(vt_parent_vmcall)
