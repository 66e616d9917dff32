/* SPDX-License-Identifier: GPL-2.0 */
/* State shared by the Linux OS-layer files. */
#ifndef VT_OS_LINUX_H
#define VT_OS_LINUX_H

#include <linux/cpuhotplug.h>
#include <linux/printk.h>
#include <linux/types.h>
#include "../../core/hv.h"

struct vt_module {
	struct vt_hv *hv;		/* VT_HV_PAGES pages: the shield copies them */
	struct vt_vcpu **vcpus;		/* [nr_cpu_ids], NULL when not virtualized */
	struct vt_vcpu **vcpu_state;	/* [nr_cpu_ids], every possible CPU's, made at load */
	void **rings;			/* [nr_cpu_ids], vmalloc_user, possible CPUs */
	u32 ring_records;
	u32 ring_bytes;			/* header + records, page aligned */
};

extern struct vt_module vt_mod;

/* CPU's vCPU when it runs in VMX non-root now, else NULL (module.c). */
struct vt_vcpu *vt_linux_launched_vcpu(unsigned int cpu);

int vt_dev_register(void);
void vt_dev_unregister(void);
int vt_power_register(void);
int vt_selftest(void);
void vt_power_unregister(void);
/* The module parameters behind the branch tracer (module.c, debug/tracer.h). */
struct vt_linux_trace_params {
	u32 mode;		/* enum vt_trace_mode */
	u32 event_gap;		/* a traced CPU's steps between two interrupts let in */
	u32 records;		/* branch records each CPU's trace holds: the stub's buffer, the rings' spill */
};

/* The module parameters behind the debug stub (module.c). */
struct vt_linux_stub_params {
	u16 port;
	u32 baud;
	bool crash_stop;
	u32 lockup_secs;
	bool step_tf;
	struct vt_linux_trace_params trace;
};
int vt_linux_stub_init(const struct vt_linux_stub_params *params);
/*
 * module.c: stealth=1. Set before the first line a load would print: the
 * load's notes and warnings stay out of the kernel log (errors, which
 * come with a refused load, do not).
 */
extern bool vt_stealth;
#define vt_note(fmt, ...)	do { if (!vt_stealth) pr_info(fmt, ##__VA_ARGS__); } while (0)
#define vt_note_warn(fmt, ...)	do { if (!vt_stealth) pr_warn(fmt, ##__VA_ARGS__); } while (0)
/* stealth.c: the last step of a stealth load (never fails; __init). */
void vt_linux_stealth(enum cpuhp_state hp_state);
/* root_log_print.c: VMX root's events in the kernel log (core/root_log.h). */
int vt_root_log_start(void);
void vt_root_log_stop(void);
/* stub_os.c: NMIs the hypervisor sent that landed in VMX root are not the kernel's news. */
void vt_linux_stub_fini(void);
int vt_linux_debug_break(u64 *stopped_ns);
int vt_linux_shield(void);
/* host_tables.c: what VMX root's page tables map, at load before the shield. */
int vt_linux_host_tables(void);
/* root_os.c: the kernel's memory map, for VMX root: set first thing at load. */
void vt_linux_set_memory_map(u64 page_offset, u64 image_phys_base);
int vt_linux_shield_memory_map(void);
/* kernel_info.c: RAM and task_struct layout into hv, at load. */
int vt_linux_describe_kernel(struct vt_hv *hv);
u64 vt_linux_ram_top(void);	/* the end of the highest RAM range, after the above */
u64 vt_linux_task_pointer(u32 cpu);
#define VT_LINUX_TASK_CPUS	256	/* VT_STOP_MAX_CPUS, VT_TRACE_MAX_CPUS */
const u64 *vt_linux_task_pointers(void);
/*
 * The kernel image's symbol holding addr (sprint_symbol's
 * "name+0xoff/0xsize"): addr's offset in it and its size (size may be
 * NULL); false for a module's symbol ("[mod]"), an address outside every
 * symbol, or, when name is given, a symbol of another name.
 */
bool vt_linux_image_symbol(unsigned long addr, const char *name, unsigned long *off,
			   unsigned long *size);
/*
 * The offset of addr in the symbol holding it, the kernel image's or a
 * loaded module's; false for JIT-ed BPF programs and trampolines, which
 * kallsyms tags "[bpf]" and "[__builtin__ftrace]" and which are freed
 * without a module going.
 */
bool vt_linux_code_symbol(unsigned long addr, unsigned long *off);
/* dev.c: ioctl arguments that start with size and version. */
int vt_get_arg(void *arg, size_t size, const void __user *uarg);
int vt_put_arg(void __user *uarg, const void *arg, size_t size);
/* A VMCALL's status as an errno: ENOSYS (no such service) -EOPNOTSUPP, a -errno itself, else -EIO. */
int vt_vmcall_errno(u64 status);
/* lbr_dev.c: VTICE_IOC_LBR. */
long vt_ioc_lbr(void __user *uarg);
/* syscalls_dev.c: VTICE_IOC_SYSCALLS, and the owner's close. */
struct file;
long vt_ioc_syscalls(struct file *file, void __user *uarg);
long vt_ioc_path_trace(struct file *file, void __user *uarg);
void vt_syscalls_release(struct file *file);
/* probes_dev.c: VTICE_IOC_PROBES, VTICE_IOC_PROBE_HIST and _KEYS, and the owner's close. */
long vt_ioc_probes(struct file *file, void __user *uarg);
long vt_ioc_probe_hist(void __user *uarg);
long vt_ioc_probe_keys(void __user *uarg);
void vt_probes_release(struct file *file);
/* probes_dev.c: the module notifier that takes probes out of a module that goes. */
int vt_probes_modules_watch(void);
void vt_probes_modules_unwatch(void);
/* ...and a VM exit and entry on every CPU, where each syncs its views (INVEPT). */
void vt_linux_sync_views(void);
/* switch_trigger_dev.c: the path tracer's switch trigger (debug/path_trace.h). */
int vt_switch_trigger_plant(unsigned long switch_to);
void vt_switch_trigger_remove(void);
bool vt_switch_trigger_planted(void);
/* profile_dev.c: VTICE_IOC_PROFILE, and the owner's close. */
long vt_ioc_profile(struct file *file, void __user *uarg);
void vt_profile_release(struct file *file);
int vt_linux_path_init(const struct vt_linux_trace_params *trace);

#endif /* VT_OS_LINUX_H */
