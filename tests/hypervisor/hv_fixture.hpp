// A virtualized fake CPU: the state most exit/VMCALL tests start from.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "fake_cpu.hpp"

extern "C" {
#include <vtice/ioctl.h>
}

namespace vtice::fake {

class HvFixture : public ::testing::Test {
protected:
	vt_hv hv{};
	vt_vcpu vcpu{};
	std::vector<uint8_t> ring_mem;
	bool hv_up = false, vcpu_up = false;

	void SetUp() override
	{
		reset();
		seed_vmx(bochs_skylake_x);
	}

	void TearDown() override
	{
		if (vcpu_up)
			vt_vcpu_free(&vcpu);
		if (hv_up)
			vt_hv_fini(&hv);
		EXPECT_EQ(live_allocations(), 0u) << "pages leaked";
	}

	// Global init + one vCPU with a ring of `records` records.
	int init(uint32_t records = 64)
	{
		int ret = vt_hv_init(&hv, 0);
		if (ret)
			return ret;
		hv_up = true;
		ret = vt_vcpu_alloc(&hv, &vcpu, 0);
		if (ret)
			return ret;
		vcpu_up = true;
		ring_mem.assign(VTICE_RING_HEADER_SIZE + records * sizeof(vtice_record), 0);
		vt_ring_init(&vcpu.ring, ring_mem.data(), records, 0);
		return 0;
	}

	void virtualize()
	{
		ASSERT_EQ(init(), 0);
		ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
		cpu().trace.clear();
	}

	// Guest at CPL 0 in 64-bit mode, RIP 0x1000, with a 2-byte instruction.
	void guest_kernel_mode()
	{
		auto &c = cpu();
		c.vmcs[GUEST_CS_AR_BYTES] = 0xa09b;
		c.vmcs[GUEST_SS_AR_BYTES] = 0xc093;
		c.vmcs[GUEST_RIP] = 0x1000;
		c.vmcs[VM_EXIT_INSTRUCTION_LEN] = 2;
	}

	void guest_user_mode()
	{
		guest_kernel_mode();
		cpu().vmcs[GUEST_CS_AR_BYTES] = 0xa0fb;
		cpu().vmcs[GUEST_SS_AR_BYTES] = 0xc0f3;	// SS.DPL = 3: CPL 3
	}

	uint64_t entry_event() { return cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD]; }

	// The kernel's VMCALL func with the key and RDX, R8-R10 (vmcall.h):
	// the registers after it (RAX the status, RDX what it returned).
	vt_guest_regs keyed_vmcall(uint64_t func, uint64_t rdx = 0, uint64_t r8 = 0, uint64_t r9 = 0, uint64_t r10 = 0)
	{
		guest_kernel_mode();
		cpu().vmcs[VM_EXIT_INSTRUCTION_LEN] = 3;
		vt_guest_regs r{};
		r.rax = func;
		r.rcx = hv.key;
		r.rdx = rdx;
		r.r8 = r8;
		r.r9 = r9;
		r.r10 = r10;
		EXPECT_TRUE(vm_exit(EXIT_REASON_VMCALL, 0, r));
		return r;
	}

	// A RDMSR or WRMSR exit of the guest's (ECX = msr, EDX:EAX = value);
	// returns the registers after it.
	vt_guest_regs msr_access(uint32_t reason, uint32_t msr, uint64_t value = 0)
	{
		vt_guest_regs r{};
		r.rcx = msr;
		r.rax = value & 0xffffffffu;
		r.rdx = value >> 32;
		cpu().vmcs[VM_ENTRY_INTR_INFO_FIELD] = 0;
		EXPECT_TRUE(vm_exit(reason, 0, r));
		return r;
	}

	// Whether the MSR bitmap makes RDMSR and WRMSR of msr exit (SDM 3C
	// 25.6.9); vtice always intercepts both or neither.
	bool msr_exits(uint32_t msr)
	{
		bool high = msr >= MSR_BITMAP_HIGH_BASE;
		uint32_t bit = high ? msr - MSR_BITMAP_HIGH_BASE : msr;
		uint32_t rd = (high ? MSR_BITMAP_READ_HIGH : MSR_BITMAP_READ_LOW) + bit / 8;
		uint32_t wr = (high ? MSR_BITMAP_WRITE_HIGH : MSR_BITMAP_WRITE_LOW) + bit / 8;
		bool r = vcpu.msr_bitmap[rd] & (1u << (bit % 8));
		EXPECT_EQ(r, (bool)(vcpu.msr_bitmap[wr] & (1u << (bit % 8))));
		return r;
	}
};

// VM-entry interruption information for a hardware exception (SDM 3C 24.8.3):
// vector | type 3 << 8 | deliver-error-code << 11 | valid << 31.
constexpr uint64_t kInjectUD = 6 | (3u << 8) | (1u << 31);
constexpr uint64_t kInjectGP = 13 | (3u << 8) | (1u << 11) | (1u << 31);

}  // namespace vtice::fake
