// ORC lookup and unwinding. Expected frame sizes are read off the Debian
// image's machine code by hand (objdump -d), not from the code under test.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "kernel_dir.hpp"
#include "symbols/loader.hpp"
#include "symbols/orc.hpp"

using namespace vtice::symbols;

namespace {

// A sparse little-endian memory for synthetic stacks and tables.
struct FakeMemory {
	std::map<std::uint64_t, std::uint8_t> bytes;

	void put64(std::uint64_t address, std::uint64_t value)
	{
		for (int i = 0; i < 8; i++)
			bytes[address + i] = static_cast<std::uint8_t>(value >> (8 * i));
	}
	void put(std::uint64_t address, const void *data, std::size_t size)
	{
		for (std::size_t i = 0; i < size; i++)
			bytes[address + i] = static_cast<const std::uint8_t *>(data)[i];
	}
	MemoryReader reader() const
	{
		return [this](std::uint64_t address, std::span<std::uint8_t> out) {
			for (std::size_t i = 0; i < out.size(); i++) {
				auto it = bytes.find(address + i);
				if (it == bytes.end())
					return false;
				out[i] = it->second;
			}
			return true;
		};
	}
};

class symbols_orc_debian : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		auto dir = vtice::symbols::testing::debian_kernel_dir();
		if (!dir)
			return;
		auto loaded = load_symbols(dir->string() + "/vmlinux");
		if (!loaded.ok())
			return;
		loaded_ = std::make_shared<LoadedSymbols>(std::move(*loaded));
		auto orc = OrcTable::load(*loaded_->table, *loaded_->image);
		if (orc.ok())
			orc_ = std::make_shared<OrcTable>(std::move(*orc));
		else
			error_ = orc.error().to_string();
	}

	void SetUp() override
	{
		if (!loaded_)
			GTEST_SKIP() << "no Debian kernel under " VTICE_KERNEL_DIR;
		ASSERT_TRUE(orc_) << error_;
	}

	std::uint64_t address(const char *name) { return loaded_->table->address_of(name).value_or(0); }

	static inline std::shared_ptr<LoadedSymbols> loaded_;
	static inline std::shared_ptr<OrcTable> orc_;
	static inline std::string error_;
};

}  // namespace

TEST_F(symbols_orc_debian, TableSizeMatchesTheSection)
{
	const ElfSection *section = loaded_->image->section(".orc_unwind_ip");
	ASSERT_NE(section, nullptr);
	EXPECT_EQ(orc_->size(), section->size / 4);
	EXPECT_FALSE(orc_->new_format());  // 6.1: type:2 end:1
}

TEST_F(symbols_orc_debian, FunctionEntryIsACallFrameWithReturnAddressOnTop)
{
	for (const char *name : {"do_sys_openat2", "__x64_sys_openat", "vfs_read"}) {
		auto entry = orc_->find(address(name));
		ASSERT_TRUE(entry) << name;
		EXPECT_EQ(entry->type, OrcType::call) << name;
		EXPECT_EQ(entry->sp_reg, OrcReg::sp) << name;
		EXPECT_EQ(entry->sp_offset, 8) << name;
		EXPECT_EQ(entry->bp_reg, OrcReg::undefined) << name;
	}
}

TEST_F(symbols_orc_debian, FrameSizesFollowThePrologue)
{
	// __x64_sys_openat: call __fentry__ (5 bytes), sub $0x20,%rsp (4 bytes).
	auto after_sub = orc_->find(address("__x64_sys_openat") + 9);
	ASSERT_TRUE(after_sub);
	EXPECT_EQ(after_sub->sp_offset, 8 + 0x20);
	// do_sys_openat2: fentry; push r12; mov; push rbp (at +0xa, 1 byte).
	auto after_push_rbp = orc_->find(address("do_sys_openat2") + 0xb);
	ASSERT_TRUE(after_push_rbp);
	EXPECT_EQ(after_push_rbp->sp_offset, 24);
	EXPECT_EQ(after_push_rbp->bp_reg, OrcReg::prev_sp);
	EXPECT_EQ(after_push_rbp->bp_offset, -24);
}

TEST_F(symbols_orc_debian, SyscallEntryEndsTheStack)
{
	auto entry = orc_->find(address("entry_SYSCALL_64"));
	ASSERT_TRUE(entry);
	EXPECT_EQ(entry->type, OrcType::end_of_stack);
}

