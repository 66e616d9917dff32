// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Bochs rig's hvshield scenario: a hostile kernel at
 * CPL 0 that goes after the hypervisor's memory. It finds everything from
 * vtice's global state (vt_mod=, from /proc/kallsyms) and vtice's source,
 * as an attacker with the module's source would:
 *
 *   mode=probe  reads each kind of hypervisor page and prints one line per
 *               kind: "visible" (it holds the hypervisor's data) or
 *               "hidden" (it reads as the decoy's zeros);
 *   mode=write  also overwrites them all: 0xa5 over every CPU's host stack,
 *               VMCS, VMXON region and MSR bitmap, zeros over the host
 *               top-level table and the EPT's top table (a remap of all
 *               memory), and int3 over the VM-exit entry point (text=).
 *               It also aims VMX root at its own data: the callbacks
 *               pointer at a table of bogus functions, and every CPU's
 *               ring at a trap buffer in this module; at unload it says
 *               whether VMX root wrote records into the trap.
 *   mode=state  zeroes the first page of each of vtice's debugger state
 *               variables named in state= (vt_hooks, stub, st: the hooks'
 *               tables, the stub, the all-stop), with debug_port set.
 *   mode=tables rewrites the kernel's own page-table entry for the page of
 *               the VM-exit entry point (text=) to map a copy of that page
 *               with int3 over the entry point, as a kernel that owns its
 *               page tables can; every VM exit runs that code, so VMX root
 *               reading the kernel's tables would die at the next one. The
 *               rest of the page (vtice's guest-side code shares it) stays
 *               as it was. Unloading this module puts the entry back.
 *
 * Without the shield the write mode takes the machine down at the next VM
 * exit; with it, the hypervisor must not notice (docs/hypervisor.md).
 */
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/smp.h>
#include <linux/vmalloc.h>
#include <asm/pgtable.h>
#include <asm/tlbflush.h>

#include "vtice_linux.h"

static unsigned long vt_mod_addr;
module_param(vt_mod_addr, ulong, 0444);
MODULE_PARM_DESC(vt_mod_addr, "address of vtice's vt_mod, from /proc/kallsyms");

static unsigned long text;
module_param(text, ulong, 0444);
MODULE_PARM_DESC(text, "a function of vtice's that only VMX root runs (vt_vmexit_stub)");

static char *mode = "probe";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "probe (read only), write, state or tables");

static unsigned long state[8];
static int nr_state;
module_param_array(state, ulong, &nr_state, 0444);
MODULE_PARM_DESC(state, "addresses of vtice's debugger state to zero (mode=state)");

/*
 * Each kind holds nonzero bytes while in use (a revision identifier, saved
 * registers, table entries, intercept bits); the decoy reads as zeros
 * until someone writes it, which the scenario does only after probing.
 */
static void probe(const char *kind, const void *p, size_t len)
{
	const u8 *b = p;
	size_t i, nonzero = 0;

	for (i = 0; i < len; i++)
		nonzero += b[i] != 0;
	pr_info("vtice_attack: probe %s: %s (%zu of %zu bytes nonzero)\n", kind,
		nonzero ? "visible" : "hidden", nonzero, len);
}

/* Never called by anyone honest: VMX root jumping here is the attack working. */
static const struct vt_callbacks bogus_callbacks = {
	.exception = (void *)0xdead0001, .ept_violation = (void *)0xdead0002,
	.mtf = (void *)0xdead0003, .vmcall = (void *)0xdead0004,
	.nmi = (void *)0xdead0005, .pre_entry = (void *)0xdead0006,
};
static struct vtice_record trap[4];

static void attack_text(void)
{
	struct page *page;
	u8 *alias;

	if (!text)
		return;
	page = vmalloc_to_page((void *)text);
	alias = page ? vmap(&page, 1, VM_MAP, PAGE_KERNEL) : NULL;
	if (!alias) {
		pr_info("vtice_attack: no writable alias of the VM-exit entry\n");
		return;
	}
	memset(alias + offset_in_page(text), 0xcc, 16);
	vunmap(alias);
	pr_info("vtice_attack: wrote int3 over the VM-exit entry point\n");
}

static void attack_cpu(struct vt_vcpu *v, bool write)
{
	probe("host stack", v->stack, VT_HOST_STACK_PAGES * PAGE_SIZE);
	probe("VMCS", v->vmcs, PAGE_SIZE);
	probe("VMXON region", v->vmxon_region, PAGE_SIZE);
	probe("MSR bitmap", v->msr_bitmap, PAGE_SIZE);
	if (!write)
		return;
	memset(v->stack, 0xa5, VT_HOST_STACK_PAGES * PAGE_SIZE);
	memset(v->vmcs, 0xa5, PAGE_SIZE);
	memset(v->vmxon_region, 0xa5, PAGE_SIZE);
	memset(v->msr_bitmap, 0xff, PAGE_SIZE);
	WRITE_ONCE(v->ring.records, trap);
	WRITE_ONCE(v->ring.nr_records, ARRAY_SIZE(trap));
}

static pte_t *text_pte;
static pte_t text_orig;
static struct page *int3_page;

static void flush_this_cpu(void *unused)
{
	__flush_tlb_all();
}

static void set_text_pte(pte_t pte)
{
	set_pte(text_pte, pte);
	on_each_cpu(flush_this_cpu, NULL, 1);
}

static int attack_tables(void)
{
	unsigned int level;

	text_pte = text ? lookup_address(text, &level) : NULL;
	if (!text_pte || level != PG_LEVEL_4K) {
		pr_info("vtice_attack: no 4 KiB kernel PTE for the VM-exit entry point\n");
		text_pte = NULL;
		return -ENOENT;
	}
	int3_page = alloc_page(GFP_KERNEL);
	if (!int3_page) {
		text_pte = NULL;
		return -ENOMEM;
	}
	memcpy(page_address(int3_page), (void *)(text & PAGE_MASK), PAGE_SIZE);
	memset(page_address(int3_page) + offset_in_page(text), 0xcc, 16);
	text_orig = *text_pte;
	set_text_pte(pfn_pte(page_to_pfn(int3_page), PAGE_KERNEL_ROX));
	pr_info("vtice_attack: the kernel's PTE for the VM-exit entry point now maps a copy with int3 there; still running\n");
	return 0;
}

static int __init vtice_attack_init(void)
{
	struct vt_module *m = (struct vt_module *)vt_mod_addr;
	bool write = !strcmp(mode, "write");
	unsigned int cpu, n = 0;

	if (!strcmp(mode, "tables"))
		return attack_tables();
	if (!strcmp(mode, "state")) {
		for (n = 0; n < nr_state; n++)
			memset((void *)state[n], 0, PAGE_SIZE);
		pr_info("vtice_attack: zeroed %u pages of the debugger's state; still running\n", n);
		return 0;
	}
	if (!m || (!write && strcmp(mode, "probe")))
		return -EINVAL;
	probe("EPT top table", m->hv->ept.pml4, PAGE_SIZE);
	probe("host top-level table", m->hv->host_pml4, PAGE_SIZE);
	for_each_online_cpu(cpu) {
		struct vt_vcpu *v = READ_ONCE(m->vcpus[cpu]);

		if (v) {
			attack_cpu(v, write);
			n++;
		}
	}
	if (write) {
		memset(m->hv->host_pml4, 0, PAGE_SIZE);
		memset(m->hv->ept.pml4, 0, PAGE_SIZE);
		WRITE_ONCE(m->hv->cb, &bogus_callbacks);
		attack_text();
	}
	pr_info("vtice_attack: %s done on %u CPUs; still running\n", mode, n);
	return 0;
}

static void __exit vtice_attack_exit(void)
{
	if (text_pte) {
		set_text_pte(text_orig);
		__free_page(int3_page);
		pr_info("vtice_attack: the kernel's PTE for the VM-exit entry point is back\n");
	}
	if (!strcmp(mode, "write"))
		pr_info("vtice_attack: ring records written into the trap: %s\n",
			memchr_inv(trap, 0, sizeof(trap)) ? "yes" : "none");
}

module_init(vtice_attack_init);
module_exit(vtice_attack_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vtice test: a CPL-0 attacker on the hypervisor's memory");
