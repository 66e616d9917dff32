// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of peek= seen through a second, read-only mapping of their
 * own: what a kernel does to read a page behind the address the page is
 * known by. A hypervisor that hides a breakpoint or watches a page in EPT
 * does so per physical page, so the alias must read the same bytes as the
 * address itself, and a write through it must take the guest's own #PF
 * (the guest's paging refuses the write before its guest-physical access
 * goes through EPT: SDM Vol. 3C 29.3), leaving its address in CR2 as on a
 * CPU without VMX. So must 8 bytes read or written across the page's end
 * into an unmapped page: a write there is the one access a hypervisor
 * watching the page in EPT may let reach the first page before the guest's
 * #PF on the second.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/special_insns.h>
#include "probe.h"

static void *alias[OBS_MAX_PEEK];	/* read-only */
static void *alias_rw[OBS_MAX_PEEK];	/* writable: only straddling writes, which fault */
static unsigned int nr_alias;
/*
 * Alias 0 has a page table of its own, so the rig can watch that page in
 * EPT without every kernel stack walking through it: it is the first page
 * of a 2 MiB-aligned range inside walk_area, a vmap of WALK_PAGES copies of
 * its page (4 MiB always hold one such range, and no other mapping shares
 * a range inside a vmap area), with the page after it unmapped again.
 * walk_pte is that page's PTE, in the direct map. Each straddling read
 * through alias 0 walks to it (a translation that is not present is never
 * cached: SDM Vol. 3A 4.10.2.3): walks counts them in the current state.
 */
#define WALK_PAGES (2 * PTRS_PER_PTE)
static void *walk_area;
static unsigned long walk_pte;
static u64 walks;

/* The kernel image, the direct map or vmalloc space; NULL elsewhere. */
static struct page *page_of(unsigned long addr)
{
	if (is_vmalloc_addr((void *)addr))
		return vmalloc_to_page((void *)addr);
	return virt_addr_valid(addr) ? virt_to_page((void *)addr) : NULL;
}

static u32 try_write_byte(char *at, char byte)
{
	unsigned long ax = 0;
	u32 done = 0;

	asm volatile(TRY("movb %[b], %[m]") : "+a"(ax), [done] "+r"(done), [m] "=m"(*at)
		     : [b] "q"(byte) : "memory");
	return FAULT(ax, done);
}

static u32 try_read_u64(const u64 *at, u64 *val)
{
	unsigned long ax = 0;
	u32 done = 0;

	asm volatile(TRY("movq %[m], %[v]") : "+a"(ax), [done] "+r"(done), [v] "=r"(*val)
		     : [m] "m"(*at) : "memory");
	return FAULT(ax, done);
}

static u32 try_write_u64(u64 *at, u64 val)
{
	unsigned long ax = 0;
	u32 done = 0;

	asm volatile(TRY("movq %[v], %[m]") : "+a"(ax), [done] "+r"(done), [m] "=m"(*at)
		     : [v] "r"(val) : "memory");
	return FAULT(ax, done);
}

static void invlpg_here(void *addr)
{
	asm volatile("invlpg (%0)" : : "r"(addr) : "memory");
}

void obs_invlpg_everywhere(unsigned long addr)
{
	on_each_cpu(invlpg_here, (void *)addr, 1);
}

/* Alias 0 in its own page table (walk_area), its next page unmapped; NULL if that failed. */
static void *map_walk_alias(struct page *page)
{
	struct page **pages = kmalloc_array(WALK_PAGES, sizeof(*pages), GFP_KERNEL);
	unsigned long at, hole;
	unsigned int i, level;
	pte_t *pte;

	if (!pages)
		return NULL;
	for (i = 0; i < WALK_PAGES; i++)
		pages[i] = page;
	walk_area = vmap(pages, WALK_PAGES, VM_MAP, PAGE_KERNEL_RO);
	kfree(pages);
	if (!walk_area)
		return NULL;
	at = ALIGN((unsigned long)walk_area, PMD_SIZE);
	hole = at + PAGE_SIZE;
	pte = lookup_address(hole, &level);
	if (!pte || level != PG_LEVEL_4K)
		return NULL;
	pte_clear(&init_mm, hole, pte);
	obs_invlpg_everywhere(hole);
	walk_pte = (unsigned long)pte;
	pr_info("vtice_probe: walk pte %lx\n", walk_pte);
	return (void *)at;
}

/*
 * vmap leaves the page after each mapping unmapped (a guard page unless
 * VM_NO_GUARD), so 8 bytes at the page's last 4 run into it; alias 0's
 * next page is unmapped by map_walk_alias.
 */
