// SPDX-License-Identifier: GPL-2.0
/*
 * What VMX root needs to know about the running kernel to read its memory
 * safely and name its tasks: the RAM ranges (the only memory it reads),
 * where each CPU keeps its current-task pointer, and task_struct's layout.
 * All of it is found at load, before any CPU is virtualized.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/ioport.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <asm/current.h>

#include "compat.h"
#include "vtice_linux.h"

static struct vt_ram_range vt_ram[VT_MAX_RAM];
static u32 vt_nr_ram;
static u64 vt_ram_top;		/* the end of the highest RAM range, tracked or not */

/* "System RAM" in /proc/iomem, whole pages only. */
static int vt_collect_ram(struct resource *res, void *arg)
{
	u64 start = PAGE_ALIGN(res->start), end = (res->end + 1) & PAGE_MASK;

	if (end <= start)
		return 0;
	vt_ram_top = max(vt_ram_top, end);
	if (vt_nr_ram == VT_MAX_RAM) {
		if (!vt_stealth)
			pr_warn_once("more than %u RAM ranges: the hypervisor will not read the rest\n", VT_MAX_RAM);
		return 0;	/* the walk goes on for vt_ram_top */
	}
	vt_ram[vt_nr_ram].start = start;
	vt_ram[vt_nr_ram].end = end;
	vt_nr_ram++;
	return 0;
}

/* The per-CPU current_task (os/linux/compat.h). */
u64 vt_linux_task_pointer(u32 cpu)
{
	return (u64)(unsigned long)vt_current_task_ptr(cpu);
}

/*
 * Every CPU's current-task pointer, for the tracers' task filters (the
 * stub's and the path tracer's); both trace CPUs below VT_LINUX_TASK_CPUS.
 */
const u64 *vt_linux_task_pointers(void)
{
	static u64 pointers[VT_LINUX_TASK_CPUS];
	u32 cpu;

	for (cpu = 0; cpu < min_t(u32, nr_cpu_ids, VT_LINUX_TASK_CPUS); cpu++)
		pointers[cpu] = vt_linux_task_pointer(cpu);
	return pointers;
}

u64 vt_linux_ram_top(void)
{
	return vt_ram_top;
}

int vt_linux_describe_kernel(struct vt_hv *hv)
{
	vt_nr_ram = 0;
	vt_ram_top = 0;
	walk_iomem_res_desc(IORES_DESC_NONE, IORESOURCE_SYSTEM_RAM | IORESOURCE_BUSY, 0, ~0ull,
			    NULL, vt_collect_ram);
	hv->task_layout.pid = offsetof(struct task_struct, pid);
	hv->task_layout.tgid = offsetof(struct task_struct, tgid);
	hv->task_layout.comm = offsetof(struct task_struct, comm);
	hv->task_layout.stack = offsetof(struct task_struct, stack);
	/* Where the entry code saved the syscall's number, past THREAD_SIZE's padding (FRED's too). */
	hv->task_layout.orig_ax = (unsigned long)task_pt_regs(current) - (unsigned long)task_stack_page(current) +
				  offsetof(struct pt_regs, orig_ax);
	hv->task_layout.known = true;
	return vt_hv_set_ram(hv, vt_ram, vt_nr_ram);
}

/*
 * sprint_symbol's "name+0xoff/0xsize", then " [mod]" for a module's: the
 * name (cut at '+') into sym, addr's offset and the symbol's size, and
 * *module the module's name ("" for the image's; it points into sym).
 */
static bool vt_linux_symbol(unsigned long addr, char *sym, unsigned long *off, unsigned long *size,
			    const char **module)
{
	char *plus, *open;

	sprint_symbol(sym, addr);
	plus = strchr(sym, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", off, size) != 2 || *off >= *size)
		return false;
	open = strchr(plus, '[');
	*module = "";
	if (open) {
		*module = open + 1;
		open[strcspn(open, "]")] = '\0';
	}
	*plus = '\0';
	return true;
}

bool vt_linux_image_symbol(unsigned long addr, const char *name, unsigned long *off,
			   unsigned long *size)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned long len;
	const char *module;

	if (!vt_linux_symbol(addr, sym, off, &len, &module) || *module)
		return false;
	if (size)
		*size = len;
	return !name || !strcmp(sym, name);
}

bool vt_linux_code_symbol(unsigned long addr, unsigned long *off)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned long len;
	const char *module;

	if (!vt_linux_symbol(addr, sym, off, &len, &module))
		return false;
	return strcmp(module, "bpf") && strncmp(module, "__builtin__", 11);
}
