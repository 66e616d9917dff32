// SPDX-License-Identifier: GPL-2.0
/*
 * VTICE_IOC_PROBES: probes at kernel function entries and returns, and
 * watch probes on kernel memory (debug/probe_points.h)
 * for `vtice probe`. One open file of /dev/vtice owns them; its close
 * removes them. The VMCALLs run on whichever CPU this runs; the order that
 * keeps an int3 from reaching the kernel (every CPU takes #BP exits before
 * any probe exists, and flushes the removed views before they stop) is
 * probe_points.h's.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/page.h>
#include <asm/pgtable.h>
#include <asm/pgtable_types.h>

#include <vtice/ioctl.h>
#include <vtice/vmcall.h>
#include "compat.h"
#include "vtice_linux.h"
#include "../../debug/insn.h"

static DEFINE_MUTEX(vt_probes_lock);
static struct file *vt_probes_owner;	/* under vt_probes_lock */
static u32 vt_probes_armed;		/* under vt_probes_lock */

/*
 * Probes in a module's text or data. The module may go while they are
 * armed and its memory be freed and reused: an int3 only the hypervisor's
 * view shows would then sit in other code. A module notifier takes the
 * probes away when a module holding one goes (before its memory is freed)
 * or when its init text is freed (once it is live), and keeps the memory
 * of the modules that went, where no probe is armed from then on, until
 * another module comes there. All under vt_probes_lock.
 */
#define VT_GONE_MAX	16
static struct vt_module_range vt_gone[VT_GONE_MAX];	/* a ring: the last modules that went */
static u32 vt_gone_next;
static u64 vt_probes_addrs[VTICE_PROBES_MAX];	/* the armed breakpoints' addresses */
static struct vtice_probe_watch vt_probes_watches[VTICE_PROBE_WATCHES_MAX];
static u32 vt_probes_nr_addrs, vt_probes_nr_watches;

/* One VMCALL on this CPU: the status as an errno, *hits = RDX. */
static int vt_probes_vmcall(u32 op, u64 a, u64 b, u64 c, u64 *hits)
{
	struct vt_vcpu *vcpu;
	u64 status = VTICE_VMCALL_ENOSYS, out = 0;
	int cpu = get_cpu();

	vcpu = vt_linux_launched_vcpu(cpu);
	if (vcpu)
		status = vt_vcpu_probes(vcpu, op, a, b, c, &out);
	put_cpu();
	if (hits)
		*hits = out;
	return vt_vmcall_errno(status);
}

/* On each CPU: a VM exit and entry, where the hooks sync this CPU's views. */
static void vt_probes_sync_cpu(void *unused)
{
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());
	u64 out;

	if (vcpu)
		vt_vcpu_vmcall(vcpu, VTICE_VMCALL_INVEPT, 0, &out);
}

void vt_linux_sync_views(void)
{
	cpus_read_lock();
	on_each_cpu(vt_probes_sync_cpu, NULL, 1);
	cpus_read_unlock();
}

/*
 * The probes go. keep_counts: what root counted stays readable (QUERY,
 * HIST, KEYS) until the next ARM, so DISARM answers with counts that hold
 * the last hit and the console reads the tables after it.
 */
static void vt_probes_disarm_locked(bool keep_counts)
{
	vt_probes_vmcall(VTICE_VMCALL_PROBE_CLEAR, keep_counts ? VTICE_VMCALL_PROBE_KEEP_COUNTS : 0, 0, 0,
			 NULL);
	vt_linux_sync_views();
	vt_probes_nr_addrs = 0;
	vt_probes_nr_watches = 0;
	vt_probes_vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 0, 0, 0, NULL);
	vt_linux_sync_views();
	vt_probes_owner = NULL;
	vt_probes_armed = 0;
}

/*
 * Code, not data: the kernel's own page tables map addr present and
 * executable (the image's text; its data and rodata are NX).
 */
static bool vt_executable(unsigned long addr)
{
	unsigned int level;
	pte_t *pte = lookup_address(addr, &level);

	return pte && pte_present(*pte) && !(pte_flags(*pte) & _PAGE_NX);
}

/*
 * An instruction's first byte: decoding the symbol's text from its start
 * (at addr - off) lands on addr. The int3 then replaces that instruction's
 * first byte and no other instruction's.
 */
