/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small interface the portable core needs from its OS layer
 * (os/linux/os_linux.c in the module, tests/hypervisor/fake_os.cpp in the
 * unit tests). Nothing else in the core knows which OS it runs on.
 */
#ifndef VT_CORE_OS_H
#define VT_CORE_OS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zeroed, page-aligned, physically contiguous; may sleep. NULL on failure. */
void *vt_os_alloc_pages(u32 count);
void vt_os_free_pages(void *p, u32 count);
u64 vt_os_virt_to_phys(const void *p);
void *vt_os_phys_to_virt(u64 pa);
u64 vt_os_random_u64(void);
/*
 * Reload TR after leaving VMX: a VM exit leaves TR's limit at 0x67 (SDM
 * Vol. 3C 28.5.2), and only the OS knows its writable GDT alias for
 * clearing the busy bit before LTR. Called right after VMXOFF, with
 * interrupts off and the kernel's GS base restored.
 */
void vt_os_reload_tr(void);
/*
 * RDMSR/WRMSR that report #GP (-VT_EIO) instead of taking it, in the OS's
 * context (its exception fixup table) and in VMX root (root_idt.c finds the
 * same pairs): the OS layer provides them (os/linux/root_entry.S).
 */
int vt_rdmsr_safe(u32 msr, u64 *value);
int vt_wrmsr_safe(u32 msr, u64 value);

#define VT_LOG_ERR	3
#define VT_LOG_WARN	4
#define VT_LOG_INFO	6
#define VT_LOG_DEBUG	7
void vt_os_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#define vt_err(...)	vt_os_log(VT_LOG_ERR, __VA_ARGS__)
#define vt_warn(...)	vt_os_log(VT_LOG_WARN, __VA_ARGS__)
#define vt_info(...)	vt_os_log(VT_LOG_INFO, __VA_ARGS__)
#define vt_dbg(...)	vt_os_log(VT_LOG_DEBUG, __VA_ARGS__)

/* Errors the core returns: negative, with Linux's errno values. */
#define VT_ENOENT	2
#define VT_EIO		5
#define VT_EAGAIN	11
#define VT_EACCES	13
#define VT_EFAULT	14
#define VT_ENOMEM	12
#define VT_EBUSY	16
#define VT_ENODEV	19
#define VT_EINVAL	22
#define VT_ENOSPC	28
#define VT_ENOSYS	38
#define VT_EOPNOTSUPP	95

#endif /* VT_CORE_OS_H */
