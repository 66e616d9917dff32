/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every privileged instruction the hypervisor executes, in one header.
 *
 * In the module these are inline asm. The unit tests define VT_FAKE_CPU and
 * the same names resolve to tests/hypervisor/fake_cpu.cpp, a fake CPU whose
 * MSRs and VMCS fields a test seeds, inspects and can make fail. This header
 * is the only place in the core that distinguishes the two builds.
 *
 * VMX instructions report success/VMfailInvalid/VMfailValid through
 * CF and ZF (SDM Vol. 3C 31.2 "Conventions"); the wrappers return
 * VT_VMX_OK, VT_VMX_FAIL_INVALID or VT_VMX_FAIL_VALID.
 */
#ifndef VT_CORE_INTRIN_H
#define VT_CORE_INTRIN_H

#include "types.h"
#include "vmx_defs.h"
#include "vmx_status.h"
#include "os.h"

struct vt_cpuid_regs {
	u32 eax, ebx, ecx, edx;
};

/* Implemented outside this header in both builds. */
#ifdef __cplusplus
extern "C" {
#endif
/*
 * The launch stub (os/linux/vmx_entry.S): writes GUEST_RSP/GUEST_RIP so the
 * guest resumes right after VMLAUNCH in this very function, then launches.
 * Returns 0 when the caller now runs as a guest, VT_LAUNCH_* otherwise.
 */
int vt_vmx_launch(void);
/* Where VM exits land (HOST_RIP): saves GPRs, calls vt_exit_handler(). */
void vt_vmexit_stub(void);
struct vt_guest_regs;
/*
 * VMCALL from VMX root with the guest's general registers (all but RSP),
 * which then hold what the parent hypervisor answered (root_entry.S).
 */
void vt_parent_vmcall(struct vt_guest_regs *regs);
#ifdef __cplusplus
}
#endif
#define VT_LAUNCH_FAILED	1	/* VMLAUNCH failed: see VM_INSTRUCTION_ERROR */
#define VT_LAUNCH_WRITE_FAILED	2	/* VMWRITE of GUEST_RSP/RIP failed */

#ifdef VT_FAKE_CPU
#ifdef __cplusplus
extern "C" {
#endif
void vt_cpuid(u32 leaf, u32 subleaf, struct vt_cpuid_regs *out);
u64 vt_rdmsr(u32 msr);
void vt_wrmsr(u32 msr, u64 value);
u64 vt_read_cr0(void);
u64 vt_read_cr2(void);
u64 vt_read_cr3(void);
u64 vt_read_cr4(void);
u64 vt_read_cr8(void);
void vt_write_cr0(u64 v);
void vt_write_cr2(u64 v);
void vt_write_cr3(u64 v);
void vt_write_cr4(u64 v);
void vt_write_cr8(u64 v);
u64 vt_read_dr7(void);
void vt_write_dr7(u64 v);
u64 vt_read_dr(u32 n);
void vt_write_dr(u32 n, u64 v);
u64 vt_read_rflags(void);
void vt_sgdt(struct vt_desc_ptr *p);
void vt_sidt(struct vt_desc_ptr *p);
void vt_lgdt(const struct vt_desc_ptr *p);
void vt_lidt(const struct vt_desc_ptr *p);
u16 vt_str(void);
u16 vt_sldt(void);
u16 vt_read_cs(void);
u16 vt_read_ss(void);
u16 vt_read_ds(void);
u16 vt_read_es(void);
u16 vt_read_fs(void);
u16 vt_read_gs(void);
void vt_write_ds(u16 sel);
void vt_write_es(u16 sel);
void vt_write_fs(u16 sel);
void vt_write_gs(u16 sel);
void vt_write_ss(u16 sel);
bool vt_lar(u16 sel, u32 *ar);
bool vt_lsl(u16 sel, u32 *limit);
u64 vt_rdtsc(void);
u64 vt_xgetbv(u32 index);
void vt_xsetbv(u32 index, u64 value);
void vt_wbinvd(void);
int vt_vmxon(u64 pa);
void vt_vmxoff(void);
int vt_vmclear(u64 pa);
int vt_vmptrld(u64 pa);
int vt_vmread(u64 field, u64 *value);
int vt_vmwrite(u64 field, u64 value);
int vt_invept(u64 type, u64 eptp);
int vt_invvpid(u64 type, u16 vpid, u64 gla);
u64 vt_vmcall(u64 func, u64 key, u64 a1, u64 a2, u64 a3, u64 a4, u64 *out_rdx);
u8 vt_inb(u16 port);
void vt_outb(u16 port, u8 value);
void vt_invlpg(u64 va);
void vt_pause(void);
#ifdef __cplusplus
}
#endif

