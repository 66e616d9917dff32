/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The portable hypervisor core: global state (struct vt_hv), per-CPU state
 * (struct vt_vcpu) and the functions the OS layer calls.
 */
#ifndef VT_CORE_HV_H
#define VT_CORE_HV_H

#include "types.h"
#include "ept.h"
#include "guest_mem.h"
#include "lbr_view.h"
#include "profile.h"
#include "ring.h"
#include "root_log.h"
#include "shield.h"
#include "syscall_trap.h"
#include "tsc_hide.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The OS layer includes only this header (and os.h): the hardware
 * definitions in vmx_defs.h reuse Linux's names and would clash there.
 */

/* Guest GPRs as the VM-exit stub saves them (os/linux/vmx_entry.S). */
struct vt_guest_regs {
	u64 rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi;
	u64 r8, r9, r10, r11, r12, r13, r14, r15;
	u64 rip, rflags;	/* filled only when leaving VMX */
};
VT_STATIC_ASSERT(sizeof(struct vt_guest_regs) == 144, "vmx_entry.S frame layout");
VT_STATIC_ASSERT(__builtin_offsetof(struct vt_guest_regs, rbx) == 24 &&
		 __builtin_offsetof(struct vt_guest_regs, rdi) == 56 &&
		 __builtin_offsetof(struct vt_guest_regs, r15) == 120, "root_entry.S vt_parent_vmcall offsets");

/* VMX capability MSRs as read, SDM Vol. 3D Appendix A. */
struct vt_vmx_caps {
	u64 basic, pin, proc, proc2, exit, entry, misc;
	u64 cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1, ept_vpid;
	u64 flags;		/* VTICE_CAP_* (include/uapi/vtice/ioctl.h) */
	u32 preempt_timer_shift; /* the timer ticks when TSC bit N changes */
};

/*
 * exit_cr.c: the CR0 bits vtice owns, those IA32_VMX_CR0_FIXED0 sets but
 * the kernel may clear on the bare CPU, NE on every CPU so far. PE and PG
 * are free under unrestricted guest (SDM Vol. 3D A.7), which vtice requires
 * and turns on: a CPU that takes an INIT runs in real mode (exit_init.c).
 */
u64 vt_cr0_owned(const struct vt_vmx_caps *c);

/* The hypervisor vtice runs under, if any (parent.c). */
enum vt_parent {
	VT_PARENT_NONE,
	VT_PARENT_KVM,		/* CPUID 0x40000000 signature "KVMKVMKVM" */
	VT_PARENT_OTHER,
};

/* The controls this hypervisor runs with, computed from vt_vmx_caps. */
struct vt_controls {
	u32 pin, proc, proc2, exit, entry;
	u32 exceptions;		/* exception bitmap every VMCS starts with */
};

struct vt_vcpu;
struct vt_exit;

/*
 * What a debugger registers (HyperDbg-style: the VMM does not know the
 * debugger). Each returns true when it consumed the event; false lets the
 * core do its default (re-inject the exception, clear MTF, return ENOSYS).
 */
