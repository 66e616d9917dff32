// The memory windows a recorder in root reads around a step
// (hypervisor/debug/step_windows.c): before the step, the operand's
// address, the slot under RSP and RDI, each read whole or left out; after
// it, those whose bytes changed, with both. The memory is a map of bytes
// the test writes as the instruction would.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "../../hypervisor/core/os.h"
#include "../../hypervisor/debug/step_windows.h"

namespace {

std::map<std::uint64_t, std::uint8_t> g_memory;

int fake_mem(const struct vt_vcpu *, u64 gva, void *buf, u32 len, bool write)
{
	if (write)
		return -VT_EFAULT;
	for (u32 i = 0; i < len; i++) {
		auto byte = g_memory.find(gva + i);
		if (byte == g_memory.end())
			return i ? static_cast<int>(i) : -VT_EFAULT;
		static_cast<std::uint8_t *>(buf)[i] = byte->second;
	}
	return static_cast<int>(len);
}

void map_bytes(std::uint64_t from, std::uint64_t to)
{
	for (std::uint64_t a = from; a < to; a++)
		g_memory[a] = static_cast<std::uint8_t>(a);
}

void store(std::uint64_t address, std::uint64_t value)
{
	for (int i = 0; i < 8; i++)
		g_memory[address + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

std::uint64_t load(std::uint64_t address)
{
	std::uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= std::uint64_t{g_memory.at(address + i)} << (8 * i);
	return v;
}

using Change = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;	// address, before, after

void collect(void *ctx, u64 addr, u64 before, u64 after)
{
	static_cast<std::vector<Change> *>(ctx)->emplace_back(addr, before, after);
}

class StepWindows : public ::testing::Test {
protected:
	static constexpr std::uint64_t kData = 0xffff888000001000ull, kStack = 0xffffc90000004000ull;

	void SetUp() override
	{
		g_memory.clear();
		map_bytes(kData, kData + 0x100);
		map_bytes(kStack - 0x100, kStack);
		regs.gpr[4] = kStack - 0x40;	// RSP
		regs.gpr[7] = kData;		// RDI
		regs.rip = 0xffffffff81000000ull;
	}

	// Decodes bytes as the instruction at regs.rip and opens its windows.
	vt_step_windows open(const std::vector<std::uint8_t> &bytes)
	{
		vt_insn insn{};
		EXPECT_EQ(vt_insn_decode(bytes.data(), static_cast<u32>(bytes.size()), &insn), 0);
		vt_step_windows sw{};
		vt_step_windows_open(&sw, &insn, &regs, nullptr, fake_mem);
		return sw;
	}

	std::vector<Change> close(const vt_step_windows &sw)
	{
		std::vector<Change> changes;
		u32 n = vt_step_windows_close(&sw, nullptr, fake_mem, collect, &changes);
		EXPECT_EQ(n, changes.size()) << "the count is of the windows reported";
		return changes;
	}

	vt_step_regs regs{};
};

TEST_F(StepWindows, AStoreThroughTheOperandIsReportedWithItsBytesBeforeAndAfter)
{
	auto sw = open({0x48, 0x89, 0x47, 0x08});	// mov [rdi + 8], rax
	ASSERT_EQ(sw.n, 3u) << "the operand, the slot under RSP, RDI";
	std::uint64_t before = load(kData + 8);
	store(kData + 8, 0x1122334455667788ull);
	EXPECT_EQ(close(sw), (std::vector<Change>{{kData + 8, before, 0x1122334455667788ull}}));
}

TEST_F(StepWindows, APushIsSeenInTheSlotUnderRsp)
{
	auto sw = open({0x53});	// push rbx: no operand of its own
	ASSERT_EQ(sw.n, 2u);
	std::uint64_t before = load(regs.gpr[4] - 8);
	store(regs.gpr[4] - 8, 0xdeadbeefull);
	EXPECT_EQ(close(sw), (std::vector<Change>{{regs.gpr[4] - 8, before, 0xdeadbeefull}}));
}

TEST_F(StepWindows, AStoreThatLeavesTheBytesAsTheyWereIsNotReported)
{
	auto sw = open({0x48, 0xab});	// stos qword [rdi], rax
	store(kData, load(kData));
	EXPECT_TRUE(close(sw).empty());
}

TEST_F(StepWindows, UnmappedAndRepeatedWindowsAreLeftOut)
{
	regs.gpr[0] = 0x1000;	// RAX: nothing mapped there
	EXPECT_EQ(open({0x48, 0x89, 0x18}).n, 2u) << "mov [rax], rbx: the operand is not mapped";
	regs.gpr[0] = regs.gpr[4] - 8;
	EXPECT_EQ(open({0x48, 0x89, 0x18}).n, 2u) << "the operand is the slot under RSP: one window";
	regs.gpr[7] = kData + 0xfc;	// RDI's window runs past the mapped bytes
	EXPECT_EQ(open({0x90}).n, 1u) << "a window mapped in part is left out";
}

TEST_F(StepWindows, AGsRelativeOperandTakesTheGsBase)
{
	regs.gs_base = kData;
	auto sw = open({0x65, 0x48, 0x89, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00});	// mov gs:[0x10], rax
	store(kData + 0x10, 7);
	auto changes = close(sw);
	ASSERT_EQ(changes.size(), 1u);
	EXPECT_EQ(std::get<0>(changes[0]), kData + 0x10);
}

TEST_F(StepWindows, AWindowWhosePageWentAfterTheStepIsNotReported)
{
	auto sw = open({0x48, 0x89, 0x47, 0x08});
	for (int i = 0; i < 8; i++)
		g_memory.erase(kData + 8 + i);
	EXPECT_TRUE(close(sw).empty());
}

}  // namespace