#else /* !VT_FAKE_CPU: real instructions */


static inline void vt_cpuid(u32 leaf, u32 subleaf, struct vt_cpuid_regs *out)
{
	asm volatile("cpuid"
		     : "=a"(out->eax), "=b"(out->ebx), "=c"(out->ecx), "=d"(out->edx)
		     : "a"(leaf), "c"(subleaf));
}

static inline u64 vt_rdmsr(u32 msr)
{
	u32 lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((u64)hi << 32) | lo;
}

static inline void vt_wrmsr(u32 msr, u64 value)
{
	asm volatile("wrmsr" :: "c"(msr), "a"((u32)value), "d"((u32)(value >> 32)) : "memory");
}

#define VT_DEFINE_READ_REG(name, insn)					\
static inline u64 name(void)						\
{									\
	u64 v;								\
	asm volatile(insn : "=r"(v) :: "memory");			\
	return v;							\
}
#define VT_DEFINE_WRITE_REG(name, insn)					\
static inline void name(u64 v)						\
{									\
	asm volatile(insn :: "r"(v) : "memory");			\
}
VT_DEFINE_READ_REG(vt_read_cr0, "mov %%cr0, %0")
VT_DEFINE_READ_REG(vt_read_cr2, "mov %%cr2, %0")
VT_DEFINE_READ_REG(vt_read_cr3, "mov %%cr3, %0")
VT_DEFINE_READ_REG(vt_read_cr4, "mov %%cr4, %0")
VT_DEFINE_READ_REG(vt_read_cr8, "mov %%cr8, %0")
VT_DEFINE_READ_REG(vt_read_dr7, "mov %%dr7, %0")
VT_DEFINE_READ_REG(vt_read_rflags, "pushfq; popq %0")
VT_DEFINE_WRITE_REG(vt_write_cr0, "mov %0, %%cr0")
VT_DEFINE_WRITE_REG(vt_write_cr2, "mov %0, %%cr2")
VT_DEFINE_WRITE_REG(vt_write_cr3, "mov %0, %%cr3")
VT_DEFINE_WRITE_REG(vt_write_cr4, "mov %0, %%cr4")
VT_DEFINE_WRITE_REG(vt_write_cr8, "mov %0, %%cr8")
VT_DEFINE_WRITE_REG(vt_write_dr7, "mov %0, %%dr7")

VT_DEFINE_READ_REG(vt_read_dr0, "mov %%db0, %0")
VT_DEFINE_READ_REG(vt_read_dr1, "mov %%db1, %0")
VT_DEFINE_READ_REG(vt_read_dr2, "mov %%db2, %0")
VT_DEFINE_READ_REG(vt_read_dr3, "mov %%db3, %0")
VT_DEFINE_READ_REG(vt_read_dr6, "mov %%db6, %0")
VT_DEFINE_WRITE_REG(vt_write_dr0, "mov %0, %%db0")
VT_DEFINE_WRITE_REG(vt_write_dr1, "mov %0, %%db1")
VT_DEFINE_WRITE_REG(vt_write_dr2, "mov %0, %%db2")
VT_DEFINE_WRITE_REG(vt_write_dr3, "mov %0, %%db3")
VT_DEFINE_WRITE_REG(vt_write_dr6, "mov %0, %%db6")

