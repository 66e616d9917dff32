// memory_accesses: the bytes each instruction reads and writes. Bytes come
// from GNU as; the expected addresses are worked out here from the SDM's
// definitions (base + index * scale + displacement + segment base; PUSH and
// CALL store below RSP; POP and RET load at RSP; string instructions use
// RSI/RDI and count down when RFLAGS.DF is set).
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "assemble.hpp"
#include "memory_access.hpp"

namespace vtice {
namespace {

constexpr std::uint64_t kBase = 0xffffffff81000000ull;

std::map<std::string, std::uint64_t> g_regs;

RegisterSource regs()
{
	return [](std::string_view name) -> std::optional<std::uint64_t> {
		auto it = g_regs.find(std::string(name));
		if (it == g_regs.end())
			return std::nullopt;
		return it->second;
	};
}

Instruction assembled(const std::string &insn)
{
	std::string error;
	auto object = test::assemble("\t.text\n\t.globl f\nf:\t" + insn + "\n", kBase, error);
	EXPECT_TRUE(object) << error;
	if (!object)
		return {};
	Disassembler disassembler;
	auto decoded = disassembler.decode(object->text, kBase);
	EXPECT_TRUE(decoded);
	return decoded ? *decoded : Instruction{};
}

class MemoryAccessTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		g_regs = {{"rax", 0x100}, {"rbx", 0x3},  {"rcx", 0x5},    {"rdx", 0},
			  {"rsi", 0x5000}, {"rdi", 0x6000}, {"rsp", 0x1000}, {"rbp", 0x2000},
			  {"eflags", 0x2},  {"fs_base", 0},  {"gs_base", 0xffff888000000000ull}};
	}
};

void expect_one(const std::vector<MemoryAccess> &got, std::uint64_t address, std::uint32_t size, bool read,
		bool write)
{
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].address, address);
	EXPECT_EQ(got[0].size, size);
	EXPECT_EQ(got[0].read, read);
	EXPECT_EQ(got[0].write, write);
}

TEST_F(MemoryAccessTest, PushAndCallStoreBelowTheStackPointer)
{
	expect_one(memory_accesses(assembled("push %rax"), regs()), 0xff8, 8, false, true);
	expect_one(memory_accesses(assembled("call f"), regs()), 0xff8, 8, false, true);
	expect_one(memory_accesses(assembled("pushfq"), regs()), 0xff8, 8, false, true);
}

TEST_F(MemoryAccessTest, PopAndRetLoadAtTheStackPointer)
{
	expect_one(memory_accesses(assembled("pop %rbx"), regs()), 0x1000, 8, true, false);
	expect_one(memory_accesses(assembled("ret"), regs()), 0x1000, 8, true, false);
	expect_one(memory_accesses(assembled("leave"), regs()), 0x2000, 8, true, false);
}

TEST_F(MemoryAccessTest, BaseIndexScaleDisplacement)
{
	expect_one(memory_accesses(assembled("mov 0x10(%rax,%rbx,4), %edx"), regs()), 0x100 + 3 * 4 + 0x10, 4, true,
		   false);
	expect_one(memory_accesses(assembled("movb $1, -8(%rbp)"), regs()), 0x2000 - 8, 1, false, true);
	expect_one(memory_accesses(assembled("add %eax, (%rdi)"), regs()), 0x6000, 4, true, true);
}

TEST_F(MemoryAccessTest, GsAndFsAddTheirBases)
{
	expect_one(memory_accesses(assembled("mov %rcx, %gs:8(%rax)"), regs()), 0xffff888000000108ull, 8, false, true);
	g_regs["fs_base"] = 0x7f0000000000ull;
	expect_one(memory_accesses(assembled("mov %fs:0x28, %rax"), regs()), 0x7f0000000028ull, 8, true, false);
}

TEST_F(MemoryAccessTest, RipRelativeCountsFromTheNextInstruction)
{
	Instruction insn = assembled("mov 0x10(%rip), %rax");
	expect_one(memory_accesses(insn, regs()), kBase + insn.length + 0x10, 8, true, false);
}

TEST_F(MemoryAccessTest, StringInstructionsUseRsiAndRdiAndTheDirectionFlag)
{
	auto movs = memory_accesses(assembled("movsq"), regs());
	ASSERT_EQ(movs.size(), 2u);
	bool saw_read = false, saw_write = false;
	for (const MemoryAccess &a : movs) {
		EXPECT_FALSE(a.repeated);
		if (a.write) {
			saw_write = true;
			EXPECT_EQ(a.address, 0x6000u);
		} else {
			saw_read = true;
			EXPECT_EQ(a.address, 0x5000u);
		}
		EXPECT_EQ(a.size, 8u);
	}
	EXPECT_TRUE(saw_read && saw_write);
	auto stos = memory_accesses(assembled("rep stosb"), regs());
	ASSERT_EQ(stos.size(), 1u);
	EXPECT_TRUE(stos[0].repeated);
	EXPECT_FALSE(stos[0].downwards);
	EXPECT_EQ(stos[0].address, 0x6000u);
	EXPECT_EQ(stos[0].size, 1u);
	g_regs["eflags"] = 0x2 | (1u << 10);  // DF
	EXPECT_TRUE(memory_accesses(assembled("rep stosb"), regs())[0].downwards);
}