static bool vt_insn_boundary(unsigned long addr, unsigned long off)
{
	const u8 *p = (const u8 *)(addr - off);
	struct vt_insn insn;

	while (p < (const u8 *)addr) {
		if (vt_insn_decode(p, 15, &insn))
			return false;
		p += insn.len;
	}
	return p == (const u8 *)addr;
}

static bool vt_overlaps(struct vt_module_range r, u64 addr, u64 len)
{
	return r.size && addr < r.base + r.size && r.base < addr + len;
}

/* Whether [addr, addr + len) is memory of a module that went. */
static bool vt_in_gone_module(u64 addr, u64 len)
{
	u32 i;

	for (i = 0; i < VT_GONE_MAX; i++)
		if (vt_overlaps(vt_gone[i], addr, len))
			return true;
	return false;
}

/* The kernel image's mapping (its symbols are checked with the modules'). */
static bool vt_image_text(unsigned long addr)
{
	return addr >= __START_KERNEL_map && addr < MODULES_VADDR;
}

/*
 * Only an instruction of the kernel image's text or of a loaded module's
 * (fn:NAME's entry, fn:NAME:return's RETs, addr:): which instruction is
 * the console's to choose, that it is one is the module's to make sure.
 * Under vt_probes_lock: a module that went is not armed in.
 */
static int vt_probe_addr_check(unsigned long addr)
{
	unsigned long off;
	bool module = addr >= MODULES_VADDR && addr < MODULES_END && !vt_in_gone_module(addr, 1);

	if ((!vt_image_text(addr) && !module) || !vt_linux_code_symbol(addr, &off) || !vt_executable(addr) ||
	    !vt_insn_boundary(addr, off))
		return -EINVAL;
	return 0;
}

/*
 * The frame behind a kernel linear address, from the kernel's own page
 * tables (a watch probe's page: the image, the direct map, vmalloc or a
 * module); false when nothing is mapped there.
 */
static bool vt_kernel_frame(unsigned long addr, u64 *pa)
{
	unsigned int level;
	pte_t *pte = lookup_address(addr, &level);
	unsigned long pfn;

	if (!pte || !pte_present(*pte))
		return false;
	if (level == PG_LEVEL_1G)
		pfn = pud_pfn(*(pud_t *)pte);
	else if (level == PG_LEVEL_2M)
		pfn = pmd_pfn(*(pmd_t *)pte);
	else
		pfn = pte_pfn(*pte);
	*pa = ((u64)pfn << PAGE_SHIFT) | (addr & ~page_level_mask(level));
	*pa &= PAGE_MASK;
	return true;
}

/* The physical address of a probe's byte: the image's by its mapping, a module's through the page tables. */
static u64 vt_probe_pa(unsigned long addr)
{
	u64 pa = 0;

	if (vt_image_text(addr))
		return __pa_symbol(addr);
	vt_kernel_frame(addr, &pa);	/* mapped: vt_executable said so under the lock */
	return pa | (addr & ~PAGE_MASK);
}

/* A watch probe's range: the kernel half, mapped page by page, a known type. */
static int vt_probe_watch_check(const struct vtice_probe_watch *w)
{
	unsigned long page;
	u64 pa;

	if (w->type < VTICE_PROBE_WATCH_WRITE || w->type > VTICE_PROBE_WATCH_ACCESS || !w->len ||
	    w->len > VTICE_PROBE_WATCH_LEN_MAX || w->addr < PAGE_OFFSET || w->addr + w->len < w->addr ||
	    vt_in_gone_module(w->addr, w->len))
		return -EINVAL;
	for (page = w->addr & PAGE_MASK; page < w->addr + w->len; page += PAGE_SIZE)
		if (!vt_kernel_frame(page, &pa))
			return -EINVAL;
	return 0;
}

static int vt_probes_check(const struct vtice_probes *req)
{
	u32 i;

	if (req->op > VTICE_PROBES_DISARM)
		return -EINVAL;
	if (req->op != VTICE_PROBES_ARM)
		return 0;
	if ((!req->count && !req->nr_watches) || req->count > VTICE_PROBES_MAX ||
	    req->nr_watches > VTICE_PROBE_WATCHES_MAX || req->nr_programs > VTICE_FETCH_PROGRAMS_MAX ||
	    memchr_inv(req->comm + 15, 0, 1))
		return -EINVAL;
	if (req->stack_bytes > VTICE_PROFILE_STACK_MAX || req->stack_bytes % 16 ||
	    (req->flags & ~VTICE_PROBES_MORE_REGS) || req->reserved ||
	    (req->count < VTICE_PROBES_MAX && req->stack_points >> req->count) || req->stack_watches >> req->nr_watches)
		return -EINVAL;	/* a stack bit names an address or range the request has */
	for (i = 0; i < req->count; i++)
		if (req->program[i] > req->nr_programs)
			return -EINVAL;	/* root checks each program's ops (vmcall.h) */
	return 0;
}

