// SPDX-License-Identifier: GPL-2.0
/*
 * The parts of the OS interface (core/os.h) that VMX root calls: built
 * like core/ (Kbuild), so they use none of the kernel's code or data.
 */
#include <linux/types.h>
#include <asm/page.h>

#include "../../core/os.h"
#include "../../debug/dbg_os.h"
#include "vtice_linux.h"

/*
 * Where the kernel maps physical memory, taken at load and kept on a page
 * the shield copies: VMX root converts with its own values, never the
 * kernel's page_offset_base or phys_base, which a hostile kernel could
 * rewrite to point root's EPT walks at memory of its choosing.
 */
static struct {
	u64 page_offset;	/* the direct map's base */
	u64 phys_base;		/* the kernel image's physical offset */
} VT_ROOT_STATE_TYPE vt_os_map VT_ROOT_STATE;

void vt_linux_set_memory_map(u64 page_offset, u64 image_phys_base)
{
	vt_os_map.page_offset = page_offset;
	vt_os_map.phys_base = image_phys_base;
}

int vt_linux_shield_memory_map(void)
{
	return vt_os_shield_image(&vt_os_map, sizeof(vt_os_map));
}

/* The kernel image's mapping, or the direct map (__phys_addr's two cases). */
u64 vt_os_virt_to_phys(const void *p)
{
	u64 va = (u64)p;

	if (va >= __START_KERNEL_map)
		return va - __START_KERNEL_map + vt_os_map.phys_base;
	return va - vt_os_map.page_offset;
}

void *vt_os_phys_to_virt(u64 pa)
{
	return (void *)(pa + vt_os_map.page_offset);
}
