// SPDX-License-Identifier: GPL-2.0
/*
 * stealth=1 (docs/transparency.md, "Stealth load"): the last step of a
 * load, once every online CPU runs under the hypervisor. Afterwards the
 * kernel holds nothing that names vtice or that it could use to reach it:
 *  - no module list entry (lsmod, /proc/modules), so no /proc/kallsyms
 *    lines either (it walks that list), and the module's own symbol table
 *    is cleared, so no %pS of one of its addresses names a function;
 *  - no /sys/module/vtice, no CPU hotplug state (module.c adds neither the
 *    device nor the power notifiers, nor prints a line);
 *  - VTICE_VMCALL_STEALTH on every CPU: the guest sees the shield's decoy
 *    where it saw copies of the module's code, read-only data and the
 *    hypervisor's state (the VMCALL key with it), and no VMCALL is
 *    honoured any more. The debug stub is the only way in.
 *
 * Everything here is __init: after the VMCALL the guest must never run a
 * byte of the module's core text, whose frames then show the decoy. Only
 * this code (freed by the kernel once init returns) and the kernel's own
 * run from here on, which is also why the VMCALL is written out here
 * rather than taken from intrin.h.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/smp.h>
#include <linux/string.h>

#include <vtice/vmcall.h>
#include "vtice_linux.h"

struct vt_stealth_call {
	u64 key;
	u64 cpus;		/* CPUs that make the call: the last one seals */
	atomic_t sealed;
};

static void __init vt_stealth_on_cpu(void *arg)
{
	struct vt_stealth_call *call = arg;
	u64 rax = VTICE_VMCALL_STEALTH, rcx = call->key, rdx = call->cpus;

	asm volatile("vmcall" : "+a"(rax), "+c"(rcx), "+d"(rdx) :: "memory", "cc");
	if (rax == VTICE_VMCALL_OK && rdx == 1)
		atomic_set(&call->sealed, 1);
}

#ifdef CONFIG_KALLSYMS
/*
 * The symbol table the kernel switches the module to once init returns
 * (mod->core_kallsyms): nobody reads it before then, so it is cleared
 * in place, names and all.
 */
static void __init vt_stealth_clear_symbols(struct mod_kallsyms *syms)
{
	unsigned int i, n = syms->num_symtab;
	size_t end = 0;

	for (i = 0; i < n; i++) {
		const char *name = syms->strtab + syms->symtab[i].st_name;

		end = max(end, (size_t)(name - syms->strtab) + strlen(name) + 1);
	}
	syms->num_symtab = 0;
	memset(syms->strtab, 0, end);
	memset(syms->symtab, 0, n * sizeof(*syms->symtab));
	if (syms->typetab)
		memset(syms->typetab, 0, n);
}
#endif

/*
 * Off the module list and out of sysfs. The kernel changes its module
 * list under module_mutex, which modules cannot take: a module loaded or
 * removed at this very moment races with this list_del_rcu (as with any
 * module that unlists itself), one more reason to load vtice before the
 * rest.
 */
static void __init vt_stealth_unlist(void)
{
	struct module *mod = THIS_MODULE;

	list_del_rcu(&mod->list);
	kobject_del(&mod->mkobj.kobj);
#ifdef CONFIG_KALLSYMS
	vt_stealth_clear_symbols(&mod->core_kallsyms);
#endif
}

/*
 * The kernel rewrites call sites of its static calls in every module that
 * has them (preempt_enable()'s preempt_schedule, when the preemption mode
 * changes), and checks each site's opcode first: in text that shows the
 * decoy that check fails with a BUG. The sites list ends where the count
 * says; with none, the kernel leaves the module's text alone (its code is
 * run only by VMX root from here on, which calls no kernel function).
 */
static void __init vt_stealth_stop_text_patching(void)
{
#ifdef CONFIG_HAVE_STATIC_CALL_INLINE
	THIS_MODULE->num_static_call_sites = 0;
#endif
}

void __init vt_linux_stealth(enum cpuhp_state hp_state)
{
	struct vt_stealth_call call = { .key = vt_mod.hv->key, .sealed = ATOMIC_INIT(0) };

	/*
	 * CPUs keep going off and on line under the hypervisor (a CPU it runs
	 * comes back through INIT and SIPI, which it handles); one that was
	 * never online at load stays without it.
	 */
	cpuhp_remove_state_nocalls(hp_state);
	vt_stealth_unlist();
	vt_stealth_stop_text_patching();
	cpus_read_lock();
	call.cpus = num_online_cpus();
	on_each_cpu(vt_stealth_on_cpu, &call, 1);
	cpus_read_unlock();
	if (!atomic_read(&call.sealed))
		pr_err("stealth: not every CPU took the stealth call; the VMCALL key still opens vtice\n");
	/*
	 * The key on this stack would outlive the call in the freed stack's
	 * page, where a scan of RAM finds it (hv.stealth-key did, once).
	 */
	memzero_explicit(&call.key, sizeof(call.key));
}