struct vt_callbacks {
	bool (*exception)(struct vt_vcpu *vcpu, struct vt_exit *exit, u32 intr_info);
	bool (*ept_violation)(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 gpa, u64 qual);
	bool (*mtf)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	bool (*vmcall)(struct vt_vcpu *vcpu, struct vt_exit *exit, u64 func);
	/*
	 * An NMI exit: true when it was the debugger's own IPI (parking this
	 * CPU); false leaves the core to deliver the guest's NMI.
	 */
	bool (*nmi)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	/*
	 * The guest triple-faulted: returns when the debugger is done with the
	 * machine; the core then leaves VMX on this CPU as it does without one.
	 */
	bool (*triple_fault)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	/* VMX-preemption timer expired (enabled only while a stub polls). */
	bool (*preempt_timer)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	/* I/O instruction to a port set in the I/O bitmap (the stub's UART). */
	bool (*io)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	/* MOV to/from DRn while the debugger owns the debug registers. */
	bool (*dr_access)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	/*
	 * The guest took an INIT: true when the debugger owns the debug
	 * registers and has given its shadows their INIT values; false leaves
	 * the core to write them into the registers.
	 */
	bool (*init_debug_registers)(struct vt_vcpu *vcpu);
	/*
	 * Last thing before every VM entry, whatever the exit was: a CPU that
	 * was asked to stop while it was in VMX root (its NMI went to the
	 * host) parks here instead of running the guest.
	 */
	void (*pre_entry)(struct vt_vcpu *vcpu, struct vt_exit *exit);
	/*
	 * The syscall trap (syscall_trap.h) executed a SYSCALL or SYSRET for
	 * the guest; from_rip is the instruction's address, RIP is past it.
	 */
	void (*syscall)(struct vt_vcpu *vcpu, struct vt_exit *exit, enum vt_sys_edge edge,
			u64 from_rip);
};

#define VT_MAX_RAM		128	/* RAM ranges guest reads may touch */

/* A private 4 KiB window onto any physical page, usable in VMX root only. */
#define VT_WINDOW_SLOTS		512
struct vt_host_window {
	u64 *tables[4];		/* the levels under the host top-level entry */
	u32 levels;		/* 3 with 4-level paging, 4 with 5-level */
	u64 *pte;		/* the last level: one entry per slot */
	u64 base;		/* virtual address of slot 0 */
};

struct vt_hv {
	struct vt_vmx_caps caps;
	struct vt_controls ctls;
	struct vt_ept ept;
	struct vt_mtrr_state mtrr;
	void *host_pml4;	/* the top of root's own page tables (host_pt.h) */
	u32 host_levels;	/* 4 or 5 */
	u64 *root_idt;		/* VMX root's IDT (root_idt.h) */
	u64 host_cr3;
	u64 key;		/* per-load VMCALL key */
	/*
	 * A hypervisor below this one (KVM, Hyper-V, VMware) announced itself
	 * through CPUID.1:ECX[31] before vtice loaded: the kernel saw it at boot
	 * and talks to it with VMCALL (parent.c).
	 */
	enum vt_parent parent;
	const struct vt_callbacks *cb;
	struct vt_host_window window;
	u8 *io_bitmap;		/* bitmaps A and B (2 pages), or NULL: no I/O exits */
	u64 preempt_ticks;	/* VMX-preemption timer reload value, 0 = off */
	struct vt_shield shield;	/* what the guest cannot reach, shield.h */
	/*
	 * The kernel's RAM, the only memory VMX root reads for the guest; mem.map
	 * stays NULL in the module (vt_own_mem maps through the CPU's window slot).
	 */
	struct vt_ram_range ram[VT_MAX_RAM];
	struct vt_guest_mem mem;
	struct vt_sys_filter sys_filter;	/* syscall events (syscall_trap.h) */
	u16 sys_strings[VT_SYS_STRING_SLOTS];	/* ...and the strings they copy */
	struct vt_sys_numbers sys_numbers;	/* ...and the syscalls recorded */
	struct vt_sys_stub sys_stub;	/* the trap the debug stub armed (syscall_trap.h) */
	struct vt_profile_stub profile_stub;	/* the profiler the debug stub armed (profile.h) */
	struct vt_task_layout task_layout;
	struct vt_lbr_msrs lbr_msrs;	/* the LBR stack's MSRs, for lbr_view.h */
	struct vt_tsc_hide tsc;		/* tsc_offset=1 (tsc_hide.h) */
	/* stealth=1 (VTICE_VMCALL_STEALTH): 0, 1 while the copies are retired, 2 after */
	u32 stealth_stage;
	u32 stealth_calls;	/* CPUs that have made the call */
	bool sealed;		/* every CPU has: no VMCALL is honoured any more */
	/*
	 * The stub's "monitor unload" and then a detach: each CPU leaves VMX
	 * at its next exit where the kernel can take over (exit.c).
	 */
	bool unloading;
};

