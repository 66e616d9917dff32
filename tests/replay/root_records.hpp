// Records of a root recording written by hand, as include/uapi/vtice/records.h
// lays them out: a register file, then three steps of real code (kCode at
// kRip): a store, a push and a load. Shared by root_steps_test and the
// stock-gdb test's file (root_fixture.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "vtice/records.h"

namespace vtice::replay::root_records {

constexpr std::uint64_t kRip = 0xffffffff81234000ull, kData = 0xffff888001000000ull;
constexpr std::uint64_t kStack = 0xffffc90000203f00ull;
// mov [rbx+8], rax; push rcx; mov rdx, [rbx+8]; nop
inline const std::vector<std::uint8_t> kCode = {0x48, 0x89, 0x43, 0x08, 0x51, 0x48, 0x8b, 0x53, 0x08, 0x90};

inline vtice_record rec(std::uint16_t type, std::uint32_t flags, std::uint64_t a, std::uint64_t b)
{
	static std::uint64_t stamp = 1000;
	vtice_record r{};
	r.type = type;
	r.flags = flags;
	r.tsc = stamp++;
	r.u.raw[0] = a;
	r.u.raw[1] = b;
	return r;
}

inline vtice_record regs(std::uint32_t a, std::uint64_t va, std::uint32_t b, std::uint64_t vb)
{
	return rec(VTICE_REC_STEP_REGS, a | b << 8 | 2u << VTICE_STEP_REG_COUNT_SHIFT, va, vb);
}

inline vtice_record reg(std::uint32_t a, std::uint64_t va)
{
	return rec(VTICE_REC_STEP_REGS, a | 1u << VTICE_STEP_REG_COUNT_SHIFT, va, 0);
}

// Every register as the first step finds them: RAX 0x100 + n for n < 16 (RSP kStack, RBX kData).
inline std::vector<vtice_record> register_file()
{
	std::vector<vtice_record> out;
	auto value = [](std::uint32_t n) {
		return n == 4 ? kStack : n == 3 ? kData : n == VTICE_STEP_REG_RFLAGS ? 0x246 : 0x100 + n;
	};
	for (std::uint32_t n = 0; n + 1 < VTICE_STEP_REGS; n += 2)
		out.push_back(regs(n, value(n), n + 1, value(n + 1)));
	out.push_back(reg(VTICE_STEP_REGS - 1, value(VTICE_STEP_REGS - 1)));
	return out;
}

inline std::vector<vtice_record> three_steps()
{
	auto out = register_file();
	// mov [rbx+8], rax
	out.push_back(rec(VTICE_REC_STEP, 0, kRip, kRip + 4));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, kData + 8, 0xaaaabbbbccccddddull));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, kData + 8, 0x100));
	out.push_back(rec(VTICE_REC_BRANCH, VTICE_BRANCH_FROM_STEP, 1, 2));	// passed over
	// push rcx
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 4, kRip + 5));
	out.push_back(reg(4, kStack - 8));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_BEFORE, kStack - 8, 0x5555));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_AFTER, kStack - 8, 0x101));
	// mov rdx, [rbx+8]
	out.push_back(rec(VTICE_REC_STEP, 0, kRip + 5, kRip + 9));
	out.push_back(reg(2, 0x100));
	out.push_back(rec(VTICE_REC_STEP_MEM, VTICE_STEP_MEM_READ, kData + 8, 0x100));
	return out;
}

}  // namespace vtice::replay::root_records