TEST_F(symbols_orc_debian, UnwindsTwoFramesOfASyntheticStack)
{
	// do_sys_openat2 + 0x18, after push r12, push rbp, push rbx, sub $0x20:
	// saved rbp at rsp+0x28, return address at rsp+0x38, CFA rsp+0x40.
	const std::uint64_t rsp = 0xffffc90000013e00ull;
	const std::uint64_t back_in_openat = address("__x64_sys_openat") + 0x6a;  // after its call
	const std::uint64_t further = address("do_syscall_64") + 0x3b;
	FakeMemory stack;
	stack.put64(rsp + 0x28, 0x1111);           // caller's rbp
	stack.put64(rsp + 0x38, back_in_openat);
	// __x64_sys_openat's frame: CFA = rsp + 0x28, return address just below.
	stack.put64(rsp + 0x40 + 0x20, further);

	UnwindRegs regs{address("do_sys_openat2") + 0x18, rsp, 0x2222, true};
	auto first = unwind_step(*orc_, regs, stack.reader());
	ASSERT_TRUE(first.ok()) << first.error().to_string();
	EXPECT_EQ(first->caller.rip, back_in_openat);
	EXPECT_EQ(first->caller.rsp, rsp + 0x40);
	EXPECT_EQ(first->caller.rbp, 0x1111u);
	EXPECT_FALSE(first->caller.exact_ip);

	auto second = unwind_step(*orc_, first->caller, stack.reader());
	ASSERT_TRUE(second.ok()) << second.error().to_string();
	EXPECT_EQ(second->caller.rip, further);
	EXPECT_EQ(second->caller.rsp, rsp + 0x40 + 0x28);
	EXPECT_EQ(second->caller.rbp, 0x1111u);

	FakeMemory empty;
	EXPECT_FALSE(unwind_step(*orc_, regs, empty.reader()).ok());
}

namespace {

// Synthetic 6.3+-format table: three entries at 0x1000, 0x1010, 0x1020.
struct SyntheticOrc {
	FakeMemory memory;
	SymbolTable symbols;

	SyntheticOrc()
	{
		const std::uint64_t ips = 0xffffffff82000000ull, entries = 0xffffffff82001000ull;
		const std::uint64_t code[] = {0xffffffff81001000ull, 0xffffffff81001010ull, 0xffffffff81001020ull};
		// {sp_offset, bp_offset, flags}: CALL sp+8; REGS sp+0; REGS_PARTIAL sp+0
		const std::uint16_t rows[3][3] = {{8, 0, 5 | (2 << 8)}, {0, 0, 5 | (3 << 8)}, {0, 0, 5 | (4 << 8)}};
		for (int i = 0; i < 3; i++) {
			std::int32_t rel = static_cast<std::int32_t>(code[i] - (ips + 4 * i));
			memory.put(ips + 4 * i, &rel, 4);
			memory.put(entries + 6 * i, rows[i], 6);
		}
		symbols.add(ips, 'D', "__start_orc_unwind_ip");
		symbols.add(ips + 12, 'D', "__stop_orc_unwind_ip");
		symbols.add(entries, 'D', "__start_orc_unwind");
		symbols.finalize();
	}
};

}  // namespace

TEST(symbols_orc, NewFormatAndRegisterFrames)
{
	SyntheticOrc fake;
	auto orc = OrcTable::load(fake.symbols, fake.memory.reader());
	ASSERT_TRUE(orc.ok()) << orc.error().to_string();
	EXPECT_TRUE(orc->new_format());
	EXPECT_EQ(orc->find(0xffffffff81001005ull)->type, OrcType::call);
	EXPECT_FALSE(orc->find(0xffffffff81000fffull));

	// pt_regs frame: ip at +128, sp at +152, bp at +32.
	const std::uint64_t sp = 0xffffc90000002000ull;
	fake.memory.put64(sp + 128, 0xffffffff81234567ull);
	fake.memory.put64(sp + 152, 0xffffc90000003000ull);
	fake.memory.put64(sp + 32, 0x3333);
	auto regs = unwind_step(*orc, {0xffffffff81001010ull, sp, 0x9, true}, fake.memory.reader());
	ASSERT_TRUE(regs.ok()) << regs.error().to_string();
	EXPECT_EQ(regs->caller.rip, 0xffffffff81234567ull);
	EXPECT_EQ(regs->caller.rsp, 0xffffc90000003000ull);
	EXPECT_EQ(regs->caller.rbp, 0x3333u);
	EXPECT_TRUE(regs->caller.exact_ip);

	// iret frame: ip at +0, sp at +24; rbp unchanged.
	fake.memory.put64(sp, 0xffffffff81000abcull);
	fake.memory.put64(sp + 24, 0xffffc90000004000ull);
	auto iret = unwind_step(*orc, {0xffffffff81001020ull, sp, 0x9, true}, fake.memory.reader());
	ASSERT_TRUE(iret.ok()) << iret.error().to_string();
	EXPECT_EQ(iret->caller.rip, 0xffffffff81000abcull);
	EXPECT_EQ(iret->caller.rsp, 0xffffc90000004000ull);
	EXPECT_EQ(iret->caller.rbp, 0x9u);
}

TEST(symbols_orc, MissingSymbolsAndUnreadableTablesAreErrors)
{
	SymbolTable none;
	none.finalize();
	FakeMemory memory;
	auto missing = OrcTable::load(none, memory.reader());
	ASSERT_FALSE(missing.ok());
	EXPECT_NE(missing.error().message.find("__start_orc_unwind_ip"), std::string::npos);
	SyntheticOrc fake;
	FakeMemory empty;
	EXPECT_FALSE(OrcTable::load(fake.symbols, empty.reader()).ok());
}