TEST_F(MemoryAccessTest, InstructionsThatTouchNoMemoryHaveNone)
{
	EXPECT_TRUE(memory_accesses(assembled("lea 8(%rbx), %rax"), regs()).empty());
	EXPECT_TRUE(memory_accesses(assembled("nopl (%rax)"), regs()).empty());
	EXPECT_TRUE(memory_accesses(assembled("prefetcht0 (%rax)"), regs()).empty());
	EXPECT_TRUE(memory_accesses(assembled("clflush (%rax)"), regs()).empty());
	EXPECT_TRUE(memory_accesses(assembled("add %rbx, %rax"), regs()).empty());
}

// SDM Vol. 2: MOVUPS and CMPXCHG16B store 16 bytes; FXSAVE its 512-byte
// area; XSAVE the 512-byte legacy area and 64-byte header, then as far as
// XCR0's components reach (Vol. 1 13.4), which the instruction cannot say.
TEST_F(MemoryAccessTest, WideStoresHaveTheirSizeAndXsaveSaysItGoesFurther)
{
	expect_one(memory_accesses(assembled("movups %xmm0, 8(%rax)"), regs()), 0x108, 16, false, true);
	expect_one(memory_accesses(assembled("cmpxchg16b (%rax)"), regs()), 0x100, 16, true, true);
	expect_one(memory_accesses(assembled("fxsave64 (%rax)"), regs()), 0x100, 512, false, true);
	EXPECT_FALSE(memory_accesses(assembled("fxsave64 (%rax)"), regs())[0].extended_state);
	for (const char *xsave : {"xsave64 (%rax)", "xsaveopt64 (%rax)", "xsavec64 (%rax)", "xsaves64 (%rax)"}) {
		auto got = memory_accesses(assembled(xsave), regs());
		ASSERT_EQ(got.size(), 1u) << xsave;
		EXPECT_EQ(got[0].address, 0x100u) << xsave;
		EXPECT_GE(got[0].size, 576u) << xsave;
		EXPECT_TRUE(got[0].write && got[0].extended_state) << xsave;
	}
	EXPECT_FALSE(memory_accesses(assembled("xrstor64 (%rax)"), regs())[0].extended_state) << "a load";
}

// SDM Vol. 2A BT: a register offset picks the operand-sized word at
// EA + (bytes * (BitOffset DIV bits)), the offset signed; an immediate one
// stays within the operand.
TEST_F(MemoryAccessTest, BitTestsWithARegisterOffsetAddressTheWordHoldingTheBit)
{
	g_regs["r9"] = 0x7000;
	g_regs["rcx"] = 70;  // bit 6 of the second quadword
	expect_one(memory_accesses(assembled("btr %rcx, (%r9)"), regs()), 0x7008, 8, true, true);
	g_regs["rcx"] = static_cast<std::uint64_t>(-1);	 // bit 63 of the quadword below
	expect_one(memory_accesses(assembled("bts %rcx, (%r9)"), regs()), 0x6ff8, 8, true, true);
	g_regs["rcx"] = 0xffffffff00000021ull;	// ECX = 33: the upper half is not the offset's
	expect_one(memory_accesses(assembled("btc %ecx, (%r9)"), regs()), 0x7004, 4, true, true);
	g_regs["rcx"] = 0xffff;	 // CX = -1
	expect_one(memory_accesses(assembled("bt %cx, (%r9)"), regs()), 0x6ffe, 2, true, false);
	expect_one(memory_accesses(assembled("btq $70, (%r9)"), regs()), 0x7000, 8, true, false);
}

// The same, asked of the CPU this test runs on: which quadword of a
// buffer BTR clears for each offset, against where memory_accesses says
// it writes.
TEST_F(MemoryAccessTest, BitTestAddressesAreWhereTheCpuWrites)
{
	Instruction btr = assembled("btr %rcx, (%r9)");
	for (std::int64_t offset : {0L, 63L, 64L, 70L, 200L, -1L, -64L, -65L, -200L}) {
		std::uint64_t words[8];
		std::fill(std::begin(words), std::end(words), ~0ull);
		std::uint64_t *base = &words[4];
		asm volatile("btr %%rcx, (%1)" : : "c"(offset), "r"(base) : "memory", "cc");
		auto cleared = std::find_if(std::begin(words), std::end(words), [](std::uint64_t w) { return w != ~0ull; });
		ASSERT_NE(cleared, std::end(words)) << offset;
		g_regs["rcx"] = static_cast<std::uint64_t>(offset);
		g_regs["r9"] = reinterpret_cast<std::uint64_t>(base);
		expect_one(memory_accesses(btr, regs()), reinterpret_cast<std::uint64_t>(cleared), 8, true, true);
	}
}

TEST_F(MemoryAccessTest, AnOperandNeedingAnUnknownRegisterIsLeftOut)
{
	g_regs.erase("gs_base");
	EXPECT_TRUE(memory_accesses(assembled("mov %rcx, %gs:8(%rax)"), regs()).empty());
}

}  // namespace
}  // namespace vtice
