// fn:NAME:return's return sites (console/return_sites.cpp) in hand-assembled
// functions; each expected offset is counted from the x86 encodings (SDM
// Vol. 2), not taken from the code under test.
#include <gtest/gtest.h>

#include <cstring>

#include "return_sites.hpp"

namespace vtice::console {
namespace {

constexpr std::uint64_t kStart = 0xffffffff81234500ull;
constexpr std::uint64_t kThunk = 0xffffffff82000000ull;		// a return thunk
constexpr std::uint64_t kOther = 0xffffffff81300000ull;		// another function

// E9 rel32 at offset off, jumping to target.
void put_jmp(std::vector<std::uint8_t> &code, std::size_t off, std::uint64_t target)
{
	auto rel = static_cast<std::int32_t>(target - (kStart + off + 5));
	code[off] = 0xe9;
	std::memcpy(&code[off + 1], &rel, 4);
}

Result<ReturnSites> find(const std::vector<std::uint8_t> &code)
{
	Disassembler disasm;
	return find_return_sites(code, kStart, disasm, [](std::uint64_t t) { return t == kThunk; });
}

TEST(ReturnSites, RetsAndThunkJumpsAreSitesOtherExitsAreTailCalls)
{
	std::vector<std::uint8_t> code = {
		0x55,			// +0  push rbp
		0x48, 0x89, 0xe5,	// +1  mov rbp, rsp
		0x85, 0xff,		// +4  test edi, edi
		0x74, 0x03,		// +6  je +11
		0x5d,			// +8  pop rbp
		0xc3,			// +9  ret                  <- site
		0xcc,			// +10 int3 (straight-line speculation)
		0x5d,			// +11 pop rbp
		0, 0, 0, 0, 0,		// +12 jmp return thunk     <- site
		0, 0, 0, 0, 0,		// +17 jmp another function: a tail call
		0xc2, 0x08, 0x00,	// +22 ret 8                <- site
		0xeb, 0xe5,		// +25 jmp +0: inside, not a tail call
		0xff, 0xe0,		// +27 jmp rax: a tail call through a register
		0xcc,			// +29 int3 padding
	};
	put_jmp(code, 12, kThunk);
	put_jmp(code, 17, kOther);
	auto found = find(code);
	ASSERT_TRUE(found) << found.error().message;
	EXPECT_EQ(found->sites, (std::vector<std::uint64_t>{kStart + 9, kStart + 12, kStart + 22}));
	EXPECT_EQ(found->tail_calls, (std::vector<std::uint64_t>{kStart + 17, kStart + 27}));
}

TEST(ReturnSites, AFunctionThatOnlyTailCallsHasNoSite)
{
	std::vector<std::uint8_t> code(6, 0xcc);
	put_jmp(code, 0, kOther);
	auto found = find(code);
	ASSERT_TRUE(found);
	EXPECT_TRUE(found->sites.empty());
	EXPECT_EQ(found->tail_calls.size(), 1u);
}

TEST(ReturnSites, UndecodableTextIsAnErrorNamingTheOffset)
{
	std::vector<std::uint8_t> code = {0x90, 0x06};	// nop; push es (invalid in 64-bit mode)
	auto found = find(code);
	ASSERT_FALSE(found);
	EXPECT_NE(found.error().message.find("+0x1"), std::string::npos) << found.error().message;
}

}  // namespace
}  // namespace vtice::console
