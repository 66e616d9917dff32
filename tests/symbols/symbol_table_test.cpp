#include <gtest/gtest.h>

#include "symbols/symbol_table.hpp"

using namespace vtice::symbols;

namespace {

SymbolTable small_table()
{
	SymbolTable table;
	table.add(0xffffffff81000100, 't', "second");
	table.add(0xffffffff81000000, 'T', "_text");
	table.add(0xffffffff81000000, 't', "local_alias");
	table.add(0xffffffff81000200, 'D', "data_with_size", {}, 0x10);
	table.add(0x2000, 'A', "percpu_var");
	table.add(0xffffffffc0001000, 't', "mod_fn", "ext4");
	table.finalize();
	return table;
}

}  // namespace

TEST(symbols_table, AddressToNamePlusOffset)
{
	SymbolTable table = small_table();
	auto hit = table.lookup(0xffffffff81000105);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "second");
	EXPECT_EQ(hit->start, 0xffffffff81000100u);
	EXPECT_EQ(hit->offset, 5u);
	EXPECT_FALSE(table.lookup(0xffffffff80ffffff));  // below everything
}

TEST(symbols_table, GlobalPreferredAtTheSameAddress)
{
	EXPECT_EQ(small_table().lookup(0xffffffff81000000)->name, "_text");
}

TEST(symbols_table, SizeLimitsCoverage)
{
	SymbolTable table = small_table();
	EXPECT_EQ(table.lookup(0xffffffff8100020f)->name, "data_with_size");
	EXPECT_FALSE(table.lookup(0xffffffff81000210));
}

TEST(symbols_table, ModuleSymbolsAreQualified)
{
	SymbolTable table = small_table();
	EXPECT_EQ(table.lookup(0xffffffffc0001000)->name, "ext4:mod_fn");
	EXPECT_EQ(table.address_of("ext4:mod_fn"), 0xffffffffc0001000u);
	EXPECT_EQ(table.address_of("mod_fn"), 0xffffffffc0001000u);
	EXPECT_FALSE(table.address_of("xfs:mod_fn"));
	EXPECT_FALSE(table.lookup(0xffffffffc0001001));  // last symbol, no size
}

TEST(symbols_table, SlideMovesKernelAddressesButNotPerCpuOffsets)
{
	SymbolTable table = small_table();
	table.set_slide(0x1e00000);
	EXPECT_EQ(table.address_of("second"), 0xffffffff82e00100u);
	EXPECT_EQ(table.lookup(0xffffffff82e00101)->name, "second");
	EXPECT_EQ(table.lookup(0xffffffff82e00101)->start, 0xffffffff82e00100u);
	EXPECT_EQ(table.address_of("percpu_var"), 0x2000u);
	table.set_slide(-0x100);
	EXPECT_EQ(table.address_of("_text"), 0xffffffff80ffff00u);
}

TEST(symbols_table, NameMisses)
{
	SymbolTable table = small_table();
	EXPECT_FALSE(table.address_of("nope"));
	EXPECT_FALSE(table.address_of(""));
	EXPECT_FALSE(SymbolTable().address_of("x"));
	EXPECT_FALSE(SymbolTable().lookup(0));
}

TEST(symbols_table, CopiesStayUsable)
{
	SymbolTable copy;
	{
		SymbolTable original = small_table();
		copy = original;
	}
	EXPECT_EQ(copy.address_of("second"), 0xffffffff81000100u);
}

TEST(symbols_table, SymbolizerKeepsTheTableAlive)
{
	vtice::Symbolizer symbolize = make_symbolizer(std::make_shared<const SymbolTable>(small_table()));
	EXPECT_EQ(vtice::format_address(0xffffffff81000102, symbolize), "second+0x2");
	EXPECT_EQ(vtice::format_address(0x10, symbolize), "0x10");
}