/* The addresses and ranges, under vt_probes_lock (the module notifier's view of what went). */
static int vt_probes_check_places(const struct vtice_probes *req)
{
	u32 i;

	for (i = 0; i < req->nr_watches; i++)
		if (vt_probe_watch_check(&req->watch[i])) {
			pr_info("watch probe %u at %llx refused: not mapped kernel memory, or a bad length or type\n",
				i, req->watch[i].addr);
			return -EINVAL;
		}
	for (i = 0; i < req->count; i++)
		if (vt_probe_addr_check(req->addrs[i])) {
			pr_info("probe %u at %llx refused: not an instruction of the kernel's or a loaded module's "
				"text\n", i, req->addrs[i]);
			return -EINVAL;
		}
	return 0;
}

/* What ADD's or WATCH's R10 adds for probe i of a request's stack_points or stack_watches. */
static u64 vt_probes_stack_flag(u64 bits, u32 i)
{
	return bits >> i & 1 ? VTICE_VMCALL_PROBE_COPIES_STACK : 0;
}

/* One VMCALL per page the range covers (root takes a page's frame at a time); stack: the flag above. */
static int vt_probes_watch_add(const struct vtice_probe_watch *w, u64 stack)
{
	u64 start = w->addr, end = w->addr + w->len, next, pa;
	int ret = 0;

	for (; start < end && !ret; start = next) {
		next = min_t(u64, (start & PAGE_MASK) + PAGE_SIZE, end);
		if (!vt_kernel_frame(start, &pa))
			return -EINVAL;	/* unmapped since the check */
		ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_WATCH, start, pa,
				       (next - start) | (u64)w->type << 32 | stack, NULL);
	}
	return ret;
}

/* Every op, END included: a program shorter than before leaves no old op behind. */
static int vt_probes_fetch_load(const struct vtice_probes *req)
{
	u32 p, i;
	u64 op;
	int ret = 0;

	for (p = 0; p < req->nr_programs && !ret; p++)
		for (i = 0; i < VTICE_FETCH_OPS_MAX && !ret; i++) {
			memcpy(&op, &req->fetch[p][i], sizeof(op));
			ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_FETCH, p, i, op, NULL);
		}
	return ret;
}

static int vt_probes_arm_locked(struct file *file, const struct vtice_probes *req)
{
	u64 c[2];
	u32 i;
	int ret;

	if (vt_probes_owner && vt_probes_owner != file)
		return -EBUSY;
	vt_probes_disarm_locked(false);	/* also the counts the last DISARM kept */
	ret = vt_probes_check_places(req);
	if (ret)
		return ret;
	memcpy(c, req->comm, sizeof(c));
	ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_FILTER, req->pid, c[0], c[1], NULL);
	if (!ret)
		ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_STACK, req->stack_bytes,
				       !!(req->flags & VTICE_PROBES_MORE_REGS), 0, NULL);
	if (ret)
		return ret;
	vt_probes_owner = file;
	ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_INTERCEPT, 1, 0, 0, NULL);
	vt_linux_sync_views();
	if (!ret)
		ret = vt_probes_fetch_load(req);
	for (i = 0; !ret && i < req->count; i++)
		ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_ADD, req->addrs[i], vt_probe_pa(req->addrs[i]),
				       req->program[i] | vt_probes_stack_flag(req->stack_points, i), NULL);
	for (i = 0; !ret && i < req->nr_watches; i++)
		ret = vt_probes_watch_add(&req->watch[i], vt_probes_stack_flag(req->stack_watches, i));
	if (ret) {
		vt_probes_disarm_locked(false);
		return ret;
	}
	vt_linux_sync_views();
	vt_probes_armed = req->count + req->nr_watches;
	memcpy(vt_probes_addrs, req->addrs, req->count * sizeof(req->addrs[0]));
	memcpy(vt_probes_watches, req->watch, req->nr_watches * sizeof(req->watch[0]));
	vt_probes_nr_addrs = req->count;
	vt_probes_nr_watches = req->nr_watches;
	return 0;
}

