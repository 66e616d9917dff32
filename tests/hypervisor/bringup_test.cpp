// Per-CPU bring-up: success, and every failing step rolls back exactly.
#include "hv_fixture.hpp"

using namespace vtice::fake;

class Bringup : public HvFixture {
protected:
	uint64_t cr4_before = 0;

	void SetUp() override
	{
		HvFixture::SetUp();
		ASSERT_EQ(init(), 0);
		cpu().trace.clear();	// from here on, the per-CPU bring-up's own steps
		cr4_before = cpu().cr4;
	}

	// A failed bring-up leaves the CPU as it found it.
	void expect_rolled_back(int ret)
	{
		auto &c = cpu();
		EXPECT_NE(ret, 0);
		EXPECT_FALSE(c.in_vmx) << "VMXOFF after a successful VMXON";
		EXPECT_EQ(c.cr4, cr4_before) << "CR4.VMXE restored";
		EXPECT_FALSE(vcpu.launched);
		EXPECT_EQ(c.count("vmxon"), c.count("vmxoff") + (c.failing("vmxon") ? 1 : 0));
	}
};

TEST_F(Bringup, Succeeds)
{
	ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
	auto &c = cpu();
	EXPECT_TRUE(vcpu.launched);
	EXPECT_TRUE(c.in_vmx);
	EXPECT_TRUE(c.cr4 & X86_CR4_VMXE);
	EXPECT_EQ(c.trace, (std::vector<std::string>{"write_cr4", "vmxon", "vmclear", "vmptrld",
						     "invept", "invvpid", "vmlaunch"}));
	// the VMCS as the SDM wants it
	EXPECT_EQ(c.vmcs[VMCS_LINK_POINTER], ~0ull);
	EXPECT_EQ(c.vmcs[CR4_GUEST_HOST_MASK], X86_CR4_VMXE);
	EXPECT_EQ(c.vmcs[CR4_READ_SHADOW], cr4_before);
	EXPECT_EQ(c.vmcs[GUEST_CR4], cr4_before | X86_CR4_VMXE);
	EXPECT_EQ(c.vmcs[HOST_CR3], hv.host_cr3);
	EXPECT_NE(hv.host_cr3, c.cr3) << "own top-level page table, not the current one";
	EXPECT_EQ(c.vmcs[EPT_POINTER], hv.ept.eptp);
	EXPECT_EQ(c.vmcs[VIRTUAL_PROCESSOR_ID], 1u);
	EXPECT_EQ(c.vmcs[GUEST_CS_AR_BYTES], 0xa09bu);
	EXPECT_EQ(c.vmcs[GUEST_TR_BASE], 0xfffffe0000003000ull);
	EXPECT_EQ(c.vmcs[GUEST_TR_AR_BYTES], 0x8bu);
	EXPECT_EQ(c.vmcs[GUEST_LDTR_AR_BYTES], VMX_AR_UNUSABLE_MASK);
	EXPECT_EQ(c.vmcs[GUEST_DS_AR_BYTES], VMX_AR_UNUSABLE_MASK);
	EXPECT_EQ(c.vmcs[GUEST_GS_BASE], 0xffff88803ec00000ull);
	EXPECT_EQ(c.vmcs[HOST_TR_SELECTOR], 0x40u);
	EXPECT_EQ(c.vmcs[HOST_TR_BASE], 0xfffffe0000003000ull);
	EXPECT_EQ(c.vmcs[HOST_RIP], reinterpret_cast<uint64_t>(&vt_vmexit_stub));
	EXPECT_EQ(c.vmcs[HOST_RSP] % 16, 0u);
	EXPECT_EQ(c.vmcs[GUEST_IA32_EFER], 0xd01u);
	EXPECT_EQ(c.vmcs[HOST_IA32_PAT], c.msrs[MSR_IA32_CR_PAT]);
	// the MSR bitmap intercepts DEBUGCTL only (the VMX MSRs read as bare)
	const uint8_t *bm = vcpu.msr_bitmap;
	auto read_bit = [&](uint32_t msr) { return (bm[msr / 8] >> (msr % 8)) & 1; };
	auto write_bit = [&](uint32_t msr) { return (bm[2048 + msr / 8] >> (msr % 8)) & 1; };
	EXPECT_TRUE(read_bit(0x1d9) && write_bit(0x1d9));
	EXPECT_FALSE(read_bit(0x480) || read_bit(0x3a) || read_bit(0x10) || read_bit(0x1b));
	for (int i = 1024; i < 2048; i++)
		EXPECT_EQ(bm[i], 0) << "high MSRs (EFER, FS/GS base) run natively";
}

TEST_F(Bringup, WindowMapsAPhysicalPageAtThePerCpuSlot)
{
	void *va = vt_window_map(&hv.window, 3, 0x12345678);
	EXPECT_EQ(reinterpret_cast<u64>(va), 0xffff800000000000ull + 3 * 4096 + 0x678);
	EXPECT_EQ(hv.window.pte[3] & 0x000ffffffffff000ull, 0x12345000u);
	EXPECT_EQ(hv.window.pte[3] & 0x8000000000000003ull, 0x8000000000000003ull)
		<< "present, writable, never executable";
	EXPECT_TRUE(cpu().traced("invlpg"));
	auto *pd = hv.window.tables[1];
	EXPECT_EQ(hv.window.tables[0][0] & ~0xfffull, reinterpret_cast<u64>(pd));
}

TEST_F(Bringup, VmxonFailure)
{
	cpu().fail.insert("vmxon");
	expect_rolled_back(vt_vcpu_virtualize(&vcpu));
	EXPECT_FALSE(cpu().traced("vmxoff")) << "no VMXOFF without VMXON";
}

