// A CPU model with a last-branch stack, for the fake CPU (SDM Vol. 3B
// 18.4.8 and the per-model sections give the MSR addresses and formats).
#pragma once

#include "hv_fixture.hpp"

extern "C" {
#include "lbr.h"
}

namespace vtice::fake {

constexpr uint64_t kFrom = 0xffffffff81000000ull;	// kernel text
constexpr uint64_t kTo = 0xffffffff82000000ull;
constexpr uint32_t kSkylakeX = 0x50654;		// family 6, model 0x55
constexpr uint32_t kHaswell = 0x306c3;		// family 6, model 0x3c
constexpr uint32_t kBonnell = 0x106c2;		// family 6, model 0x1c
constexpr uint32_t kLeaf1Ecx = 0x7ffefbff;	// as seed_vmx: VMX, PDCM (bit 15), ...

inline void seed_cpu(uint32_t leaf1_eax, uint64_t lbr_fmt, bool intel = true)
{
	auto &c = cpu();
	// "GenuineIntel" / "AuthenticAMD" in EBX, EDX, ECX; max leaf 0x16.
	c.cpuid[{0, 0}] = intel ? vt_cpuid_regs{0x16, 0x756e6547, 0x6c65746e, 0x49656e69}
				: vt_cpuid_regs{0x10, 0x68747541, 0x444d4163, 0x69746e65};
	c.cpuid[{1, 0}] = {leaf1_eax, 0x00010800, kLeaf1Ecx, 0xbfebfbff};
	c.cpuid[{7, 0}] = {0, 0, 0, 0};
	c.msrs[MSR_IA32_PERF_CAPABILITIES] = lbr_fmt;
}

// Entry i of a model's stack holds kFrom + 16 i -> kTo + 16 i (raw, format 5).
inline void seed_stack(uint32_t from_msr, uint32_t to_msr, uint32_t nr, uint64_t tos)
{
	auto &c = cpu();
	for (uint32_t i = 0; i < nr; i++) {
		c.msrs[from_msr + i] = kFrom + 16 * i;
		c.msrs[to_msr + i] = kTo + 16 * i;
		c.msrs[MSR_LBR_INFO_0 + i] = i;	// cycles = i
	}
	c.msrs[MSR_LBR_TOS] = tos;
	c.msrs[MSR_LBR_SELECT] = 0;
}

// The CPU records one more branch on a Skylake (32 entries at 0x680/0x6c0,
// format 5): TOS moves on by one and names it (SDM Vol. 3B 18.4.8).
inline void record_branch(uint64_t from, uint64_t to, uint64_t info = 0)
{
	auto &c = cpu();
	uint64_t tos = (c.msrs[MSR_LBR_TOS] + 1) % 32;
	c.msrs[MSR_LBR_NHM_FROM + tos] = from;
	c.msrs[MSR_LBR_NHM_TO + tos] = to;
	c.msrs[MSR_LBR_INFO_0 + tos] = info;
	c.msrs[MSR_LBR_TOS] = tos;
}

}  // namespace vtice::fake