#define VT_HOST_STACK_PAGES	8
#define VT_EXIT_SLOTS		80	/* basic exit reasons counted one by one */

/*
 * Exit counts: the part of a vCPU the kernel reads (the stats ioctls), on a
 * page of its own. VMX root only ever adds to them.
 */
struct vt_exit_counts {
	u64 total;
	u64 unknown;
	u64 by_reason[VT_EXIT_SLOTS];
	u64 syscalls_seen;	/* SYSCALL/SYSRET executed for the guest while armed */
	u64 syscalls_recorded;	/* ...whose task passed the filter and that fit the ring */
	u64 root_nmis;		/* NMIs that arrived in VMX root (root_idt.c) */
	u64 profile_samples;	/* samples the profiler recorded (profile.c) */
	struct vt_root_log log;	/* what root has to report (root_log.h) */
};
VT_STATIC_ASSERT(sizeof(struct vt_exit_counts) <= VT_PAGE_SIZE, "exit counts fit their page");

struct vt_vcpu {
	struct vt_hv *hv;
	u32 cpu;
	u16 vpid;
	bool vmxon_done;
	bool launched;
	bool cr4_vmxe_was_set;
	u64 cr4_before;
	void *vmxon_region;
	void *vmcs;
	u8 *msr_bitmap;
	u8 *stack;		/* VT_HOST_STACK_PAGES, aligned to its size (root_idt.h) */
	void *host_gdt;		/* this CPU's GDT as VMX root sees it (root_idt.h) */
	u64 debugctl_shadow;	/* what the guest believes DEBUGCTL holds */
	u64 debugctl_owned;	/* bits the hypervisor sets (BTF/LBR tracing) */
	u64 debugctl_yielded;	/* owned bits left to a guest that uses them itself (LBR) */
	bool nmi_pending;
	bool root_nmi;		/* an NMI came while in VMX root; taken before VM entry */
	/* events.c: guest interrupts held off while a TF single step runs */
	bool holding_events;
	bool gating_events;	/* ...or a tracer lets them in itself (vt_gate_events) */
	u64 held_irqs[4];	/* vectors acknowledged and not yet delivered */
	struct vt_ring ring;
	struct vt_sys_vcpu sys;	/* syscall events (syscall_trap.h) */
	struct vt_lbr_view lbr_view;	/* the stack the kernel reads while root owns LBR */
	struct vt_exit_counts *counts;
	u32 last_vm_error;	/* VM_INSTRUCTION_ERROR of the last failure */
	u32 apic_id;		/* this CPU's local APIC ID (apic.c), read when virtualized */
	bool x2apic;		/* ...and its APIC is in x2APIC mode */
	struct vt_guest_regs *regs;	/* the GPRs of the exit being handled, in VMX root */
	struct vt_timer timer;	/* the VMX-preemption timer's users (profile.h) */
	struct vt_profile_vcpu profile;
	u64 tsc_applied;	/* the hidden TSC cycles this CPU's offset takes out (tsc_hide.h) */
};

/*
 * Both are page-allocated (vt_os_alloc_pages), so the shield can give the
 * kernel a copy of them while VMX root keeps the original.
 */
#define VT_HV_PAGES	VT_PAGES_FOR(sizeof(struct vt_hv))
#define VT_VCPU_PAGES	VT_PAGES_FOR(sizeof(struct vt_vcpu))

/* hv.c */
int vt_hv_init(struct vt_hv *hv, u64 ept_top_hint);
void vt_hv_fini(struct vt_hv *hv);
void vt_hv_set_callbacks(struct vt_hv *hv, const struct vt_callbacks *cb);
/*
 * Shield the pages only VMX root uses (the host top-level table, the host
 * window's tables, the I/O bitmaps) and give the kernel a copy of hv
 * itself. Before any CPU is virtualized.
 */
