// A virtualized fake CPU with the debugger's hooks initialised over a small
// guest RAM: kernel text/data linearly mapped at kKernelBase -> kRamGpa.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "hv_fixture.hpp"

extern "C" {
#include "hooks.h"
}

namespace vtice::fake {

constexpr uint64_t kKernelBase = 0xffffffff81000000ull;
constexpr uint64_t kRamGpa = 0x1000000ull;	// 16 MiB, inside one 2 MiB EPT page
constexpr size_t kRamPages = 128;
constexpr uint64_t kPage = 4096;

// SDM Vol. 3C 29.3.2, Table 29-6: EPT PTE that maps a 4 KiB page.
constexpr uint64_t kEptR = 1u << 0, kEptW = 1u << 1, kEptX = 1u << 2;
constexpr uint64_t kEptRWX = kEptR | kEptW | kEptX;
constexpr uint64_t kEptAddr = 0x000ffffffffff000ull;	// bits 51:12
constexpr uint64_t kEptTypeWB = 6u << 3;		// bits 5:3 memory type

// EPT-violation exit qualification, SDM Vol. 3C Table 28-7.
constexpr uint64_t kQualRead = 1u << 0, kQualWrite = 1u << 1, kQualFetch = 1u << 2;
constexpr uint64_t kQualWasR = 1u << 3, kQualWasW = 1u << 4, kQualWasX = 1u << 5;
constexpr uint64_t kQualGlaValid = 1u << 7, kQualGlaTranslated = 1u << 8;

inline std::map<uint64_t, uint64_t> &translations()
{
	static std::map<uint64_t, uint64_t> t;	// gva page -> gpa page overrides
	return t;
}

// The vt_gva_translate_fn: the linear kernel map, or an override; else fails.
extern "C" inline int fake_translate(u32, u64 gva, u64 *gpa)
{
	auto it = translations().find(gva & ~(kPage - 1));
	if (it != translations().end()) {
		*gpa = it->second | (gva & (kPage - 1));
		return 0;
	}
	if (gva < kKernelBase || gva >= kKernelBase + kRamPages * kPage)
		return -14;
	*gpa = kRamGpa + (gva - kKernelBase);
	return 0;
}

class HooksFixture : public HvFixture {
protected:
	std::vector<uint8_t> ram = std::vector<uint8_t>(kRamPages * kPage);
	vt_guest_regs regs{};
	vt_exit exit{};
	vt_dbg_stop stop{};
	bool hooks_up = false;

	void SetUp() override
	{
		HvFixture::SetUp();
		translations().clear();
		for (size_t i = 0; i < ram.size(); i++)
			ram[i] = static_cast<uint8_t>(i * 7 + 3) == 0xcc ? 0x90 : static_cast<uint8_t>(i * 7 + 3);
		map_guest_ram(kRamGpa, ram.data(), ram.size());
	}

	void TearDown() override
	{
		if (hooks_up)
			vt_hooks_fini();
		HvFixture::TearDown();
	}

	// Virtualized CPU 0 with hooks over `shadow_pages` shadow copies.
	void start(uint32_t shadow_pages = 8, bool mtf = true)
	{
		virtualize();
		if (mtf)
			hv.caps.flags |= VTICE_CAP_MTF;
		ASSERT_EQ(vt_hooks_init(&hv, shadow_pages, fake_translate, 2), 0);
		hooks_up = true;
		cpu().invepts.clear();
		exit.vcpu = &vcpu;
		exit.regs = &regs;
		vcpu.regs = &regs;
		guest_kernel_mode();
		cpu().vmcs[GUEST_RFLAGS] = 0x202;
	}

	uint64_t gpa_of(uint64_t gva) { return kRamGpa + (gva - kKernelBase); }

	// Walk the shared EPT as a CPU does (SDM 29.3.2): 9 index bits per level
	// from bit 39 down, bit 7 marks a 1 GiB / 2 MiB leaf. Not-present leaves too.
	uint64_t leaf(uint64_t gpa, int *level_out = nullptr) { return walk(hv.ept.pml4, gpa, level_out); }

	// The leaf this CPU walks to: from the PML4 its VMCS's EPT pointer names (SDM 25.6.11).
	uint64_t cpu_leaf(uint64_t gpa)
	{
		return walk(static_cast<const u64 *>(vt_os_phys_to_virt(cpu().vmcs[EPT_POINTER] & kEptAddr)), gpa);
	}

	bool on_shared_tables() { return cpu().vmcs[EPT_POINTER] == hv.ept.eptp; }

	uint64_t walk(const u64 *table, uint64_t gpa, int *level_out = nullptr)
	{
		for (int level = 4; level >= 1; level--) {
			uint64_t e = table[(gpa >> (12 + 9 * (level - 1))) & 511];
			if (level == 1 || (level <= 3 && (e & (1u << 7)))) {
				if (level_out)
					*level_out = level;
				return e;
			}
			table = reinterpret_cast<const u64 *>(e & kEptAddr);
		}
		return ~0ull;
	}

	int leaf_level(uint64_t gpa)
	{
		int level = 0;
		leaf(gpa, &level);
		return level;
	}

	// The bytes of the frame the page's EPT leaf maps now.
	const uint8_t *mapped_frame(uint64_t gpa)
	{
		return static_cast<const uint8_t *>(vt_os_phys_to_virt(leaf(gpa) & kEptAddr));
	}

	// The identity 4 KiB entry: frame == gpa, RWX, write-back (SDM 29.3.2, 29.3.7).
	static uint64_t identity(uint64_t gpa) { return (gpa & ~(kPage - 1)) | kEptRWX | kEptTypeWB; }

	vt_hook_result violation(uint64_t gpa, uint64_t qual, uint64_t gla = 0)
	{
		cpu().vmcs[GUEST_PHYSICAL_ADDRESS] = gpa;
		cpu().vmcs[GUEST_LINEAR_ADDRESS] = gla;
		exit.qual = qual;
		return vt_hooks_on_ept_violation(&vcpu, &exit, gpa, qual, &stop);
	}

	vt_hook_result mtf() { return vt_hooks_on_mtf(&vcpu, &exit, &stop); }

	bool mtf_armed() { return cpu().vmcs[CPU_BASED_VM_EXEC_CONTROL] & CPU_BASED_MONITOR_TRAP_FLAG; }

	size_t invepts() { return cpu().invepts.size(); }
};

}  // namespace vtice::fake