TEST_F(Bringup, VmclearFailure)
{
	cpu().fail.insert("vmclear");
	expect_rolled_back(vt_vcpu_virtualize(&vcpu));
	EXPECT_FALSE(cpu().traced("vmptrld"));
}

TEST_F(Bringup, VmptrldFailure)
{
	cpu().fail.insert("vmptrld");
	expect_rolled_back(vt_vcpu_virtualize(&vcpu));
	EXPECT_EQ(vcpu.last_vm_error, 0u) << "no current VMCS: VMfailInvalid, no error number";
}

TEST_F(Bringup, EachVmwriteFailure)
{
	// Fail each field the setup writes, one at a time.
	ASSERT_EQ(vt_vcpu_virtualize(&vcpu), 0);
	std::vector<uint64_t> fields;
	for (const auto &f : cpu().vmcs)
		if (f.first != VM_INSTRUCTION_ERROR && f.first != GUEST_RIP && f.first != GUEST_RSP)
			fields.push_back(f.first);
	ASSERT_GT(fields.size(), 80u) << "the setup writes about 90 fields";
	for (uint64_t field : fields) {
		reset();
		seed_vmx(bochs_skylake_x);
		vt_vcpu v{};
		vt_ring_attach(&v.ring, ring_mem.data());
		ASSERT_EQ(vt_vcpu_alloc(&hv, &v, 0), 0);
		cpu().fail_vmwrite.insert(field);
		int ret = vt_vcpu_virtualize(&v);
		EXPECT_EQ(ret, -VT_EIO) << std::hex << field;
		EXPECT_FALSE(cpu().in_vmx) << std::hex << field;
		EXPECT_FALSE(cpu().cr4 & X86_CR4_VMXE) << std::hex << field;
		EXPECT_FALSE(cpu().traced("vmlaunch")) << std::hex << field;
		vt_vcpu_free(&v);
	}
	vcpu_up = false;	// its pages went with the reset() above
	hv_up = false;
}

TEST_F(Bringup, VmlaunchFailure)
{
	cpu().fail.insert("vmlaunch");
	expect_rolled_back(vt_vcpu_virtualize(&vcpu));
	EXPECT_EQ(vcpu.last_vm_error, 7u);
	EXPECT_TRUE(cpu().traced("vmclear"));
}

TEST_F(Bringup, FirmwareDisabledVmx)
{
	cpu().msrs[MSR_IA32_FEAT_CTL] = FEAT_CTL_LOCKED;
	EXPECT_EQ(vt_vcpu_virtualize(&vcpu), -VT_ENODEV);
	EXPECT_TRUE(cpu().trace.empty()) << "nothing touched";
}

TEST_F(Bringup, FixedBitViolation)
{
	cpu().cr0 &= ~X86_CR0_NE;	// IA32_VMX_CR0_FIXED0 demands NE
	EXPECT_EQ(vt_vcpu_virtualize(&vcpu), -VT_EIO);
	EXPECT_FALSE(cpu().traced("vmxon"));
	EXPECT_EQ(cpu().cr4, cr4_before);
}

TEST_F(Bringup, AlreadyInVmxOperation)
{
	cpu().in_vmx = true;	// someone else (KVM) did VMXON
	EXPECT_EQ(vt_vcpu_virtualize(&vcpu), -VT_EBUSY);
	EXPECT_EQ(cpu().cr4, cr4_before);
}

// KVM since Linux 6.12 does VMXON when kvm_intel loads: CR4.VMXE is set.
TEST_F(Bringup, AnotherHypervisorsVmxeIsRefusedByNameBeforeVmxon)
{
	cpu().cr4 |= X86_CR4_VMXE;
	cpu().in_vmx = true;
	EXPECT_EQ(vt_vcpu_virtualize(&vcpu), -VT_EBUSY);
	EXPECT_FALSE(cpu().traced("vmxon"));
	EXPECT_FALSE(cpu().traced("write_cr4"));
	EXPECT_TRUE(cpu().in_vmx) << "the other hypervisor keeps VMX";
	bool named = false;
	for (const auto &line : log_lines())
		named |= line.find("rmmod kvm_intel") != std::string::npos;
	EXPECT_TRUE(named);
}

TEST(BringupAlloc, EachAllocationFailureFreesEverything)
{
	for (int n = 0; n < 4; n++) {
		reset();
		seed_vmx(bochs_skylake_x);
		vt_hv hv{};
		ASSERT_EQ(vt_hv_init(&hv, 0), 0);
		size_t before = live_allocations();
		vt_vcpu v{};
		fail_allocation_after(n);
		EXPECT_EQ(vt_vcpu_alloc(&hv, &v, 0), -VT_ENOMEM);
		EXPECT_EQ(live_allocations(), before) << "allocation " << n;
		fail_allocation_after(-1);
		vt_hv_fini(&hv);
		EXPECT_EQ(live_allocations(), 0u);
	}
}

TEST(BringupAlloc, HvInitFailures)
{
	reset();
	seed_vmx(bochs_skylake_x);
	vt_hv hv{};
	fail_allocation_after(0);
	EXPECT_EQ(vt_hv_init(&hv, 0), -VT_ENOMEM);
	EXPECT_EQ(live_allocations(), 0u);
	reset();
	seed_vmx(bochs_skylake_x);
	cpu().msrs[MSR_IA32_VMX_EPT_VPID_CAP] &= ~VMX_EPTP_WB_BIT;
	EXPECT_EQ(vt_hv_init(&hv, 0), -VT_EOPNOTSUPP);
	EXPECT_EQ(live_allocations(), 0u);
}