int vt_hv_shield_own_pages(struct vt_hv *hv);
/* Shield a physically contiguous allocation of ours (vt_os_alloc_pages). */
int vt_hv_hide(struct vt_hv *hv, const void *p, u32 pages);
int vt_hv_copy(struct vt_hv *hv, const void *p, u32 pages);
/*
 * Extra interception a debugger asks for, before any CPU is virtualized
 * (may sleep): I/O exits on [first, first + count), the preemption timer firing
 * every period_tsc TSC cycles, exits on the exceptions in mask (bit n =
 * vector n) from a CPU's very first VM entry.
 */
/*
 * The RAM the guest's memory may be read from in VMX root (guest_mem.h):
 * at load, before any CPU is virtualized. -VT_EINVAL past VT_MAX_RAM.
 */
int vt_hv_set_ram(struct vt_hv *hv, const struct vt_ram_range *ram, u32 n);
int vt_hv_intercept_ports(struct vt_hv *hv, u16 first, u16 count);
int vt_hv_enable_preempt_timer(struct vt_hv *hv, u64 period_tsc);
/* A control the capability MSR allows to be 1 (SDM Vol. 3D A.3-A.5). */
bool vt_may_set(u64 cap_msr, u32 bits);
/* INVEPT of our EPT on this CPU, of a type the CPU supports (VMX root only). */
void vt_hv_invept_local(const struct vt_hv *hv);
/* The same for the hierarchy eptp names (a CPU's private view, ept.h). */
void vt_hv_invept_eptp(const struct vt_hv *hv, u64 eptp);
void vt_hv_intercept_exceptions(struct vt_hv *hv, u32 mask);

/* host_window.c: map pa at this CPU's window slot; VMX root only. */
int vt_window_init(struct vt_host_window *w, u64 *host_top, const u64 *kernel_top, bool la57);
void vt_window_fini(struct vt_host_window *w);
void *vt_window_map(struct vt_host_window *w, u32 slot, u64 pa);
/* A device page (the local APIC's), uncached, at this CPU's second slot. */
void *vt_window_map_uncached(struct vt_host_window *w, u32 slot, u64 pa);

/*
 * apic.c: NMIs between CPUs from VMX root, by the local APIC's ICR, never
 * the kernel's APIC driver. vt_apic_read_id() runs on the vCPU's own CPU
 * when it is virtualized; vt_send_nmi() in VMX root on `from`'s CPU.
 * vt_apic_timer_live(): in VMX root, whether this CPU's local APIC timer
 * can interrupt it (software-enabled APIC, timer LVT unmasked); true when
 * the APIC cannot be read.
 */
void vt_apic_read_id(struct vt_vcpu *vcpu);
int vt_send_nmi(struct vt_vcpu *from, const struct vt_vcpu *to);
bool vt_apic_timer_live(struct vt_vcpu *vcpu);
/*
 * The running vCPU's guest memory through its own CR3 and window slot, at
 * any exit: bytes copied (short where the walk stopped) or -VT_EFAULT.
 */
int vt_own_mem(const struct vt_vcpu *vcpu, u64 gva, void *buf, u32 len, bool write);

/* vmx_caps.c */
int vt_caps_read(struct vt_vmx_caps *caps);
int vt_adjust_controls(u64 cap_msr, u32 required, u32 optional, u32 *out);
int vt_compute_controls(const struct vt_vmx_caps *caps, struct vt_controls *ctls);
int vt_check_feature_control(void);
u64 vt_probe_debugctl(void);

/*
 * vcpu.c: all run on the vCPU's own CPU with interrupts disabled,
 * except alloc/free, which may sleep.
 */
int vt_vcpu_alloc(struct vt_hv *hv, struct vt_vcpu *vcpu, u32 cpu);
void vt_vcpu_free(struct vt_vcpu *vcpu);
/*
 * Hide the VMXON region, VMCS, MSR bitmap and host stack from the guest,
 * and give it a copy of the vCPU itself (its exit counts stay shared).
 */