/* Whether an armed probe sits in r. */
static bool vt_probes_in(struct vt_module_range r)
{
	u32 i;

	for (i = 0; i < vt_probes_nr_addrs; i++)
		if (vt_overlaps(r, vt_probes_addrs[i], 1))
			return true;
	for (i = 0; i < vt_probes_nr_watches; i++)
		if (vt_overlaps(r, vt_probes_watches[i].addr, vt_probes_watches[i].len))
			return true;
	return false;
}

/*
 * The probes go before r is freed (what root counted stays for the
 * console's DISARM). The debug stub's probes are root's alone: root
 * checks them (PROBE_LEAVE), and the debugger learns it from the stub.
 */
static void vt_probes_leave(struct module *mod, struct vt_module_range r, const char *why)
{
	u64 removed = 0;

	if (!r.size)
		return;
	if (vt_probes_in(r)) {
		vt_probes_disarm_locked(true);
		vt_probes_armed = 0;
		pr_notice("probes removed: module %s %s\n", mod->name, why);
		return;
	}
	if (vt_probes_vmcall(VTICE_VMCALL_PROBE_LEAVE, r.base, r.size, 0, &removed) || !removed)
		return;
	vt_linux_sync_views();	/* no CPU runs a removed int3 from a cached view after this */
	pr_notice("probes removed: module %s %s (the debug stub's)\n", mod->name, why);
}

/* Its memory is freed next: no probe stays there, and none is armed there later. */
static void vt_probes_module_going(struct module *mod)
{
	unsigned int i;

	vt_probes_leave(mod, vt_module_init_text(mod), "is going");
	for (i = 0; i < VT_MODULE_RANGES; i++) {
		vt_probes_leave(mod, vt_module_range(mod, i), "is going");
		vt_gone[vt_gone_next++ % VT_GONE_MAX] = vt_module_range(mod, i);
	}
}

/* Memory of a module that went is this module's now. */
static void vt_probes_module_coming(struct module *mod)
{
	unsigned int i;
	u32 j;

	for (i = 0; i < VT_MODULE_RANGES; i++) {
		struct vt_module_range r = vt_module_range(mod, i);

		for (j = 0; j < VT_GONE_MAX; j++)
			if (vt_overlaps(vt_gone[j], r.base, r.size))
				vt_gone[j].size = 0;
	}
}

static int vt_probes_module_event(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	mutex_lock(&vt_probes_lock);
	if (state == MODULE_STATE_LIVE)
		vt_probes_leave(mod, vt_module_init_text(mod), "freed its init text");
	else if (state == MODULE_STATE_GOING)
		vt_probes_module_going(mod);
	else if (state == MODULE_STATE_COMING)
		vt_probes_module_coming(mod);
	mutex_unlock(&vt_probes_lock);
	return NOTIFY_DONE;
}

static struct notifier_block vt_probes_modules = { .notifier_call = vt_probes_module_event };

int vt_probes_modules_watch(void)
{
	return register_module_notifier(&vt_probes_modules);
}

void vt_probes_modules_unwatch(void)
{
	unregister_module_notifier(&vt_probes_modules);
}

/*
 * What each armed address's COUNT or SUM op counted and summed (ADD's
 * order: the request's), and the reads those hits found unreadable; after
 * DISARM, what they had counted when the probes went.
 */
static void vt_probes_counts(struct vtice_probes *req)
{
	u32 i;
	u64 count, sum, unreadable;

	memset(req->counted, 0, sizeof(req->counted));
	memset(req->summed, 0, sizeof(req->summed));
	req->unreadable = 0;
	if (req->op == VTICE_PROBES_ARM)
		return;
	for (i = 0; i < VTICE_PROBES_MAX; i++) {
		if (vt_probes_vmcall(VTICE_VMCALL_PROBE_COUNT, i, 0, 0, &count) ||
		    vt_probes_vmcall(VTICE_VMCALL_PROBE_SUM, i, 0, 0, &sum) ||
		    vt_probes_vmcall(VTICE_VMCALL_PROBE_UNREADABLE, i, 0, 0, &unreadable))
			break;	/* past the last address: RDX is not a count */
		req->counted[i] = count;
		req->summed[i] = (s64)sum;
		req->unreadable += unreadable;
	}
}

