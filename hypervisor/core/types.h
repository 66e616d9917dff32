/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-width types for the portable core. The typedefs are identical to
 * the kernel's (C11 allows repeating a typedef with the same type), so the
 * same core compiles in the module and, as plain C, in the unit tests.
 */
#ifndef VT_CORE_TYPES_H
#define VT_CORE_TYPES_H

/*
 * The one header from outside the core: the shared uapi ABI
 * (include/uapi/vtice/) is written in <linux/types.h>'s __u64 names, so
 * that header comes first. In the kernel it also supplies bool/true/false;
 * elsewhere the compiler's own <stdbool.h> does.
 */
#include <linux/types.h>
#if !defined(__KERNEL__) && !defined(__cplusplus)
#include <stdbool.h>
#endif

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;
typedef signed short s16;
typedef signed int s32;
typedef signed long long s64;

#ifndef NULL
#define NULL ((void *)0)
#endif
#ifdef __cplusplus
#define VT_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define VT_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#define VT_BIT(n)		(1ull << (n))
#define VT_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define VT_PAGE_SHIFT		12
#define VT_PAGE_SIZE		4096ull
#define VT_PAGES_FOR(bytes)	((u32)(((bytes) + VT_PAGE_SIZE - 1) / VT_PAGE_SIZE))
#define VT_ALIGNED(x, a)	(((x) & ((a) - 1)) == 0)

/*
 * REP STOSB/MOVSB, never a call: VMX root must not run the kernel's
 * memset/memcpy, which a hostile kernel could rewrite (Kbuild). DF is clear
 * in the kernel and in VMX root alike (the ABI; VM exit loads RFLAGS = 2).
 */
static inline void vt_memset(void *dst, int c, unsigned long n)
{
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(c) : "memory");
}

static inline void vt_memcpy(void *dst, const void *src, unsigned long n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

#define VT_READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define VT_LOAD_ACQUIRE(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define VT_STORE_RELEASE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

#endif /* VT_CORE_TYPES_H */
