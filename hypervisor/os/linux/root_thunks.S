/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMX root's own retpoline and return thunks.
 *
 * Root's C code is compiled like the rest of the kernel, with the kernel's
 * retpoline and return-thunk options, and its references to the kernel's
 * thunks (__x86_indirect_thunk_<reg>, __x86_return_thunk) are renamed to
 * these (Kbuild, root-thunks.syms). So root never runs the kernel's
 * thunks, which a hostile kernel could rewrite; the kernel never patches
 * root's code at load (objtool records only the kernel's thunks' sites);
 * and objtool, which on a kernel with IBT reads the whole linked module,
 * sees ordinary calls to ordinary, annotated functions.
 *
 * Both are the classic return-stack trick (Intel's "Retpoline: A Branch
 * Target Injection Mitigation"): the speculative path is caught in a
 * PAUSE/LFENCE loop and the architectural one returns to the target.
 */
#include <linux/linkage.h>
#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>
#include "compat.h"

	.text

/* An indirect call or jump through \reg, as `call *%\reg` would. */
.macro VT_INDIRECT_THUNK reg
SYM_FUNC_START(vt_root_indirect_thunk_\reg)
	ANNOTATE_INTRA_FUNCTION_CALL
	call	.Lset_target_\reg
.Lcapture_\reg:
	UNWIND_HINT_FUNC
	pause
	lfence
	jmp	.Lcapture_\reg
.Lset_target_\reg:
	mov	%\reg, (%rsp)
	UNWIND_HINT_FUNC
	ANNOTATE_UNRET_SAFE
	ret
	int3
SYM_FUNC_END(vt_root_indirect_thunk_\reg)
.endm

VT_INDIRECT_THUNK rax
VT_INDIRECT_THUNK rbx
VT_INDIRECT_THUNK rcx
VT_INDIRECT_THUNK rdx
VT_INDIRECT_THUNK rsi
VT_INDIRECT_THUNK rdi
VT_INDIRECT_THUNK rbp
VT_INDIRECT_THUNK r8
VT_INDIRECT_THUNK r9
VT_INDIRECT_THUNK r10
VT_INDIRECT_THUNK r11
VT_INDIRECT_THUNK r12
VT_INDIRECT_THUNK r13
VT_INDIRECT_THUNK r14
VT_INDIRECT_THUNK r15

/* A function's return, reached by a jump from its epilogue. */
SYM_FUNC_START(vt_root_return_thunk)
	ANNOTATE_INTRA_FUNCTION_CALL
	call	.Ldrop_capture
.Lreturn_capture:
	UNWIND_HINT_FUNC
	pause
	lfence
	jmp	.Lreturn_capture
.Ldrop_capture:
	lea	8(%rsp), %rsp
	UNWIND_HINT_FUNC
	ANNOTATE_UNRET_SAFE
	ret
	int3
SYM_FUNC_END(vt_root_return_thunk)
