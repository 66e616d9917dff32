// A virtualized fake CPU with a guest that makes syscalls: page tables for
// a user SYSCALL and a kernel SYSRETQ, a task_struct the per-CPU current
// pointer names, and the VMCALL that arms the syscall trap. Shared by the
// trap's tests and the syscall-path tracer's. The values are the SDM's
// (Vol. 2B SYSCALL, SYSRET) with Linux's own STAR/LSTAR/FMASK; the segment
// rights are those a real VMCS holds (hv_fixture.hpp).
#pragma once

#include "guest_pages.hpp"
#include "hv_fixture.hpp"

#include <cstring>
#include <vector>

extern "C" {
#include <vtice/records.h>
#include <vtice/vmcall.h>
}

namespace vtice::fake {

constexpr uint64_t kStar = (0x23ull << 48) | (0x10ull << 32);	// __USER32_CS, __KERNEL_CS
constexpr uint64_t kLstar = 0xffffffff81e00000ull;		// entry_SYSCALL_64
constexpr uint64_t kFmask = 0x257fd5;				// Linux's syscall mask (TF, IF, DF, AC...)
constexpr uint64_t kUserRip = 0x401000, kUserCode = 0x200000;
constexpr uint64_t kSysretRip = 0xffffffff81e000c0ull, kKernelCode = 0x210000;
constexpr uint64_t kPerCpuTask = 0xffff888000010008ull, kPerCpuPage = 0x300000;
constexpr uint64_t kTask = 0xffff888000020000ull, kTaskPage = 0x301000;
constexpr uint32_t kPidOff = 0x10, kTgidOff = 0x14, kCommOff = 0x20, kStackOff = 0x30;
// The task's 16 KiB kernel stack: its pt_regs (168 bytes) at the top, orig_ax 120 bytes in.
constexpr uint64_t kKernelStack = 0xffffc90000200000ull, kStackTopPage = 0x302000;
constexpr uint32_t kOrigAxOff = 0x4000 - 168 + 120;
constexpr uint64_t kUdExit = 6 | (3u << 8) | (1u << 31);	// #UD, hardware exception, valid
constexpr uint64_t kEferGuest = 0xd01;				// SCE | LME | LMA | NX

class SyscallFixture : public HvFixture, protected GuestPages {
protected:
	vt_ram_range ram{0, 64ull << 20};

	void SetUp() override
	{
		HvFixture::SetUp();
		virtualize();
		hv.mem.ram = &ram;
		hv.mem.nr_ram = 1;
		hv.mem.map = GuestPages::map_fn;
		hv.mem.ctx = static_cast<GuestPages *>(this);
		hv.task_layout = {kPidOff, kTgidOff, kCommOff, kStackOff, kOrigAxOff, true};
		vcpu.sys.current_task = kPerCpuTask;
		auto &c = cpu();
		c.msrs[MSR_STAR] = kStar;
		c.msrs[MSR_LSTAR] = kLstar;
		c.msrs[MSR_SYSCALL_MASK] = kFmask;
		c.vmcs[GUEST_IA32_EFER] = kEferGuest;
		build_guest_memory();
	}

	void build_guest_memory()
	{
		uint64_t root = new_table();
		cpu().vmcs[GUEST_CR3] = root;
		map(root, 4, kUserRip & ~0xfffull, kUserCode);
		map(root, 4, kSysretRip & ~0xfffull, kKernelCode);
		map(root, 4, kPerCpuTask & ~0xfffull, kPerCpuPage);
		map(root, 4, kTask, kTaskPage);
		put(kPerCpuPage + (kPerCpuTask & 0xfff), &kTask, 8);
		map(root, 4, kKernelStack + 0x3000, kStackTopPage);
		put(kTaskPage + kStackOff, &kKernelStack, 8);
		set_task(4242, 4240, "vtsys");
		code_at(kUserCode, {0x0f, 0x05});			// syscall
		code_at(kKernelCode + (kSysretRip & 0xfff), {0x48, 0x0f, 0x07});	// sysretq
	}

	void set_task(uint32_t pid, uint32_t tgid, const char *comm)
	{
		char name[16] = {};
		std::strncpy(name, comm, sizeof(name) - 1);
		put(kTaskPage + kPidOff, &pid, 4);
		put(kTaskPage + kTgidOff, &tgid, 4);
		put(kTaskPage + kCommOff, name, 16);
	}

	void code_at(uint64_t pa, std::vector<uint8_t> bytes) { put(pa, bytes.data(), bytes.size()); }

	uint64_t arm(bool on, uint32_t pid = 0, const char *comm = "", bool quiet = false)
	{
		char name[16] = {};
		uint64_t comm_lo, comm_hi;
		std::strncpy(name, comm, sizeof(name) - 1);
		std::memcpy(&comm_lo, name, 8);
		std::memcpy(&comm_hi, name + 8, 8);
		uint64_t mode = on ? VTICE_VMCALL_SYSCALLS_ON | (quiet ? VTICE_VMCALL_SYSCALLS_QUIET : 0) : 0;
		return keyed_vmcall(VTICE_VMCALL_SYSCALLS, mode, pid, comm_lo, comm_hi).rax;
	}

	// A user task at kUserRip executing SYSCALL: openat(AT_FDCWD, path, flags, mode).
	vt_guest_regs user_syscall()
	{
		guest_user_mode();
		auto &c = cpu();
		c.vmcs[GUEST_RIP] = kUserRip;
		c.vmcs[GUEST_RFLAGS] = 0x10246;		// IF, ZF, PF, RF
		c.vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
		vt_guest_regs r{};
		r.rax = 257;
		r.rdi = (uint64_t)-100;
		r.rsi = 0x7ffd1000;
		r.rdx = 0x80000;
		r.r10 = 0644;
		r.r8 = 0x88;
		r.r9 = 0x99;
		r.rcx = 0xc0c0;
		r.r11 = 0xd0d0;
		return r;
	}

	// The number the entry code saved for the syscall the task is in (pt_regs->orig_ax).
	void set_orig_ax(uint64_t nr) { put(kStackTopPage + (kOrigAxOff & 0xfff), &nr, 8); }

	vt_guest_regs kernel_sysret(uint64_t rax = 3)
	{
		guest_kernel_mode();
		auto &c = cpu();
		c.vmcs[GUEST_RIP] = kSysretRip;
		c.vmcs[GUEST_RFLAGS] = 0x46;
		c.vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
		vt_guest_regs r{};
		r.rax = rax;
		r.rcx = kUserRip + 2;
		r.r11 = 0x246;
		return r;
	}

	bool ud_exit(vt_guest_regs &r)
	{
		cpu().vmcs[VM_EXIT_INTR_INFO] = kUdExit;
		return vm_exit(EXIT_REASON_EXCEPTION_NMI, 0, r);
	}

	std::vector<vtice_record> records()
	{
		std::vector<vtice_record> out;
		for (uint64_t i = 0; i < vcpu.ring.hdr->head; i++)
			out.push_back(vcpu.ring.records[i & (vcpu.ring.nr_records - 1)]);
		return out;
	}

	bool ud_exits() { return cpu().vmcs[EXCEPTION_BITMAP] & (1u << 6); }
};

}  // namespace vtice::fake
