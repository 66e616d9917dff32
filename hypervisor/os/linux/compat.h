/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels vtice builds against, in one place
 * (docs/machines.md, "Kernels"): Debian's 5.10, 6.1, 6.12 and
 * 7.x, keyed on LINUX_VERSION_CODE or on what a header defines. The rest of
 * os/linux/ uses these names only; nothing here copies kernel code.
 *
 * Included from C and from assembly.
 */
#ifndef VT_OS_LINUX_COMPAT_H
#define VT_OS_LINUX_COMPAT_H

#include <linux/version.h>

/*
 * ENDBR64 at an indirect-branch target (IBT, asm/ibt.h since 5.18): VMX
 * root's IDT entries are reached through gates, which IBT checks.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#include <asm/ibt.h>
#else
#define ENDBR
#endif

#ifdef __ASSEMBLY__
#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>

/* Code the CPU enters with a stack objtool cannot know (6.4 renamed it). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define VT_UNWIND_HINT_UNKNOWN	UNWIND_HINT_UNDEFINED
#else
#define VT_UNWIND_HINT_UNKNOWN	UNWIND_HINT_EMPTY
#endif

/*
 * objtool's annotations, read on IBT kernels (5.18 and later) from the
 * whole linked module: a RET that needs no return thunk (a #define where
 * the retbleed work, 5.19 or its stable backports, has it), and code whose
 * address is taken but that no indirect branch reaches, so it needs no
 * ENDBR (an assembler macro since 5.18). Elsewhere objtool does not read
 * these files (Kbuild): blank.
 */
#ifndef ANNOTATE_UNRET_SAFE
#define ANNOTATE_UNRET_SAFE
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 18, 0)
#define ANNOTATE_NOENDBR
#endif

/* A plain return in VMX root's and the VM-exit stub's assembly. */
#define VT_RET	ANNOTATE_UNRET_SAFE; ret; int3
#endif /* __ASSEMBLY__ */

#ifndef __ASSEMBLY__

#include <linux/module.h>
#include <linux/percpu.h>
#include <asm/msr.h>
#include <asm/processor.h>
/* cpuid_ecx() and the rest live in their own header in recent kernels (7.2; not 6.12). */
#if __has_include(<asm/cpuid/api.h>)
#include <asm/cpuid/api.h>
#endif

/* rdmsrl() and wrmsrl() and their _safe forms are rdmsrq() ... since 6.16. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define vt_kernel_rdmsr(msr, v)		rdmsrq(msr, v)
#define vt_kernel_wrmsr(msr, v)		wrmsrq(msr, v)
#define vt_kernel_rdmsr_safe(msr, p)	rdmsrq_safe(msr, p)
#define vt_kernel_wrmsr_safe(msr, v)	wrmsrq_safe(msr, v)
#else
#define vt_kernel_rdmsr(msr, v)		rdmsrl(msr, v)
#define vt_kernel_wrmsr(msr, v)		wrmsrl(msr, v)
#define vt_kernel_rdmsr_safe(msr, p)	rdmsrl_safe(msr, p)
#define vt_kernel_wrmsr_safe(msr, v)	wrmsrl_safe(msr, v)
#endif

/* Whether the kernel runs with IBT on (CONFIG_X86_KERNEL_IBT, 5.18 and later). */
#ifdef CONFIG_X86_KERNEL_IBT
#define vt_kernel_ibt_on()	cpu_feature_enabled(X86_FEATURE_IBT)
#endif

/*
 * The per-CPU pointer to the running task: current_task, moved into
 * pcpu_hot from 6.2 to 6.14 and out again in 6.15.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0) && LINUX_VERSION_CODE < KERNEL_VERSION(6, 15, 0)
#define vt_current_task_ptr(cpu)	(&per_cpu(pcpu_hot.current_task, cpu))
#else
#define vt_current_task_ptr(cpu)	(&per_cpu(current_task, cpu))
#endif

/*
 * syscore callbacks take a context pointer and are registered through a
 * struct syscore in recent kernels (7.2; not 6.12). No macro tells: Kbuild
 * sets VT_SYSCORE_WITH_DATA by what linux/syscore_ops.h declares.
 */
#ifdef VT_SYSCORE_WITH_DATA
#define VT_SYSCORE_ARG		void *data
#else
#define VT_SYSCORE_ARG		void
#endif

/*
 * A module's memory: one core layout (text, then read-only data, then
 * data) until 6.3; separate allocations per kind since 6.4.
 */
struct vt_module_range {
	unsigned long base, size;
};

/* Its text and read-only data: VT_MODULE_RO_RANGES ranges, some maybe empty. */
#define VT_MODULE_RO_RANGES	2
static inline struct vt_module_range vt_module_ro_range(struct module *mod, unsigned int i)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	enum mod_mem_type type = i == 0 ? MOD_TEXT : MOD_RODATA;

	return (struct vt_module_range){ (unsigned long)mod->mem[type].base, mod->mem[type].size };
#else
	if (i > 0)
		return (struct vt_module_range){ 0, 0 };
	return (struct vt_module_range){ (unsigned long)mod->core_layout.base, mod->core_layout.ro_size };
#endif
}

/* Its init text, freed once it is live. */
static inline struct vt_module_range vt_module_init_text(struct module *mod)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return (struct vt_module_range){ (unsigned long)mod->mem[MOD_INIT_TEXT].base, mod->mem[MOD_INIT_TEXT].size };
#else
	return (struct vt_module_range){ (unsigned long)mod->init_layout.base, mod->init_layout.text_size };
#endif
}

/* Everything the module holds at run time: VT_MODULE_RANGES ranges. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define VT_MODULE_RANGES	4
static inline struct vt_module_range vt_module_range(struct module *mod, unsigned int i)
{
	static const enum mod_mem_type types[VT_MODULE_RANGES] = {
		MOD_TEXT, MOD_DATA, MOD_RODATA, MOD_RO_AFTER_INIT
	};

	return (struct vt_module_range){ (unsigned long)mod->mem[types[i]].base, mod->mem[types[i]].size };
}
#else
#define VT_MODULE_RANGES	1
static inline struct vt_module_range vt_module_range(struct module *mod, unsigned int i)
{
	return (struct vt_module_range){ (unsigned long)mod->core_layout.base, mod->core_layout.size };
}
#endif

#endif /* __ASSEMBLY__ */
#endif /* VT_OS_LINUX_COMPAT_H */
