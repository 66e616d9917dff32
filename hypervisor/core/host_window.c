// SPDX-License-Identifier: GPL-2.0
/*
 * A private window onto physical memory for VMX root. The debugger reads
 * and writes guest memory by physical address; going through the kernel's
 * direct map would fault in VMX root wherever the kernel has unmapped or
 * split a page (secretmem, debug_pagealloc, KFENCE), and a fault there is
 * fatal. Instead, an empty top-level entry of the host page table (root's
 * own, host_pt.h) points at a private chain of tables whose
 * last level has one 4 KiB slot per CPU, remapped on demand.
 *
 * Paging structures: SDM Vol. 3A 4.5 (4-level and 5-level paging).
 */
#include "exit.h"
#include "host_pt.h"
#include "intrin.h"
#include "os.h"

/* Canonical address of top-level slot i: shift 39 (PML4) or 48 (PML5). */
static u64 vt_window_va(u32 slot, bool la57)
{
	u64 va = (u64)slot << (la57 ? 48 : 39);

	return va | (la57 ? 0xff00000000000000ull : 0xffff000000000000ull);
}

/*
 * A slot the kernel leaves empty, so no range root mirrors from the kernel
 * lands there (host_pt.h): the guard hole (slot 256) is left to
 * hypervisors; else any empty slot.
 */
static int vt_window_find_slot(const u64 *top, const u64 *kernel_top)
{
	u32 i;

	for (i = 256; i < 512; i++)
		if (!top[i] && !kernel_top[i])
			return (int)i;
	return -1;
}

void vt_window_fini(struct vt_host_window *w)
{
	u32 i;

	for (i = 0; i < VT_ARRAY_SIZE(w->tables); i++)
		if (w->tables[i])
			vt_os_free_pages(w->tables[i], 1);
	vt_memset(w, 0, sizeof(*w));
}

int vt_window_init(struct vt_host_window *w, u64 *host_top, const u64 *kernel_top, bool la57)
{
	int slot = vt_window_find_slot(host_top, kernel_top);
	u32 i;

	vt_memset(w, 0, sizeof(*w));
	if (slot < 0) {
		vt_err("no free top-level entry for the host window\n");
		return -VT_EBUSY;
	}
	w->levels = la57 ? 4 : 3;
	for (i = 0; i < w->levels; i++) {
		w->tables[i] = vt_os_alloc_pages(1);
		if (!w->tables[i]) {
			vt_window_fini(w);
			return -VT_ENOMEM;
		}
	}
	/* Entry 0 of each level leads to the next; the last holds the slots. */
	for (i = 0; i + 1 < w->levels; i++)
		w->tables[i][0] = vt_os_virt_to_phys(w->tables[i + 1]) | VT_TABLE_FLAGS;
	host_top[slot] = vt_os_virt_to_phys(w->tables[0]) | VT_TABLE_FLAGS;
	w->pte = w->tables[w->levels - 1];
	w->base = vt_window_va((u32)slot, la57);
	return 0;
}

/*
 * Never global, never cached as anything but WB (PAT index 0): the caller
 * only maps pages it has checked are RAM. The INVLPG drops this CPU's old
 * translation of the slot; no other CPU uses the slot.
 */
void *vt_window_map(struct vt_host_window *w, u32 slot, u64 pa)
{
	u64 va = w->base + (u64)(slot % (VT_WINDOW_SLOTS / 2)) * VT_PAGE_SIZE;
	u64 *pte = &w->pte[slot % (VT_WINDOW_SLOTS / 2)];
	u64 entry = (pa & VT_PTE_ADDR) | VT_PTE_PRESENT | VT_PTE_WRITE | VT_PTE_NX;

	if (*pte != entry) {
		*pte = entry;
		vt_invlpg(va);
	}
	return (void *)(va + (pa & (VT_PAGE_SIZE - 1)));
}

/*
 * Slots VT_WINDOW_SLOTS / 2 and up are each CPU's second, for device pages:
 * PCD and PWT select PAT entry 3, UC in the PAT Linux programs (and at
 * reset), SDM Vol. 3A 11.12.3.
 */
void *vt_window_map_uncached(struct vt_host_window *w, u32 slot, u64 pa)
{
	u32 i = VT_WINDOW_SLOTS / 2 + slot % (VT_WINDOW_SLOTS / 2);
	u64 va = w->base + (u64)i * VT_PAGE_SIZE;
	u64 entry = (pa & VT_PTE_ADDR) | VT_PTE_PRESENT | VT_PTE_WRITE | VT_PTE_PWT | VT_PTE_PCD |
		    VT_PTE_NX;

	if (w->pte[i] != entry) {
		w->pte[i] = entry;
		vt_invlpg(va);
	}
	return (void *)(va + (pa & (VT_PAGE_SIZE - 1)));
}

static void *vt_window_map_own(void *ctx, u64 pa)
{
	const struct vt_vcpu *vcpu = ctx;

	return vt_window_map(&vcpu->hv->window, vcpu->cpu, pa);
}

/* The guest's memory as the guest sees it: through the shield (shield.h). */
struct vt_seen_mem {
	struct vt_guest_mem mem;	/* how root maps a frame */
	const struct vt_ept *ept;
};

static void *vt_map_as_seen(void *ctx, u64 pa)
{
	const struct vt_seen_mem *seen = ctx;

	return seen->mem.map(seen->mem.ctx, vt_shield_seen_pa(seen->ept, pa));
}

/*
 * The page tables walked and the bytes copied are those the guest itself
 * would reach: a guest pointer (a stack, a string, a task) aimed at a
 * hidden frame reads its decoy, never root's state.
 */
int vt_own_mem(const struct vt_vcpu *vcpu, u64 gva, void *buf, u32 len, bool write)
{
	struct vt_seen_mem seen = { .mem = vcpu->hv->mem, .ept = &vcpu->hv->ept };
	struct vt_guest_mem mem = vcpu->hv->mem;
	struct vt_paging pg = {
		.cr3 = vt_vmread_or0(GUEST_CR3),
		.la57 = vt_vmread_or0(GUEST_CR4) & X86_CR4_LA57,
	};

	if (!seen.mem.map) {	/* the module's case; unit tests bring their own */
		seen.mem.map = vt_window_map_own;
		seen.mem.ctx = (void *)vcpu;
	}
	mem.map = vt_map_as_seen;
	mem.ctx = &seen;
	return write ? vt_guest_write(&mem, &pg, gva, buf, len) : vt_guest_read(&mem, &pg, gva, buf, len);
}
