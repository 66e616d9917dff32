/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMLAUNCH into the running kernel and the VM-exit entry point.
 * Frame layout: struct vt_guest_regs in core/hv.h (144 bytes, 16-aligned).
 *
 * objtool does not read this file (Kbuild: the exit stub is entered by the
 * CPU, not called), so the kernel never learns of its return sites and
 * cannot patch them at load: the kernel's RET (a jump to the return thunk)
 * would stay a jump to the unpatched thunk, which warns ("Unpatched return
 * thunk in use", __warn_thunk) on kernels built with MITIGATION_RETHUNK.
 * These two returns run once per CPU at load and at unload: a plain RET
 * (VT_RET, annotated for objtool, which reads this file on IBT kernels).
 */
#include <linux/linkage.h>
#include "compat.h"

#define VMCS_GUEST_RSP	0x681c
#define VMCS_GUEST_RIP	0x681e

#define FRAME_RSP	32
#define FRAME_RIP	128
#define FRAME_RFLAGS	136

	.text

/*
 * int vt_vmx_launch(void): the guest resumes at .Lguest with the very RSP
 * of the VMLAUNCH, so to the caller the function simply returns 0 - now
 * running in VMX non-root. Other GPRs are not part of the guest-state area
 * and keep their values across VM entry (SDM Vol. 3C 27.3).
 */
SYM_FUNC_START(vt_vmx_launch)
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	$VMCS_GUEST_RSP, %rax
	vmwrite	%rsp, %rax
	jbe	.Lwrite_failed
	lea	.Lguest(%rip), %rdx
	mov	$VMCS_GUEST_RIP, %rax
	vmwrite	%rdx, %rax
	jbe	.Lwrite_failed
	UNWIND_HINT_SAVE
	vmlaunch
	/* Only reached when VMLAUNCH failed (CF or ZF set). */
	mov	$1, %eax
	jmp	.Lout
.Lwrite_failed:
	mov	$2, %eax
	jmp	.Lout
.Lguest:
	/* VM entry lands here with the stack of the VMLAUNCH. */
	UNWIND_HINT_RESTORE
	ANNOTATE_NOENDBR
	xor	%eax, %eax
.Lout:
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	VT_RET
SYM_FUNC_END(vt_vmx_launch)

.macro PUSH_FRAME
	sub	$16, %rsp	/* rip, rflags */
	push	%r15
	push	%r14
	push	%r13
	push	%r12
	push	%r11
	push	%r10
	push	%r9
	push	%r8
	push	%rdi
	push	%rsi
	push	%rbp
	sub	$8, %rsp	/* rsp: guest RSP lives in the VMCS */
	push	%rbx
	push	%rdx
	push	%rcx
	push	%rax
.endm

.macro POP_GPRS
	pop	%rax
	pop	%rcx
	pop	%rdx
	pop	%rbx
	add	$8, %rsp
	pop	%rbp
	pop	%rsi
	pop	%rdi
	pop	%r8
	pop	%r9
	pop	%r10
	pop	%r11
	pop	%r12
	pop	%r13
	pop	%r14
	pop	%r15
.endm

/*
 * HOST_RIP. Entered by the CPU, not called: RSP = HOST_RSP (16-aligned,
 * the vCPU pointer stored there), interrupts off (RFLAGS = 2, SDM 3C 28.5.3).
 */
SYM_CODE_START(vt_vmexit_stub)
	VT_UNWIND_HINT_UNKNOWN
	ANNOTATE_NOENDBR	/* HOST_RIP: the CPU enters here, no branch does */
	PUSH_FRAME
	mov	%rsp, %rdi
	call	vt_exit_handler
	test	%al, %al
	jz	.Lleave_vmx
	POP_GPRS
	add	$16, %rsp
	vmresume
	/* VMRESUME failed: rebuild the frame and leave VMX instead. */
	PUSH_FRAME
	mov	%rsp, %rdi
	call	vt_resume_failed

/*
 * VMX is off and the C side restored the kernel's state; continue the
 * guest's code at FRAME_RIP with RSP = FRAME_RSP and RFLAGS = FRAME_RFLAGS.
 * RIP and RFLAGS go below the guest's RSP (the kernel has no red zone).
 */
.Lleave_vmx:
	mov	FRAME_RSP(%rsp), %rax
	sub	$16, %rax
	mov	FRAME_RIP(%rsp), %rcx
	mov	%rcx, 8(%rax)
	mov	FRAME_RFLAGS(%rsp), %rcx
	mov	%rcx, (%rax)
	mov	%rax, FRAME_RSP(%rsp)
	POP_GPRS
	/* RSP is now frame + 128; the saved RSP slot is at frame + 32. */
	mov	-96(%rsp), %rsp
	popfq
	VT_RET
SYM_CODE_END(vt_vmexit_stub)
