/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shield: EPT leaves that keep the hypervisor's own frames out of the
 * guest's reach. A hidden frame shows the guest one shared decoy page; a
 * copied frame shows it a private copy taken when it was shielded (for the
 * module's code and the state the kernel still reads, while VMX root keeps
 * the original). A shielded leaf carries VT_EPT_SHIELDED, which hooks check. Either way guest reads, writes and fetches land elsewhere,
 * and since the decoy and the copies are mapped read/write/execute no guest
 * access ever exits (docs/hypervisor.md, "Self-protection").
 *
 * Everything here runs before any CPU is virtualized (it allocates and may
 * sleep), so no CPU caches a translation that the shield then changes; the
 * INVEPT each CPU does before its VMLAUNCH covers the rest (SDM 3C 29.4.3.1).
 */
#ifndef VT_CORE_SHIELD_H
#define VT_CORE_SHIELD_H

#include "ept.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VT_SHIELD_MAX_COPIES	1024
/* Pages of each of the tables below (copies, copied_gpa) */
#define VT_SHIELD_COPY_TABLE_PAGES	VT_PAGES_FOR(VT_SHIELD_MAX_COPIES * sizeof(u64))

struct vt_shield {
	void *decoy;		/* what hidden frames show the guest */
	u64 decoy_pa;
	void **copies;		/* the guest's copies, freed by vt_shield_fini */
	u64 *copied_gpa;	/* the frame each copy stands for */
	u32 nr_copies;
	u32 hidden;		/* frames showing the decoy */
};

int vt_shield_init(struct vt_shield *s);
/* Only once no CPU uses the EPT any more (the copies are still mapped). */
void vt_shield_fini(struct vt_shield *s);

/* Hide [pa, pa + pages * 4 KiB) behind the decoy; frames already shielded are left. */
int vt_shield_hide(struct vt_shield *s, struct vt_ept *ept, u64 pa, u32 pages);
/* Show the guest a copy of the frame at pa, as it is now. */
int vt_shield_copy(struct vt_shield *s, struct vt_ept *ept, u64 pa);
/*
 * A stealth load (VTICE_VMCALL_STEALTH): every copied frame shows the
 * decoy from now on and its copy is cleared, so the guest keeps nothing
 * of what the copies held (the module's code, the key). In VMX root;
 * the caller flushes the CPUs' EPT translations.
 */
void vt_shield_retire_copies(struct vt_shield *s, struct vt_ept *ept);
/*
 * Where the guest's accesses to gpa land: in a shielded frame, the decoy
 * or the copy; anywhere else gpa itself. Reads root makes on the guest's
 * behalf (vt_own_mem) go there, so a pointer the guest chose never shows
 * it a byte of a hidden frame.
 */
u64 vt_shield_seen_pa(const struct vt_ept *ept, u64 gpa);
/*
 * Hide every EPT table and pool page, including those that hiding them
 * splits off, until a pass finds nothing new. Call after all other hiding.
 */
int vt_shield_hide_ept(struct vt_shield *s, struct vt_ept *ept);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_SHIELD_H */
