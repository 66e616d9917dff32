// Records of a root recording written by hand, as include/uapi/vtice/records.h
// lays them out: a register file, then three steps of real code (kCode at
// kRip): a store, a push and a load; more_steps() adds eight more, with
// what root's windows saw of each (root_accesses_test). Shared by the tests
// and root_fixture.cpp (the stock-gdb test's file, a fuzzer's seed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "vtice/records.h"

namespace vtice::replay::root_records {

constexpr std::uint64_t kRip = 0xffffffff81234000ull, kData = 0xffff888001000000ull;
constexpr std::uint64_t kStack = 0xffffc90000203f00ull;
// mov [rbx+8], rax; push rcx; mov rdx, [rbx+8]; nop
inline const std::vector<std::uint8_t> kCode = {0x48, 0x89, 0x43, 0x08, 0x51, 0x48, 0x8b, 0x53, 0x08, 0x90};

// The first 8 bytes read back, little endian (the records' u.raw values).
inline std::uint64_t word(const std::vector<std::uint8_t> &bytes)
{
	std::uint64_t v = 0;
	for (std::size_t i = 0; i < bytes.size() && i < 8; i++)
		v |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
	return v;
}

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

// After the three steps above (kCode's first 9 bytes), at kRip + 9:
inline const std::vector<std::uint8_t> kMoreCode = {
	0x48, 0x8b, 0x73, 0x18,                    // +9   mov rsi, [rbx+0x18]       reads 0x1111
	0x0f, 0x11, 0x43, 0x10,                    // +13  movups [rbx+0x10], xmm0   16 bytes; its window's 8 changed
	0x50,                                      // +17  push rax
	0x48, 0x0f, 0xae, 0x63, 0x40,              // +18  xsave64 [rbx+0x40]        its window unchanged: no record
	0xc7, 0x43, 0x20, 0x05, 0x00, 0x00, 0x00,  // +23  mov dword [rbx+0x20], 5   4 of the window's 8
	0x48, 0x89, 0x4b, 0x28,                    // +30  mov [rbx+0x28], rcx       the value already there
	0x48, 0x8d, 0x43, 0x30,                    // +34  lea rax, [rbx+0x30]       no access
	0x83, 0x43, 0x38, 0x01,                    // +38  add dword [rbx+0x38], 1   read, then written
};

inline vtice_record mem(std::uint32_t kind, std::uint64_t address, std::uint64_t value)
{
	return rec(VTICE_REC_STEP_MEM, kind, address, value);
}

inline vtice_record step(std::uint64_t from, std::uint64_t to)
{
	return rec(VTICE_REC_STEP, 0, kRip + from, kRip + to);
}

inline std::vector<vtice_record> more_steps()
{
	auto out = three_steps();
	for (const vtice_record &r : {step(9, 13), reg(6, 0x1111), mem(VTICE_STEP_MEM_READ, kData + 0x18, 0x1111),
				     step(13, 17), mem(VTICE_STEP_MEM_BEFORE, kData + 0x10, 0),
				     mem(VTICE_STEP_MEM_AFTER, kData + 0x10, 0x2222),
				     step(17, 18), reg(4, kStack - 16), mem(VTICE_STEP_MEM_BEFORE, kStack - 16, 0),
				     mem(VTICE_STEP_MEM_AFTER, kStack - 16, 0x100),
				     step(18, 23),
				     step(23, 30), mem(VTICE_STEP_MEM_BEFORE, kData + 0x20, 0x9999999900000000ull),
				     mem(VTICE_STEP_MEM_AFTER, kData + 0x20, 0x9999999900000005ull),
				     step(30, 34), mem(VTICE_STEP_MEM_READ, kData + 0x28, 0x101),
				     step(34, 38), reg(0, kData + 0x30), mem(VTICE_STEP_MEM_READ, kData + 0x30, 0x77),
				     step(38, 42), mem(VTICE_STEP_MEM_BEFORE, kData + 0x38, 0x10),
				     mem(VTICE_STEP_MEM_AFTER, kData + 0x38, 0x11)})
		out.push_back(r);
	return out;
}

inline std::map<std::uint64_t, std::vector<std::uint8_t>> text()
{
	std::vector<std::uint8_t> page(4096, 0xcc);
	std::copy(kCode.begin(), kCode.begin() + 9, page.begin());
	std::copy(kMoreCode.begin(), kMoreCode.end(), page.begin() + 9);
	return {{kRip, page}};
}

}  // namespace vtice::replay::root_records
