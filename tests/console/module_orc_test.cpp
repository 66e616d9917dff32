// The modules' ORC tables (console/module_orc.hpp): struct module's field
// offsets from the kernel's BTF, checked against pahole reading the same
// BTF; the tables found through a /proc/modules and sysfs laid out as the
// kernel lays them out, in memory built here; and the lookup that picks a
// module's table for its text and the kernel's for the kernel's.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "btf/btf_source.hpp"
#include "command_output.hpp"
#include "kernel_memory_support.hpp"
#include "module_orc.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

TEST(ModuleOrc, StructModulesFieldsAreWherePaholeSaysTheyAre)
{
	if (!test::pahole_reads_host_btf())
		GTEST_SKIP() << "needs " << test::kHostBtf << " and pahole (dwarves)";
	long arch = test::pahole_offset("module", "arch");
	long ips = test::pahole_offset("mod_arch_specific", "orc_unwind_ip");
	long entries = test::pahole_offset("mod_arch_specific", "orc_unwind");
	long count = test::pahole_offset("mod_arch_specific", "num_orcs");
	if (arch < 0 || ips < 0)
		GTEST_SKIP() << "this kernel's struct module has no ORC fields (no CONFIG_UNWINDER_ORC)";
	auto types = dbg::btf::load_file(test::kHostBtf);
	ASSERT_TRUE(types) << types.error().to_string();
	auto layout = module_orc_layout(*types);
	ASSERT_TRUE(layout) << layout.error().to_string();
	EXPECT_EQ(layout->ip_table, static_cast<uint64_t>(arch + ips));
	EXPECT_EQ(layout->entries, static_cast<uint64_t>(arch + entries));
	EXPECT_EQ(layout->count, static_cast<uint64_t>(arch + count));
	long mem = test::pahole_offset("module", "mem\\[\\d+\\]");
	long base = test::pahole_offset("module_memory", "base"), size = test::pahole_offset("module_memory", "size");
	if (mem >= 0) {	// 6.4 and later: mem[MOD_TEXT], MOD_TEXT being 0
		EXPECT_EQ(layout->text_base, static_cast<uint64_t>(mem + base));
		EXPECT_EQ(layout->text_size, static_cast<uint64_t>(mem + size));
	} else {
		long core = test::pahole_offset("module", "core_layout");
		EXPECT_EQ(layout->text_base, static_cast<uint64_t>(core + test::pahole_offset("module_layout", "base")));
		EXPECT_EQ(layout->text_size, static_cast<uint64_t>(core + test::pahole_offset("module_layout", "text_size")));
	}
}

TEST(ModuleOrc, StructModulesListLinkAndNameAreWherePaholeSaysTheyAre)
{
	if (!test::pahole_reads_host_btf())
		GTEST_SKIP() << "needs " << test::kHostBtf << " and pahole (dwarves)";
	long list = test::pahole_offset("module", "list");
	std::string out = test::command_output("pahole -F btf -C module " + std::string(test::kHostBtf) + " 2>/dev/null");
	std::smatch m;
	ASSERT_TRUE(std::regex_search(out, m, std::regex("char\\s+name\\[(\\d+)\\];\\s*/\\*\\s*(\\d+)\\s")))
		<< "pahole shows no char name[N] in struct module";
	auto types = dbg::btf::load_file(test::kHostBtf);
	ASSERT_TRUE(types) << types.error().to_string();
	auto layout = module_list_layout(*types);
	ASSERT_TRUE(layout) << layout.error().to_string();
	EXPECT_EQ(layout->list, static_cast<uint64_t>(list));
	EXPECT_EQ(layout->name, std::stoull(m[2]));
	EXPECT_EQ(layout->name_size, std::stoull(m[1]));
}

constexpr ModuleOrcLayout kLayout{.ip_table = 440, .entries = 448, .count = 432, .text_base = 320, .text_size = 332};
constexpr uint64_t kKernelText = 0xffffffff81000000ull, kModuleText = 0xffffffffc0a00000ull;

