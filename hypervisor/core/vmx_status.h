/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a VMX instruction wrapper returns (intrin.h): success, VMfailInvalid
 * or VMfailValid from CF and ZF (SDM Vol. 3C 31.2 "Conventions"), and for
 * VMXON, which the OS layer runs with its exception fixup, a fault. Apart
 * from intrin.h so that the OS layer can use it beside its own headers.
 */
#ifndef VT_CORE_VMX_STATUS_H
#define VT_CORE_VMX_STATUS_H

#define VT_VMX_OK		0
#define VT_VMX_FAIL_INVALID	1	/* CF=1: no current VMCS / bad operand */
#define VT_VMX_FAIL_VALID	2	/* ZF=1: reason in VM_INSTRUCTION_ERROR */
#define VT_VMX_FAULT		3	/* VMXON faulted (#GP, #UD): VMX held below the kernel, or absent */
#define VT_VMX_STATUS(cf, zf)	((cf) ? VT_VMX_FAIL_INVALID : (zf) ? VT_VMX_FAIL_VALID : VT_VMX_OK)

#endif /* VT_CORE_VMX_STATUS_H */