int vt_vcpu_shield(struct vt_vcpu *vcpu);
int vt_vcpu_virtualize(struct vt_vcpu *vcpu);
int vt_vcpu_devirtualize(struct vt_vcpu *vcpu);
u64 vt_vcpu_emit_test(struct vt_vcpu *vcpu, u32 count, u64 value, u64 *stored);
/* A keyed VMCALL from this CPU's guest side: returns RAX, *out = RDX. */
u64 vt_vcpu_vmcall(struct vt_vcpu *vcpu, u64 func, u64 arg, u64 *out);
/* Arm (with a filter, syscall_trap.h) or disarm this CPU's syscall trap: RAX. */
u64 vt_vcpu_syscalls(struct vt_vcpu *vcpu, bool on, bool quiet, u32 pid, const char comm[16]);
/* Which syscalls' entries copy a string (vmcall.h's slots, RDX and R8): RAX. */
u64 vt_vcpu_syscall_strings(struct vt_vcpu *vcpu, u64 slots_lo, u64 slots_hi);
/* VTICE_VMCALL_SYSCALL_NUMBERS: one word of the set of syscalls recorded, or all of them. */
u64 vt_vcpu_syscall_numbers(struct vt_vcpu *vcpu, u64 word, u64 bits);
/* The syscall-path tracer's VMCALL (vmcall.h, R8-R10 per op): RAX, *traced = RDX. */
u64 vt_vcpu_path_trace(struct vt_vcpu *vcpu, u32 op, u64 a, u64 b, u64 c, u64 *traced);
/* The probes' VMCALL (vmcall.h): RAX, *hits = RDX. */
u64 vt_vcpu_probes(struct vt_vcpu *vcpu, u32 op, u64 a, u64 b, u64 c, u64 *hits);
/* The profiler's VMCALL on this CPU (vmcall.h): RAX, *samples = RDX. */
u64 vt_vcpu_profile(struct vt_vcpu *vcpu, u64 period_tsc, u32 stack_bytes, u32 pid, const char comm[16],
		    u64 *samples);

/* control.c: for debugger callbacks, in VMX root on the current vCPU */
int vt_set_exception_intercept(u32 vector, bool on);
int vt_set_mtf(struct vt_vcpu *vcpu, bool on);
int vt_set_mov_dr_exiting(struct vt_vcpu *vcpu, bool on);
int vt_set_debugctl_owned(struct vt_vcpu *vcpu, u64 bits);
/* vcpu.c: RDMSR/WRMSR of msr exit (on) or not, on this vCPU. */
void vt_set_msr_intercept(struct vt_vcpu *vcpu, u32 msr, bool on);

/*
 * events.c: hold the guest's external interrupts and NMIs off (they exit,
 * acknowledged, and wait) until released; then each is delivered when the
 * guest can take it, highest vector first. -VT_EOPNOTSUPP without the
 * controls. For debugger callbacks, in VMX root on the current vCPU.
 */
int vt_hold_events(struct vt_vcpu *vcpu, bool on);
bool vt_can_hold_events(const struct vt_hv *hv);
/*
 * A tracer's gate: interrupts and NMIs exit and wait, as held ones do, and
 * go in only through vt_deliver_held_event(), one at a time when the guest
 * can take it (not while a hold keeps them from a TF step); what waits when
 * the gate opens goes in through the windows. True from the latter when an
 * event was queued for this entry.
 */
int vt_gate_events(struct vt_vcpu *vcpu, bool on);
bool vt_deliver_held_event(struct vt_vcpu *vcpu);
/*
 * An INIT resets the local APIC: the interrupts and the NMI root took from
 * it for the guest go too, and no window waits for them. A hold or a gate
 * stays as it was (the debugger's, not the guest's).
 */
void vt_events_reset(struct vt_vcpu *vcpu);

/* vmcs.c */
int vt_vmcs_setup(struct vt_vcpu *vcpu);

#ifdef __cplusplus
}
#endif

#endif /* VT_CORE_HV_H */