/*
 * DR0-DR3 and DR6 by number (n = 0..3, 6). VMX transitions switch none of
 * them (only DR7, through the VMCS), SDM Vol. 3C 27.3.1, 28.5.1.
 */
static inline u64 vt_read_dr(u32 n)
{
	switch (n) {
	case 0:
		return vt_read_dr0();
	case 1:
		return vt_read_dr1();
	case 2:
		return vt_read_dr2();
	case 3:
		return vt_read_dr3();
	case 6:
		return vt_read_dr6();
	}
	return 0;
}

static inline void vt_write_dr(u32 n, u64 v)
{
	switch (n) {
	case 0:
		vt_write_dr0(v);
		break;
	case 1:
		vt_write_dr1(v);
		break;
	case 2:
		vt_write_dr2(v);
		break;
	case 3:
		vt_write_dr3(v);
		break;
	case 6:
		vt_write_dr6(v);
		break;
	}
}

static inline void vt_sgdt(struct vt_desc_ptr *p)
{
	asm volatile("sgdt %0" : "=m"(*p));
}

static inline void vt_sidt(struct vt_desc_ptr *p)
{
	asm volatile("sidt %0" : "=m"(*p));
}

static inline void vt_lgdt(const struct vt_desc_ptr *p)
{
	asm volatile("lgdt %0" :: "m"(*p) : "memory");
}

static inline void vt_lidt(const struct vt_desc_ptr *p)
{
	asm volatile("lidt %0" :: "m"(*p) : "memory");
}

#define VT_DEFINE_READ_SEL(name, insn)					\
static inline u16 name(void)						\
{									\
	u16 sel;							\
	asm volatile(insn : "=r"(sel));					\
	return sel;							\
}
#define VT_DEFINE_WRITE_SEL(name, insn)					\
static inline void name(u16 sel)					\
{									\
	asm volatile(insn :: "r"(sel) : "memory");			\
}
VT_DEFINE_READ_SEL(vt_str, "str %0")
VT_DEFINE_READ_SEL(vt_sldt, "sldt %0")
VT_DEFINE_READ_SEL(vt_read_cs, "mov %%cs, %0")
VT_DEFINE_READ_SEL(vt_read_ss, "mov %%ss, %0")
VT_DEFINE_READ_SEL(vt_read_ds, "mov %%ds, %0")
VT_DEFINE_READ_SEL(vt_read_es, "mov %%es, %0")
VT_DEFINE_READ_SEL(vt_read_fs, "mov %%fs, %0")
VT_DEFINE_READ_SEL(vt_read_gs, "mov %%gs, %0")
VT_DEFINE_WRITE_SEL(vt_write_ds, "mov %0, %%ds")
VT_DEFINE_WRITE_SEL(vt_write_es, "mov %0, %%es")
VT_DEFINE_WRITE_SEL(vt_write_fs, "mov %0, %%fs")
VT_DEFINE_WRITE_SEL(vt_write_gs, "mov %0, %%gs")
VT_DEFINE_WRITE_SEL(vt_write_ss, "mov %0, %%ss")

static inline bool vt_lar(u16 sel, u32 *ar)
{
	u32 v = 0;
	bool ok;

	asm volatile("lar %k2, %1; setz %0" : "=qm"(ok), "+r"(v) : "r"((u32)sel) : "cc");
	*ar = v;
	return ok;
}

static inline bool vt_lsl(u16 sel, u32 *limit)
{
	u32 v = 0;
	bool ok;

	asm volatile("lsl %k2, %1; setz %0" : "=qm"(ok), "+r"(v) : "r"((u32)sel) : "cc");
	*limit = v;
	return ok;
}

static inline u64 vt_rdtsc(void)
{
	u32 lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

static inline u64 vt_xgetbv(u32 index)
{
	u32 lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(index));
	return ((u64)hi << 32) | lo;
}

