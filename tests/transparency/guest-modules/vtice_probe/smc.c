// SPDX-License-Identifier: GPL-2.0
/*
 * Self-modifying code: the prober's own code page, mapped to run
 * (read-only; vmap maps no-execute, so its PTE is made executable by hand)
 * and written through the kernel's direct map, the way
 * text_poke writes kernel text through a second mapping. Each observation
 * writes a new immediate into `mov $imm, %eax; ret`, serializes, and calls
 * it: the new bytes must run (SDM Vol. 3A 8.1.3, cross-modifying code on
 * one processor). The rig (hvstub) sets a hidden breakpoint on the page's
 * first instruction, which nothing calls: vtice then runs the page from a
 * copy with INT3 in it and lets reads and writes see the original, so
 * every write here must reach the copy too, and a read of the breakpoint's
 * byte must give what the kernel wrote there.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <asm/sync_core.h>
#include "probe.h"

/* The page: ENDBR64; RET where the breakpoint goes, INT3 elsewhere, and the patched function at SMC_SLOT. */
#define SMC_SLOT	0x800
#define ENDBR64		0xf3, 0x0f, 0x1e, 0xfa	/* an indirect call's target under IBT */
#define MOV_EAX		0xb8
#define RET		0xc3
#define INT3		0xcc

static struct page *smc_page;
static u8 *smc_code;	/* the mapping that runs it */

int obs_smc_prepare(void)
{
	static const u8 entry[] = { ENDBR64, RET };
	static const u8 slot[] = { ENDBR64, MOV_EAX, 0, 0, 0, 0, RET };
	unsigned int level;
	pte_t *pte;
	u8 *data;

	smc_page = alloc_page(GFP_KERNEL);
	if (!smc_page)
		return -ENOMEM;
	data = page_address(smc_page);
	memset(data, INT3, PAGE_SIZE);
	memcpy(data, entry, sizeof(entry));
	memcpy(data + SMC_SLOT, slot, sizeof(slot));
	smc_code = vmap(&smc_page, 1, VM_MAP, PAGE_KERNEL_RO);
	if (!smc_code)
		return -ENOMEM;
	pte = lookup_address((unsigned long)smc_code, &level);
	if (!pte || level != PG_LEVEL_4K)
		return -EFAULT;
	set_pte(pte, pte_mkexec(*pte));
	obs_invlpg_everywhere((unsigned long)smc_code);
	pr_info("vtice_probe: smc page %lx\n", (unsigned long)smc_code);
	return 0;
}

void obs_smc_release(void)
{
	if (smc_code)
		vunmap(smc_code);
	if (smc_page)
		__free_page(smc_page);
	smc_code = NULL;
	smc_page = NULL;
}

/* v[0]: what the patched function returned; v[1]: the first byte, read through the mapping that runs it. */
void obs_smc(u32 value, struct obs_result *r)
{
	u8 *imm = (u8 *)page_address(smc_page) + SMC_SLOT + 5;	/* past ENDBR64 and the opcode */
	u32 (*patched)(void) = (u32 (*)(void))(smc_code + SMC_SLOT);

	memcpy(imm, &value, sizeof(value));
	sync_core();
	r->v[0] = patched();
	r->v[1] = READ_ONCE(smc_code[0]);
}

void obs_smc_log(u32 value, const struct obs_result *r)
{
	pr_info("vtice_probe: bare smc: wrote 0x%x ran 0x%llx byte 0x%llx\n", value, r->v[0], r->v[1]);
}
