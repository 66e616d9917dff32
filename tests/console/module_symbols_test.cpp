// A module's symbols through kernel memory (console/module_symbols.hpp):
// struct module's and struct mod_kallsyms's field offsets from the kernel's
// BTF, checked against pahole reading the same BTF; a symbol table laid out
// in memory built here as kernel/module/kallsyms.c leaves it (an Elf64_Sym
// array with its null first entry, a string table, a type letter per
// symbol); the lookup that names an address.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <regex>

#include "btf/btf_source.hpp"
#include "command_output.hpp"
#include "kernel_memory_support.hpp"
#include "module_symbols.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

TEST(ModuleSymbols, KallsymsFieldsAreWherePaholeSaysTheyAre)
{
	if (!test::pahole_reads_host_btf())
		GTEST_SKIP() << "needs " << test::kHostBtf << " and pahole (dwarves)";
	auto types = dbg::btf::load_file(test::kHostBtf);
	ASSERT_TRUE(types) << types.error().to_string();
	auto layout = module_kallsyms_layout(*types);
	ASSERT_TRUE(layout) << layout.error().to_string();
	EXPECT_EQ(layout->kallsyms, static_cast<uint64_t>(test::pahole_offset("module", "kallsyms")));
	EXPECT_EQ(layout->symtab, static_cast<uint64_t>(test::pahole_offset("mod_kallsyms", "symtab")));
	EXPECT_EQ(layout->num_symtab, static_cast<uint64_t>(test::pahole_offset("mod_kallsyms", "num_symtab")));
	EXPECT_EQ(layout->strtab, static_cast<uint64_t>(test::pahole_offset("mod_kallsyms", "strtab")));
	EXPECT_EQ(layout->typetab, static_cast<uint64_t>(test::pahole_offset("mod_kallsyms", "typetab")));
}

// 6.1's layout: struct module's kallsyms at 0x1e8; struct mod_kallsyms
// { Elf_Sym *symtab; unsigned int num_symtab; char *strtab; char *typetab; }.
constexpr ModuleKallsymsLayout kLayout{.kallsyms = 0x1e8, .symtab = 0, .num_symtab = 8, .strtab = 16, .typetab = 24};
constexpr uint64_t kModule = 0xffffffffc0a05000ull, kCoreKallsyms = kModule + 0x300;
constexpr uint64_t kSymtab = 0xffffffffc0a08000ull, kStrtab = 0xffffffffc0a09000ull, kTypetab = 0xffffffffc0a0a000ull;
constexpr uint64_t kText = 0xffffffffc0a00000ull;

struct Sym {
	const char *name;
	uint64_t value, size;
	char type;
};

// The table as the kernel leaves it: entry 0 the null symbol, names at
// their st_name offsets in strtab, a type letter per entry in typetab.
void put_kallsyms(test::GuestMemory &mem, const std::vector<Sym> &syms, uint32_t count_override = 0)
{
	mem.put_value<uint64_t>(kModule + kLayout.kallsyms, kCoreKallsyms);
	mem.put_value<uint64_t>(kCoreKallsyms + kLayout.symtab, kSymtab);
	mem.put_value<uint32_t>(kCoreKallsyms + kLayout.num_symtab, count_override ? count_override : syms.size() + 1);
	mem.put_value<uint64_t>(kCoreKallsyms + kLayout.strtab, kStrtab);
	mem.put_value<uint64_t>(kCoreKallsyms + kLayout.typetab, kTypetab);
	uint8_t null_sym[24] = {};
	mem.put(kSymtab, null_sym, 24);
	mem.put_value<uint8_t>(kStrtab, 0);
	mem.put_value<char>(kTypetab, 0);
	uint32_t name = 1;
	for (size_t i = 0; i < syms.size(); i++) {
		uint64_t e = kSymtab + 24 * (i + 1);
		mem.put_value<uint32_t>(e, name);
		mem.put_value<uint32_t>(e + 4, 0x12);	// st_info GLOBAL FUNC, other 0
		mem.put_value<uint64_t>(e + 8, syms[i].value);
		mem.put_value<uint64_t>(e + 16, syms[i].size);
		mem.put(kStrtab + name, syms[i].name, std::strlen(syms[i].name) + 1);
		mem.put_value<char>(kTypetab + i + 1, syms[i].type);
		name += std::strlen(syms[i].name) + 1;
	}
	for (uint32_t i = 0; i < 64; i++)	// the rest of the module's memory
		mem.put_value<uint8_t>(kStrtab + name + i, 0);
}

}  // namespace

