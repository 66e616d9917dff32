// addr: probes' check that an instruction starts at the address. The
// bytes are hand-assembled from the SDM's encodings (each instruction's
// length known from its opcode), not produced by the code under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "insn_boundary.hpp"

using vtice::Disassembler;
using vtice::console::check_instruction_start;

namespace {

constexpr std::uint64_t kStart = 0xffffffff81000000ull;

// endbr64 (4) | push rbp (1) | mov rbp, rsp (3) | call rel32 (5) | ret (1)
const std::vector<std::uint8_t> kText = {
	0xf3, 0x0f, 0x1e, 0xfa,		// +0x0 endbr64
	0x55,				// +0x4 push %rbp
	0x48, 0x89, 0xe5,		// +0x5 mov %rsp,%rbp
	0xe8, 0x10, 0x20, 0x30, 0x00,	// +0x8 call
	0xc3,				// +0xd ret
};

}  // namespace

TEST(InsnBoundary, EachInstructionsFirstByteIsAStart)
{
	Disassembler disasm;
	for (std::uint64_t off : {0x0, 0x4, 0x5, 0x8, 0xd})
		EXPECT_TRUE(check_instruction_start(kText, kStart, kStart + off, disasm).ok()) << off;
}

TEST(InsnBoundary, AnAddressInsideAnInstructionNamesTheStartsAroundIt)
{
	Disassembler disasm;
	auto inside = check_instruction_start(kText, kStart, kStart + 0xa, disasm);
	ASSERT_FALSE(inside.ok());
	EXPECT_EQ(inside.error().message, "+0xa is inside an instruction: instructions start at +0x8 and +0xd");
	EXPECT_FALSE(check_instruction_start(kText, kStart, kStart + 0x2, disasm).ok());
}

TEST(InsnBoundary, BytesThatRunOutBeforeTheAddressAreAnError)
{
	Disassembler disasm;
	// Cut in the middle of the mov at +0x5: it cannot be decoded whole.
	const std::vector<std::uint8_t> cut(kText.begin(), kText.begin() + 6);
	EXPECT_FALSE(check_instruction_start(cut, kStart, kStart + 0x8, disasm).ok());
	// Cut right after it: no bytes left to decode before the address.
	const std::vector<std::uint8_t> short_text(kText.begin(), kText.begin() + 5);
	auto past = check_instruction_start(short_text, kStart, kStart + 0x8, disasm);
	ASSERT_FALSE(past.ok());
	EXPECT_EQ(past.error().message, "past the end of the bytes read");
}