static inline void vt_xsetbv(u32 index, u64 value)
{
	asm volatile("xsetbv" :: "c"(index), "a"((u32)value), "d"((u32)(value >> 32)) : "memory");
}

static inline void vt_wbinvd(void)
{
	asm volatile("wbinvd" ::: "memory");
}

#define VT_DEFINE_VMX_PA(name, insn)					\
static inline int name(u64 pa)						\
{									\
	bool cf, zf;							\
	asm volatile(insn " %2; setc %0; setz %1"			\
		     : "=qm"(cf), "=qm"(zf) : "m"(pa) : "cc", "memory");\
	return VT_VMX_STATUS(cf, zf);					\
}
/*
 * VMXON runs only in the OS's context, at bring-up, where a fault must come
 * back as VT_VMX_FAULT rather than as the kernel's oops: the OS layer
 * provides it, with its exception fixup (os/linux/os_linux.c).
 */
int vt_vmxon(u64 pa);
VT_DEFINE_VMX_PA(vt_vmclear, "vmclear")
VT_DEFINE_VMX_PA(vt_vmptrld, "vmptrld")

static inline void vt_vmxoff(void)
{
	asm volatile("vmxoff" ::: "cc", "memory");
}

static inline int vt_vmread(u64 field, u64 *value)
{
	bool cf, zf;
	u64 v = 0;

	asm volatile("vmread %3, %2; setc %0; setz %1"
		     : "=qm"(cf), "=qm"(zf), "+r"(v) : "r"(field) : "cc");
	*value = v;
	return VT_VMX_STATUS(cf, zf);
}

static inline int vt_vmwrite(u64 field, u64 value)
{
	bool cf, zf;

	asm volatile("vmwrite %3, %2; setc %0; setz %1"
		     : "=qm"(cf), "=qm"(zf) : "r"(field), "r"(value) : "cc", "memory");
	return VT_VMX_STATUS(cf, zf);
}

static inline int vt_invept(u64 type, u64 eptp)
{
	struct { u64 eptp, reserved; } desc = { eptp, 0 };
	bool cf, zf;

	asm volatile("invept %2, %3; setc %0; setz %1"
		     : "=qm"(cf), "=qm"(zf) : "m"(desc), "r"(type) : "cc", "memory");
	return VT_VMX_STATUS(cf, zf);
}

static inline int vt_invvpid(u64 type, u16 vpid, u64 gla)
{
	struct { u64 vpid, gla; } desc = { vpid, gla };
	bool cf, zf;

	asm volatile("invvpid %2, %3; setc %0; setz %1"
		     : "=qm"(cf), "=qm"(zf) : "m"(desc), "r"(type) : "cc", "memory");
	return VT_VMX_STATUS(cf, zf);
}

/* The guest side of the VMCALL ABI (include/uapi/vtice/vmcall.h). */
static inline u64 vt_vmcall(u64 func, u64 key, u64 a1, u64 a2, u64 a3, u64 a4, u64 *out_rdx)
{
	register u64 r8 asm("r8") = a2;
	register u64 r9 asm("r9") = a3;
	register u64 r10 asm("r10") = a4;
	u64 rax = func, rcx = key, rdx = a1;

	asm volatile("vmcall"
		     : "+a"(rax), "+c"(rcx), "+d"(rdx), "+r"(r8), "+r"(r9), "+r"(r10)
		     :: "memory", "cc");
	if (out_rdx)
		*out_rdx = rdx;
	return rax;
}

static inline u8 vt_inb(u16 port)
{
	u8 v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void vt_outb(u16 port, u8 value)
{
	asm volatile("outb %0, %1" :: "a"(value), "Nd"(port));
}

static inline void vt_invlpg(u64 va)
{
	asm volatile("invlpg (%0)" :: "r"(va) : "memory");
}

static inline void vt_pause(void)
{
	asm volatile("pause" ::: "memory");
}

#endif /* VT_FAKE_CPU */
#endif /* VT_CORE_INTRIN_H */
