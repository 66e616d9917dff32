/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the debugger needs from its OS layer beyond core/os.h
 * (os/linux/stub_os.c in the module, the fake OS in tests). At load only:
 * VMX root runs none of the kernel's code (docs/hypervisor.md).
 */
#ifndef VT_DEBUG_DBG_OS_H
#define VT_DEBUG_DBG_OS_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TSC cycles per millisecond, as the kernel calibrated it. */
u64 vt_os_tsc_khz(void);
/*
 * Give the kernel a copy of the module's own pages [p, p + bytes) through
 * the shield (core/shield.h), at load; p and bytes are page multiples.
 */
int vt_os_shield_image(const void *p, u64 bytes);

/*
 * State that only VMX root uses once the module is loaded (the hooks, the
 * stub, the all-stop): on whole pages of its own (4 KiB-aligned types have
 * page-multiple sizes), so vt_os_shield_image() can give the kernel a copy
 * of exactly those pages, and VMX root's pointers stay out of its reach.
 */
#define VT_ROOT_STATE_TYPE	__attribute__((aligned(4096)))
#define VT_ROOT_STATE		__attribute__((section(".bss.vtice_root")))

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_DBG_OS_H */
