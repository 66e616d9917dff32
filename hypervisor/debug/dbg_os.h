/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the debugger needs from its OS layer beyond core/os.h
 * (os/linux/stub_os.c in the module, the fake OS in tests). All are safe
 * to call in VMX root with interrupts off.
 */
#ifndef VT_DEBUG_DBG_OS_H
#define VT_DEBUG_DBG_OS_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Send an NMI to that CPU (its interrupt controller, no locks taken). */
void vt_os_send_nmi(u32 cpu);
/* TSC cycles per millisecond, as the kernel calibrated it. */
u64 vt_os_tsc_khz(void);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_DBG_OS_H */