static long vt_probes_ioctl(struct file *file, struct vtice_probes *req, void __user *uarg)
{
	u64 hits = 0;
	int ret = vt_get_arg(req, sizeof(*req), uarg);

	if (!ret)
		ret = vt_probes_check(req);
	if (ret)
		return ret;
	mutex_lock(&vt_probes_lock);
	if (req->op == VTICE_PROBES_ARM)
		ret = vt_probes_arm_locked(file, req);
	else if (req->op == VTICE_PROBES_DISARM && vt_probes_owner)
		ret = vt_probes_owner != file ? -EBUSY : (vt_probes_disarm_locked(true), 0);
	vt_probes_counts(req);	/* after DISARM: with its last hit; ARM's are 0 */
	req->armed = vt_probes_armed;
	mutex_unlock(&vt_probes_lock);
	if (ret)
		return ret;
	vt_probes_vmcall(VTICE_VMCALL_PROBE_QUERY, 0, 0, 0, &hits);
	req->hits = hits;
	vt_probes_vmcall(VTICE_VMCALL_PROBE_PASSED, 0, 0, 0, &hits);
	req->passed_over = hits;
	return vt_put_arg(uarg, req, sizeof(*req));
}

/* The request is over 2 KiB with its fetch programs: too big for the stack. */
long vt_ioc_probes(struct file *file, void __user *uarg)
{
	struct vtice_probes *req = kzalloc(sizeof(*req), GFP_KERNEL);
	long ret;

	if (!req)
		return -ENOMEM;
	ret = vt_probes_ioctl(file, req, uarg);
	kfree(req);
	return ret;
}

/*
 * The index of a read of one armed address's counts (VTICE_IOC_PROBE_HIST,
 * _KEYS), under vt_probes_lock: 0, or -EINVAL when no address is there.
 */
static int vt_probes_index_armed(u32 index, u32 reserved)
{
	u64 count;

	if (reserved || index >= VTICE_PROBES_MAX)
		return -EINVAL;
	return vt_probes_vmcall(VTICE_VMCALL_PROBE_COUNT, index, 0, 0, &count);
}

/* VTICE_IOC_PROBE_HIST: one armed address's HIST buckets, read as QUERY reads counts (anyone may). */
long vt_ioc_probe_hist(void __user *uarg)
{
	struct vtice_probe_hist h;
	u32 b;
	int ret = vt_get_arg(&h, sizeof(h), uarg);

	if (ret)
		return ret;
	mutex_lock(&vt_probes_lock);
	ret = vt_probes_index_armed(h.index, h.reserved);
	for (b = 0; !ret && b < VTICE_FETCH_HIST_BUCKETS; b++)
		ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_HIST, h.index, b, 0, &h.buckets[b]);
	mutex_unlock(&vt_probes_lock);
	return ret ? ret : vt_put_arg(uarg, &h, sizeof(h));
}

/* VTICE_IOC_PROBE_KEYS: one armed address's KEYED slots, read as QUERY reads counts (anyone may). */
long vt_ioc_probe_keys(void __user *uarg)
{
	struct vtice_probe_keys k;
	struct vtice_probe_key *s;
	u32 i;
	int ret = vt_get_arg(&k, sizeof(k), uarg);

	if (ret)
		return ret;
	memset(k.slots, 0, sizeof(k.slots));
	mutex_lock(&vt_probes_lock);
	ret = vt_probes_index_armed(k.index, k.reserved);
	for (i = 0; !ret && i < VTICE_FETCH_KEYED_SLOTS; i++) {
		s = &k.slots[i];
		ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_KEY, k.index, i, 0, &s->count);
		if (!ret && s->count)	/* a counting slot's key never changes */
			ret = vt_probes_vmcall(VTICE_VMCALL_PROBE_KEY, k.index, i | 1 << 8, 0, &s->key[0]) ?:
			      vt_probes_vmcall(VTICE_VMCALL_PROBE_KEY, k.index, i | 2 << 8, 0, &s->key[1]) ?:
			      vt_probes_vmcall(VTICE_VMCALL_PROBE_KEY, k.index, i | 3 << 8, 0, &s->value);
	}
	mutex_unlock(&vt_probes_lock);
	return ret ? ret : vt_put_arg(uarg, &k, sizeof(k));
}

void vt_probes_release(struct file *file)
{
	mutex_lock(&vt_probes_lock);
	if (vt_probes_owner == file)
		vt_probes_disarm_locked(false);
	mutex_unlock(&vt_probes_lock);
}