int obs_alias_prepare(const unsigned long *peek, unsigned int nr)
{
	for (nr_alias = 0; nr_alias < nr && nr_alias < OBS_MAX_PEEK; nr_alias++) {
		struct page *page = page_of(peek[nr_alias]);

		if (!page)
			return -EINVAL;
		alias[nr_alias] = nr_alias ? vmap(&page, 1, VM_MAP, PAGE_KERNEL_RO) : map_walk_alias(page);
		alias_rw[nr_alias] = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
		if (!alias[nr_alias] || !alias_rw[nr_alias]) {
			nr_alias++;
			return -ENOMEM;
		}
	}
	return 0;
}

void obs_alias_release(void)
{
	while (nr_alias) {
		nr_alias--;
		if (alias[nr_alias] && nr_alias)
			vunmap(alias[nr_alias]);
		if (alias_rw[nr_alias])
			vunmap(alias_rw[nr_alias]);
		alias[nr_alias] = alias_rw[nr_alias] = NULL;
	}
	if (walk_area)
		vunmap(walk_area);	/* the PTE cleared by hand is none: vunmap skips it */
	walk_area = NULL;
	walk_pte = 0;
}

/*
 * 8 bytes across the page's end: the guard page faults (#PF, CR2 its
 * first byte, 4 past `at`), and a faulting instruction writes nothing
 * (SDM Vol. 3A 6.5: a fault leaves the state as before it). Should a
 * write go through after all, it writes the page's own 4 bytes back.
 */
static void obs_alias_straddle(u32 which, u32 sub, struct obs_result *r)
{
	unsigned long end = (unsigned long)alias[which] + PAGE_SIZE - 4;
	u64 own = 0, *at;

	if (sub == ALIAS_STRADDLE_READ) {
		walks += which == 0;
		r->fault = try_read_u64((const u64 *)end, &r->v[1]);
		at = (u64 *)end;
	} else {
		if (copy_from_kernel_nofault(&own, (void *)end, 4))
			return;
		at = (u64 *)((unsigned long)alias_rw[which] + PAGE_SIZE - 4);
		r->fault = try_write_u64(at, own);
	}
	if (r->fault)
		r->v[0] = read_cr2() - (unsigned long)at;
}

/* sub enum obs_alias: read 16 bytes (up to the page's end), write one back, or straddle. */
void obs_alias(unsigned long addr, u32 which, u32 sub, struct obs_result *r)
{
	unsigned long off = offset_in_page(addr);
	size_t len = min_t(size_t, sizeof(r->v), PAGE_SIZE - off);
	char byte, *at;

	if (which >= nr_alias)
		return;
	if (sub == ALIAS_STRADDLE_READ || sub == ALIAS_STRADDLE_WRITE) {
		obs_alias_straddle(which, sub, r);
		return;
	}
	at = (char *)alias[which] + off;
	if (sub == ALIAS_READ) {
		if (copy_from_kernel_nofault(r->v, at, len))
			r->fault = 14 + 1;
		return;
	}
	if (copy_from_kernel_nofault(&byte, at, 1))
		return;
	r->fault = try_write_byte(at, byte);	/* if it goes through: the same byte */
	if (r->fault)
		r->v[0] = read_cr2() - (unsigned long)at;
}

const char *obs_alias_name(u32 sub)
{
	static const char *const names[ALIAS_KINDS] = {
		"read", "write", "straddle-read", "straddle-write",
	};

	return sub < ALIAS_KINDS ? names[sub] : "?";
}

/* The bare run's answers, for the rig to hold against the peek's own bytes and the SDM. */
void obs_alias_log(unsigned long addr, u32 sub, const struct obs_result *r)
{
	if (sub == ALIAS_READ && !r->fault)
		pr_info("vtice_probe: bare alias %lx read %16phN\n", addr, r->v);
	else if (sub == ALIAS_READ)
		pr_info("vtice_probe: bare alias %lx read fault %u\n", addr, r->fault - 1);
	else
		pr_info("vtice_probe: bare alias %lx %s fault %u cr2 %+lld\n", addr, obs_alias_name(sub),
			r->fault ? r->fault - 1 : 0, (s64)r->v[0]);
}

/* Around a state's run: how many of its page walks read the PTE at walk_pte. */
void obs_alias_walks_begin(void)
{
	walks = 0;
}

void obs_alias_walks_log(const char *state)
{
	if (walk_pte)
		pr_info("vtice_probe: state %s: %llu walks read the pte at %lx\n", state, walks, walk_pte);
}
