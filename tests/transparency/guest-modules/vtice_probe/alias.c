// SPDX-License-Identifier: GPL-2.0
/*
 * The pages of peek= seen through a second, read-only mapping of their
 * own: what a kernel does to read a page behind the address the page is
 * known by. A hypervisor that hides a breakpoint or watches a page in EPT
 * does so per physical page, so the alias must read the same bytes as the
 * address itself, and a write through it must take the guest's own #PF
 * (the guest's paging refuses the write before its guest-physical access
 * goes through EPT: SDM Vol. 3C 29.3), leaving its address in CR2 as on a
 * CPU without VMX.
 */
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/special_insns.h>
#include "probe.h"

static void *alias[OBS_MAX_PEEK];
static unsigned int nr_alias;

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

int obs_alias_prepare(const unsigned long *peek, unsigned int nr)
{
	for (nr_alias = 0; nr_alias < nr && nr_alias < OBS_MAX_PEEK; nr_alias++) {
		struct page *page = page_of(peek[nr_alias]);

		if (!page)
			return -EINVAL;
		alias[nr_alias] = vmap(&page, 1, VM_MAP, PAGE_KERNEL_RO);
		if (!alias[nr_alias])
			return -ENOMEM;
	}
	return 0;
}

void obs_alias_release(void)
{
	while (nr_alias)
		vunmap(alias[--nr_alias]);
}

/* sub 0: 16 bytes read (up to the page's end); 1: one of them written back. */
void obs_alias(unsigned long addr, u32 which, u32 sub, struct obs_result *r)
{
	unsigned long off = offset_in_page(addr);
	size_t len = min_t(size_t, sizeof(r->v), PAGE_SIZE - off);
	char byte, *at;

	if (which >= nr_alias)
		return;
	at = (char *)alias[which] + off;
	if (sub == 0) {
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

/* The bare run's answers, for the rig to hold against the peek's own bytes. */
void obs_alias_log(unsigned long addr, u32 sub, const struct obs_result *r)
{
	if (sub == 0 && !r->fault)
		pr_info("vtice_probe: bare alias %lx read %16phN\n", addr, r->v);
	else if (sub == 0)
		pr_info("vtice_probe: bare alias %lx read fault %u\n", addr, r->fault - 1);
	else
		pr_info("vtice_probe: bare alias %lx write fault %u cr2 %+lld\n", addr,
			r->fault ? r->fault - 1 : 0, (s64)r->v[0]);
}
