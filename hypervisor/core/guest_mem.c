// SPDX-License-Identifier: GPL-2.0
/*
 * Guest page walk for the debugger: 4- and 5-level paging with 1 GiB and
 * 2 MiB pages (SDM Vol. 3A 4.5, Tables 4-14 to 4-20). The walk reads the
 * guest's own tables and needs no help from the stopped kernel. With the
 * identity EPT a guest-physical address is a host-physical one.
 *
 * Every table and every data page must be RAM: an address backed by MMIO
 * or by nothing gives -VT_EFAULT and is never touched, since a read from a
 * device register can have side effects.
 */
#include "guest_mem.h"
#include "../core/os.h"

#define VT_PG_PRESENT	VT_BIT(0)
#define VT_PG_LARGE	VT_BIT(7)	/* PS: 1 GiB in a PDPTE, 2 MiB in a PDE */
#define VT_PG_ADDR	0x000ffffffffff000ull
/*
 * Linux with page-table isolation runs user mode on a copy of its page
 * tables one page above the kernel's (CR3 bit 12 set); only the kernel's
 * copy maps the kernel. A stop in user mode still reads kernel memory.
 */
#define VT_PTI_USER_PGD	VT_BIT(12)

bool vt_guest_is_ram(const struct vt_guest_mem *m, u64 pa)
{
	u32 i;

	for (i = 0; i < m->nr_ram; i++)
		if (pa >= m->ram[i].start && pa < m->ram[i].end)
			return true;
	return false;
}

static int vt_read_entry(const struct vt_guest_mem *m, u64 table, u32 index, u64 *entry)
{
	u64 pa = table + index * 8ull;
	const u64 *p;

	if (!vt_guest_is_ram(m, pa))
		return -VT_EFAULT;
	p = m->map(m->ctx, pa);
	if (!p)
		return -VT_EFAULT;
	*entry = VT_READ_ONCE(*p);
	return 0;
}

static int vt_walk(const struct vt_guest_mem *m, u64 cr3, bool la57, u64 gva, u64 *gpa)
{
	u32 level = la57 ? 5 : 4;
	u64 table = cr3 & VT_PG_ADDR, entry = 0;

	for (; level >= 1; level--) {
		u32 shift = 12 + 9 * (level - 1);
		u32 index = (gva >> shift) & 0x1ff;

		if (vt_read_entry(m, table, index, &entry) || !(entry & VT_PG_PRESENT))
			return -VT_EFAULT;
		if (level == 1 || ((level == 2 || level == 3) && (entry & VT_PG_LARGE))) {
			u64 size = 1ull << shift;
			u64 base = entry & VT_PG_ADDR & ~(size - 1);

			*gpa = base | (gva & (size - 1));
			return 0;
		}
		table = entry & VT_PG_ADDR;
	}
	return -VT_EFAULT;
}

/* Bits above the top translated one must copy it (SDM 3A 3.3.7.1). */
static bool vt_canonical(u64 gva, bool la57)
{
	u32 bits = la57 ? 57 : 48;
	s64 sext = (s64)(gva << (64 - bits)) >> (64 - bits);

	return (u64)sext == gva;
}

int vt_guest_translate(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
		       u64 *gpa)
{
	if (!vt_canonical(gva, pg->la57))
		return -VT_EFAULT;
	if (!vt_walk(m, pg->cr3, pg->la57, gva, gpa))
		return 0;
	if (pg->cr3 & VT_PTI_USER_PGD)
		return vt_walk(m, pg->cr3 & ~VT_PTI_USER_PGD, pg->la57, gva, gpa);
	return -VT_EFAULT;
}

/* Copy page by page; write = true copies buf into the guest. */
static int vt_guest_copy(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
			 u8 *buf, u32 len, bool write)
{
	u32 done = 0;

	while (done < len) {
		u64 va = gva + done, gpa;
		u32 chunk = (u32)(VT_PAGE_SIZE - (va & (VT_PAGE_SIZE - 1)));
		u8 *p;

		if (chunk > len - done)
			chunk = len - done;
		if (vt_guest_translate(m, pg, va, &gpa) || !vt_guest_is_ram(m, gpa))
			break;
		p = m->map(m->ctx, gpa);
		if (!p)
			break;
		if (write)
			vt_memcpy(p, buf + done, chunk);
		else
			vt_memcpy(buf + done, p, chunk);
		done += chunk;
	}
	return done ? (int)done : (len ? -VT_EFAULT : 0);
}

int vt_guest_read(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
		  void *buf, u32 len)
{
	return vt_guest_copy(m, pg, gva, buf, len, false);
}

int vt_guest_write(const struct vt_guest_mem *m, const struct vt_paging *pg, u64 gva,
		   const void *buf, u32 len)
{
	return vt_guest_copy(m, pg, gva, (u8 *)buf, len, true);
}