TEST(ModuleSymbols, TheTableIsReadAsTheKernelKeepsIt)
{
	test::GuestMemory mem;
	put_kallsyms(mem, {{"vtice_spin_thread", kText + 0x40, 0x60, 't'},
			   {"vtice_spin_loop", kText, 0x20, 't'},
			   {"", kText + 0x100, 8, 'd'},	// nameless: left out
			   {"__this_module", kText + 0x2000, 0x500, 'd'}});
	auto symbols = read_module_symbols(kLayout, mem.reader(), kModule);
	ASSERT_TRUE(symbols) << symbols.error().to_string();
	ASSERT_EQ(symbols->size(), 3u);
	EXPECT_EQ((*symbols)[0].name, "vtice_spin_loop") << "sorted by address";
	EXPECT_EQ((*symbols)[0].type, 't');
	EXPECT_EQ((*symbols)[1].size, 0x60u);
	EXPECT_EQ((*symbols)[2].type, 'd');
	auto hit = module_symbol_at(*symbols, kText + 9);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "vtice_spin_loop");
	EXPECT_EQ(hit->offset, 9u);
	EXPECT_FALSE(module_symbol_at(*symbols, kText + 0x30)) << "between vtice_spin_loop's end and the next";
	hit = module_symbol_at(*symbols, kText + 0x50);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "vtice_spin_thread");
	EXPECT_EQ(hit->start, kText + 0x40);
	EXPECT_FALSE(module_symbol_at(*symbols, kText - 1));
}

TEST(ModuleSymbols, TablesThatCannotBeBelievedOrReadAreErrors)
{
	test::GuestMemory mem;
	put_kallsyms(mem, {{"f", kText, 0x10, 't'}}, 50000000);
	auto huge = read_module_symbols(kLayout, mem.reader(), kModule);
	ASSERT_FALSE(huge);
	EXPECT_NE(huge.error().message.find("not believable"), std::string::npos) << huge.error().message;
	put_kallsyms(mem, {{"f", kText, 0x10, 't'}}, 5);	// entries past the table: unreadable
	auto cut = read_module_symbols(kLayout, mem.reader(), kModule);
	ASSERT_FALSE(cut);
	EXPECT_NE(cut.error().message.find("cannot read its symbol table"), std::string::npos) << cut.error().message;
	auto nowhere = read_module_symbols(kLayout, mem.reader(), kModule + 0x100000);
	ASSERT_FALSE(nowhere);
	EXPECT_NE(nowhere.error().message.find("kallsyms"), std::string::npos) << nowhere.error().message;
}

// A hostile st_name far past the names: that symbol is left out, and the
// names read stay within 128 bytes a symbol (not 4 GiB).
TEST(ModuleSymbols, ANameFarPastTheTableIsLeftOutWithoutReadingThere)
{
	test::GuestMemory mem;
	put_kallsyms(mem, {{"vtice_spin_loop", kText, 0x20, 't'}, {"far", kText + 0x40, 0x20, 't'}});
	mem.put_value<uint32_t>(kSymtab + 2 * 24, 0xfffffff0u);
	std::uint64_t largest = 0;
	auto reader = mem.reader();
	symbols::MemoryReader counting = [&](uint64_t address, std::span<uint8_t> out) {
		largest = std::max<uint64_t>(largest, out.size());
		return reader(address, out);
	};
	auto symbols = read_module_symbols(kLayout, counting, kModule);
	ASSERT_TRUE(symbols) << symbols.error().to_string();
	ASSERT_EQ(symbols->size(), 1u);
	EXPECT_EQ((*symbols)[0].name, "vtice_spin_loop");
	EXPECT_LE(largest, 3u * 128 + 512) << "the names read: 128 bytes a symbol and a name's length";
}