class ModuleOrcFiles : public ::testing::Test {
protected:
	std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
				    (std::string("module-orc-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
	test::GuestMemory mem;

	void SetUp() override
	{
		std::filesystem::remove_all(dir);
		std::filesystem::create_directories(dir);
	}
	void TearDown() override { std::filesystem::remove_all(dir); }

	void module(const std::string &name, const std::string &this_module)
	{
		std::ofstream(dir / "modules", std::ios::app) << name << " 16384 0 - Live 0xffffffffc0a00000\n";
		std::filesystem::create_directories(dir / "sys" / name / "sections");
		std::ofstream(dir / "sys" / name / "sections" / ".gnu.linkonce.this_module") << this_module << "\n";
	}

	// struct module at address, its tables at ips and entries.
	// text_size 0: its text fields left unreadable.
	void struct_module(uint64_t address, uint64_t ips, uint64_t entries, uint32_t count, uint64_t text = 0,
			   uint32_t text_size = 0)
	{
		mem.put(address + kLayout.ip_table, &ips, 8);
		mem.put(address + kLayout.entries, &entries, 8);
		mem.put(address + kLayout.count, &count, 4);
		if (text_size) {
			mem.put(address + kLayout.text_base, &text, 8);
			mem.put(address + kLayout.text_size, &text_size, 4);
		}
	}

	symbols::OrcTable kernel_table()
	{
		test::put_orc_table(mem, 0xffffffff82000000ull, 0xffffffff82100000ull, {kKernelText, kKernelText + 0x100000});
		auto t = symbols::OrcTable::load(0xffffffff82000000ull, 2, 0xffffffff82100000ull, mem.reader());
		EXPECT_TRUE(t);
		return std::move(*t);
	}

	ModuleOrcs load(const symbols::OrcTable &kernel)
	{
		return load_module_orcs(kLayout, mem.reader(), kernel, (dir / "modules").string(), (dir / "sys").string());
	}
};

TEST_F(ModuleOrcFiles, EachModulesTablesComeFromItsStructModule)
{
	symbols::OrcTable kernel = kernel_table();
	module("vtice_spin", "0xffffffffc0a05000");
	struct_module(0xffffffffc0a05000ull, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, 3);
	test::put_orc_table(mem, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull,
		  {kModuleText, kModuleText + 0x40, kModuleText + 0x80});
	ModuleOrcs orcs = load(kernel);
	ASSERT_EQ(orcs.tables.size(), 1u) << (orcs.skipped.empty() ? "" : orcs.skipped[0]);
	EXPECT_TRUE(orcs.skipped.empty());
	auto entry = orcs.tables[0].find(kModuleText + 0x44);
	ASSERT_TRUE(entry);
	EXPECT_EQ(entry->ip, kModuleText + 0x40);
	EXPECT_EQ(entry->type, symbols::OrcType::call) << "the kernel's encoding (6.3+)";

	symbols::OrcTables tables(std::move(kernel));
	tables.set_modules(std::move(orcs.tables));
	ASSERT_NE(tables.for_ip(kModuleText + 0x44), nullptr);
	EXPECT_NE(tables.for_ip(kModuleText + 0x44), &tables.kernel());
	EXPECT_EQ(tables.for_ip(kKernelText + 0x10), &tables.kernel());
	EXPECT_EQ(tables.for_ip(kModuleText + 0x1000), nullptr) << "past the module's last entry: no table";
}

TEST_F(ModuleOrcFiles, AModuleWithoutUsableTablesIsSkippedWithItsReason)
{
	symbols::OrcTable kernel = kernel_table();
	module("hidden", "0x0000000000000000");	// kptr_restrict's zeros
	module("no_orc", "0xffffffffc0b00000");
	struct_module(0xffffffffc0b00000ull, 0, 0, 0);
	module("liar", "0xffffffffc0c00000");
	struct_module(0xffffffffc0c00000ull, 0xffffffffc0c01000ull, 0xffffffffc0c02000ull, 50000000);
	module("unmapped", "0xffffffffc0d00000");	// its struct module cannot be read
	ModuleOrcs orcs = load(kernel);
	EXPECT_TRUE(orcs.tables.empty());
	ASSERT_EQ(orcs.skipped.size(), 4u);
	EXPECT_NE(orcs.skipped[0].find("hidden: "), std::string::npos);
	EXPECT_NE(orcs.skipped[0].find("kptr_restrict"), std::string::npos);
	EXPECT_NE(orcs.skipped[1].find("no_orc: no ORC tables"), std::string::npos);
	EXPECT_NE(orcs.skipped[2].find("not believable"), std::string::npos);
	EXPECT_NE(orcs.skipped[3].find("cannot read"), std::string::npos);
}

// The same modules found by walking the kernel's list through memory alone
// (the debug stub's way): struct module's link at 8 and name at 24 (6.1's
// layout, checked against pahole above), the list's head at kHead.
constexpr ModuleListLayout kList{.list = 8, .name = 24, .name_size = 56};
constexpr uint64_t kHead = 0xffffffff82b292a0ull;

class ModuleOrcList : public ModuleOrcFiles {
protected:
	// Links the structs at addresses into the list, in that order, as the kernel's list_add_tail would.
	void link(const std::vector<uint64_t> &modules)
	{
		std::vector<uint64_t> nodes{kHead};
		for (uint64_t m : modules)
			nodes.push_back(m + kList.list);
		for (size_t i = 0; i < nodes.size(); i++)
			mem.put(nodes[i], &nodes[(i + 1) % nodes.size()], 8);
	}

	void name(uint64_t module, const std::string &text)
	{
		char raw[56] = {};
		std::memcpy(raw, text.data(), text.size());
		mem.put(module + kList.name, raw, sizeof(raw));
	}
};

TEST_F(ModuleOrcList, EachModuleInTheKernelsListWithTheTextItsTableCovers)
{
	symbols::OrcTable kernel = kernel_table();
	const uint64_t a = 0xffffffffc0a05000ull, b = 0xffffffffc0b05000ull;
	struct_module(a, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, 3, kModuleText, 0x1000);
	test::put_orc_table(mem, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, {kModuleText, kModuleText + 0x40, kModuleText + 0x80});
	struct_module(b, 0, 0, 0);	// built without ORC
	name(a, "vtice_spin");
	name(b, "no_orc");
	link({a, b});
	ModuleList listed = list_modules(kLayout, kList, mem.reader(), kHead);
	ASSERT_EQ(listed.modules.size(), 2u) << "a module without tables is listed too (its names, its text)";
	EXPECT_TRUE(listed.skipped.empty());
	const ListedModule &m = listed.modules[0];
	EXPECT_EQ(m.name, "vtice_spin");
	EXPECT_EQ(m.text_lo, kModuleText);
	EXPECT_EQ(m.text_hi, kModuleText + 0x1000);
	EXPECT_EQ(listed.modules[1].name, "no_orc");
	EXPECT_EQ(listed.modules[1].count, 0u);
	auto none = load_listed_module(listed.modules[1], mem.reader(), kernel);
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("no ORC tables"), std::string::npos);
	auto table = load_listed_module(m, mem.reader(), kernel);
	ASSERT_TRUE(table) << table.error().to_string();
	auto entry = table->find(kModuleText + 0x44);
	ASSERT_TRUE(entry);
	EXPECT_EQ(entry->ip, kModuleText + 0x40);
	EXPECT_TRUE(table->covers(kModuleText + 0x800)) << "its text, past its last entry";
	EXPECT_FALSE(table->covers(kModuleText + 0x1000));
}

// A module's table keeps the entries of its init text after the kernel
// freed it, and that text may have sat beyond another module's: limited
// to its text, each table covers its own module's frames alone.
TEST_F(ModuleOrcList, ATableLimitedToItsModulesTextLeavesAnotherModulesFramesToItsOwn)
{
	symbols::OrcTable kernel = kernel_table();
	const uint64_t a = 0xffffffffc0a05000ull, b = 0xffffffffc0b05000ull, b_text = 0xffffffffc0b00000ull;
	struct_module(a, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, 3, kModuleText, 0x1000);
	test::put_orc_table(mem, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull,
		  {kModuleText, kModuleText + 0x40, 0xffffffffc0c00000ull});	// the last: its freed init text
	struct_module(b, 0xffffffffc0b03000ull, 0xffffffffc0b04000ull, 2, b_text, 0x1000);
	test::put_orc_table(mem, 0xffffffffc0b03000ull, 0xffffffffc0b04000ull, {b_text, b_text + 0x20});
	name(a, "spans");
	name(b, "inside");
	link({a, b});
	ModuleList listed = list_modules(kLayout, kList, mem.reader(), kHead);
	ASSERT_EQ(listed.modules.size(), 2u);
	std::vector<symbols::OrcTable> tables;
	for (const ListedModule &m : listed.modules) {
		auto t = load_listed_module(m, mem.reader(), kernel);
		ASSERT_TRUE(t) << t.error().to_string();
		tables.push_back(std::move(*t));
	}
	symbols::OrcTables all(std::move(kernel));
	all.set_modules(tables);
	const symbols::OrcTable *at_b = all.for_ip(b_text + 0x24);
	ASSERT_NE(at_b, nullptr);
	EXPECT_EQ(at_b->find(b_text + 0x24)->ip, b_text + 0x20) << "inside's own table, not spans' entry at its start";
}

// A hostile kernel's module name reaches the analyst's terminal in warnings
// and frame notes: its control bytes come out escaped.
TEST_F(ModuleOrcList, AModulesNameIsEscaped)
{
	const uint64_t a = 0xffffffffc0a05000ull, b = 0xffffffffc0b05000ull;
	struct_module(a, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, 3, kModuleText, 0x1000);
	struct_module(b, 0xffffffffc0b01000ull, 0xffffffffc0b02000ull, 50000000);	// skipped: not believable
	name(a, "evil\x1b[2J");
	name(b, "\x9bliar");
	link({a, b});
	ModuleList listed = list_modules(kLayout, kList, mem.reader(), kHead);
	ASSERT_EQ(listed.modules.size(), 1u);
	EXPECT_EQ(listed.modules[0].name, "evil\\x1b[2J");
	ASSERT_EQ(listed.skipped.size(), 1u);
	EXPECT_EQ(listed.skipped[0].rfind("\\x9bliar: ", 0), 0u) << listed.skipped[0];
}

TEST_F(ModuleOrcList, AnEmptyListHoldsNoModule)
{
	link({});
	ModuleList listed = list_modules(kLayout, kList, mem.reader(), kHead);
	EXPECT_TRUE(listed.modules.empty());
	EXPECT_TRUE(listed.skipped.empty());
}

// A list that loops without coming back to its head, or whose link cannot
// be read: the walk ends with what it found, and says so.
TEST_F(ModuleOrcList, ALoopOrAnUnreadableLinkEndsTheWalkWithWhatItFound)
{
	const uint64_t a = 0xffffffffc0a05000ull, b = 0xffffffffc0b05000ull;
	struct_module(a, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, 3);
	test::put_orc_table(mem, 0xffffffffc0a03000ull, 0xffffffffc0a04000ull, {kModuleText, kModuleText + 0x40, kModuleText + 0x80});
	name(a, "first");
	struct_module(b, 0, 0, 0);
	name(b, "second");
	link({a, b});
	const uint64_t back = a + kList.list;	// b's next is a again, never the head
	mem.put(b + kList.list, &back, 8);
	ModuleList looped = list_modules(kLayout, kList, mem.reader(), kHead);
	EXPECT_EQ(looped.modules.size(), 2u) << "first, and second without tables, each once";
	ASSERT_FALSE(looped.skipped.empty());
	EXPECT_NE(looped.skipped.back().find("loops"), std::string::npos) << looped.skipped.back();

	const uint64_t nowhere = 0xffffffffc0f00008ull;
	mem.put(a + kList.list, &nowhere, 8);
	ModuleList cut = list_modules(kLayout, kList, mem.reader(), kHead);
	EXPECT_EQ(cut.modules.size(), 1u) << "first, found before the link that leads nowhere";
	ASSERT_EQ(cut.skipped.size(), 2u);
	EXPECT_NE(cut.skipped[0].find("module at 0xffffffffc0f00000: cannot read"), std::string::npos) << cut.skipped[0];
	EXPECT_NE(cut.skipped[1].find("cannot read its next link (after module at 0xffffffffc0f00000); the rest is "
				      "not read"), std::string::npos) << cut.skipped[1];
}

}  // namespace
