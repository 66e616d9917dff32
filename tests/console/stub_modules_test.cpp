// The modules through a debug session (console/stub_modules.hpp): the
// kernel's list of modules, each struct module, its ORC tables and its
// kallsyms laid out in a target's memory at the offsets the host kernel's
// BTF gives (the layout tests check those against pahole); what is read,
// when, and what is forgotten when a module goes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "btf/btf_source.hpp"
#include "kernel_memory_support.hpp"
#include "memory_target.hpp"
#include "stub_modules.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

constexpr std::uint64_t kHead = 0xffffffff82b292a0ull;
constexpr std::uint64_t kKernelText = 0xffffffff81000000ull;

class StubModulesTest : public ::testing::Test {
protected:
	test::GuestMemory mem;
	test::MemoryTarget *target = nullptr;
	std::unique_ptr<dbg::Session> session;
	std::optional<symbols::OrcTable> kernel;
	ModuleOrcLayout orc{};
	ModuleListLayout list{};
	ModuleKallsymsLayout kallsyms{};
	dbg::StringOutput log;

	void SetUp() override
	{
		if (!test::pahole_reads_host_btf())
			GTEST_SKIP() << "needs " << test::kHostBtf << " (the layout of struct module)";
		auto types = dbg::btf::load_file(test::kHostBtf);
		ASSERT_TRUE(types) << types.error().to_string();
		auto o = module_orc_layout(*types);
		auto l = module_list_layout(*types);
		auto k = module_kallsyms_layout(*types);
		if (!o || !l || !k || !o->orc)
			GTEST_SKIP() << "the host kernel's struct module lacks ORC or kallsyms fields";
		orc = *o, list = *l, kallsyms = *k;
		test::put_orc_table(mem, 0xffffffff82000000ull, 0xffffffff82100000ull, {kKernelText, kKernelText + 0x100000});
		auto table = symbols::OrcTable::load(0xffffffff82000000ull, 2, 0xffffffff82100000ull, mem.reader());
		ASSERT_TRUE(table);
		kernel.emplace(std::move(*table));
		auto t = std::make_unique<test::MemoryTarget>(mem);
		target = t.get();
		session = std::make_unique<dbg::Session>(std::move(t));
		session->set_symbols(std::make_unique<dbg::SymbolList>(
			std::vector<dbg::SymbolList::Entry>{{kHead, "modules", 'd'}, {kKernelText, "_stext", 'T'}}, "test"));
	}

	std::string btf = test::kHostBtf;

	std::unique_ptr<StubModules> modules()
	{
		return std::make_unique<StubModules>(*session, KernelBtf(btf), orc.orc ? &*kernel : nullptr, log);
	}

	// The modules laid out as the kernel whose BTF is at path lays them out.
	void use_btf(const std::string &path)
	{
		auto types = dbg::btf::load_file(path);
		ASSERT_TRUE(types) << types.error().to_string();
		auto o = module_orc_layout(*types);
		auto l = module_list_layout(*types);
		auto k = module_kallsyms_layout(*types);
		ASSERT_TRUE(o && l && k);
		orc = *o, list = *l, kallsyms = *k, btf = path;
	}

	// Links the structs at addresses into the kernel's list, in that order.
	void link(const std::vector<std::uint64_t> &structs)
	{
		std::vector<std::uint64_t> nodes{kHead};
		for (std::uint64_t m : structs)
			nodes.push_back(m + list.list);
		for (std::size_t i = 0; i < nodes.size(); i++)
			mem.put_value<std::uint64_t>(nodes[i], nodes[(i + 1) % nodes.size()]);
	}

	// A module at address named name, its text [text, text + 0x1000) with
	// ORC entries at each function's start, and kallsyms naming them.
	void module(std::uint64_t address, const std::string &name, std::uint64_t text,
		    const std::vector<std::pair<std::string, std::uint64_t>> &functions)
	{
		char raw[64] = {};
		std::memcpy(raw, name.data(), std::min<std::size_t>(name.size(), list.name_size - 1));
		mem.put(address + list.name, raw, std::min<std::size_t>(sizeof(raw), list.name_size));
		const std::uint64_t ips = address + 0x4000, entries = address + 0x5000;
		std::vector<std::uint64_t> starts;
		for (const auto &f : functions)
			starts.push_back(text + f.second);
		if (orc.orc) {
			test::put_orc_table(mem, ips, entries, starts);
			mem.put_value<std::uint64_t>(address + orc.ip_table, ips);
			mem.put_value<std::uint64_t>(address + orc.entries, entries);
			mem.put_value<std::uint32_t>(address + orc.count, static_cast<std::uint32_t>(starts.size()));
		}
		mem.put_value<std::uint64_t>(address + orc.text_base, text);
		mem.put_value<std::uint32_t>(address + orc.text_size, 0x1000);
		// kallsyms: its struct mod_kallsyms, a null symbol then one a function
		const std::uint64_t ks = address + 0x6000, symtab = address + 0x7000, strtab = address + 0x8000,
				    typetab = address + 0x9000;
		mem.put_value<std::uint64_t>(address + kallsyms.kallsyms, ks);
		mem.put_value<std::uint64_t>(ks + kallsyms.symtab, symtab);
		mem.put_value<std::uint32_t>(ks + kallsyms.num_symtab, static_cast<std::uint32_t>(functions.size() + 1));
		mem.put_value<std::uint64_t>(ks + kallsyms.strtab, strtab);
		mem.put_value<std::uint64_t>(ks + kallsyms.typetab, typetab);
		std::uint8_t null_sym[24] = {};
		mem.put(symtab, null_sym, sizeof(null_sym));
		std::uint32_t at = 1;
		mem.put_value<std::uint8_t>(strtab, 0);
		for (std::size_t i = 0; i < functions.size(); i++) {
			const std::uint64_t e = symtab + 24 * (i + 1);
			mem.put_value<std::uint32_t>(e, at);
			mem.put_value<std::uint32_t>(e + 4, 0x12);
			mem.put_value<std::uint64_t>(e + 8, text + functions[i].second);
			mem.put_value<std::uint64_t>(e + 16, 0x20);
			mem.put(strtab + at, functions[i].first.c_str(), functions[i].first.size() + 1);
			at += static_cast<std::uint32_t>(functions[i].first.size() + 1);
		}
		for (std::uint32_t i = 0; i < 600; i++)
			mem.put_value<std::uint8_t>(strtab + at + i, 0);
		for (std::size_t i = 0; i <= functions.size(); i++)
			mem.put_value<char>(typetab + i, i ? 't' : 0);
	}
};

constexpr std::uint64_t kSpin = 0xffffffffc0a05000ull, kSpinText = 0xffffffffc0a00000ull;
constexpr std::uint64_t kOther = 0xffffffffc0c05000ull, kOtherText = 0xffffffffc0c00000ull;

bool every_module(std::string_view)
{
	return true;
}

// struct module as a kernel built with frame pointers (no
// CONFIG_UNWINDER_ORC) declares it, the members the console reads and
// no ORC fields; its BTF made by pahole from the compiler's DWARF, as the
// kernel's build makes its own. Empty when cc or pahole is missing.
std::string btf_without_orc()
{
	char dir[] = "/tmp/vtice-noorc-XXXXXX";
	if (!mkdtemp(dir))
		return "";
	const std::string c = std::string(dir) + "/module.c", btf = std::string(dir) + "/module.btf";
	std::ofstream(c) << "struct list_head { struct list_head *next, *prev; };\n"
			    "struct module_memory { void *base; unsigned int size; };\n"
			    "struct mod_kallsyms { void *symtab; unsigned int num_symtab; char *strtab; char *typetab; };\n"
			    "struct mod_arch_specific { unsigned int num_exentries; };\n"
			    "struct module { int state; struct list_head list; char name[56];\n"
			    "\tstruct module_memory mem[7]; struct mod_arch_specific arch;\n"
			    "\tstruct mod_kallsyms *kallsyms; };\n"
			    "struct module m;\n";
	test::command_output("cc -g -c " + c + " -o " + c + ".o && pahole --btf_encode_detached=" + btf + " " + c +
			     ".o 2>&1");
	return std::filesystem::exists(btf) ? btf : "";
}

}  // namespace

TEST_F(StubModulesTest, AModulesAddressesAreNamedAndUnwoundWithItsOwnTables)
{
	module(kSpin, "vtice_spin", kSpinText, {{"vtice_spin_loop", 0}, {"vtice_spin_thread", 0x40}});
	link({kSpin});
	auto m = modules();
	auto hit = m->symbolize(kSpinText + 0x4c);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "vtice_spin_thread");
	EXPECT_EQ(hit->offset, 0xcu);
	auto table = m->table_for(kSpinText + 9);
	ASSERT_TRUE(table) << table.error().message;
	ASSERT_NE(*table, nullptr);
	EXPECT_EQ((*table)->find(kSpinText + 9)->ip, kSpinText);
	const std::size_t before = target->reads;
	EXPECT_FALSE(m->symbolize(kKernelText + 0x10)) << "the kernel's text is not the modules'";
	EXPECT_FALSE(*m->table_for(kKernelText + 0x10));
	EXPECT_EQ(m->symbolize(kSpinText + 1)->name, "vtice_spin_loop");
	EXPECT_EQ(target->reads, before) << "nothing read again, nothing read for the kernel's text";
}

TEST_F(StubModulesTest, ANameIsLookedUpInEveryModulesSymbolsOnce)
{
	module(kSpin, "vtice_spin", kSpinText, {{"vtice_spin_loop", 0}, {"vtice_spin_thread", 0x40}});
	module(kOther, "other", kOtherText, {{"other_fn", 0x100}});
	link({kSpin, kOther});
	auto m = modules();
	EXPECT_EQ(m->lookup("other_fn"), kOtherText + 0x100);
	EXPECT_EQ(m->lookup("vtice_spin_loop"), kSpinText) << "read with the rest";
	EXPECT_FALSE(m->lookup("no_such_function"));
	const std::size_t before = target->reads;
	EXPECT_FALSE(m->lookup("no_such_function"));
	EXPECT_EQ(target->reads, before) << "a name looked for once is not looked for again";
	EXPECT_EQ(m->symbols_read().size(), 3u);
}

// fn:MODULE:NAME through the stub: the name in that module's symbols only
// (the other module's of the same name is not it; only its symbols are
// read), a module loaded since found by walking the list again, and
// what is not there said.
TEST_F(StubModulesTest, ANamedModulesSymbolIsLookedUpInThatModuleAlone)
{
	module(kSpin, "vtice_spin", kSpinText, {{"shared_read", 0}, {"vtice_spin_thread", 0x40}});
	module(kOther, "other", kOtherText, {{"shared_read", 0x100}});
	link({kSpin, kOther});
	auto m = modules();
	auto other = m->lookup_in("other", "shared_read");
	ASSERT_TRUE(other) << other.error().message;
	EXPECT_EQ(*other, kOtherText + 0x100);
	EXPECT_EQ(m->symbols_read().size(), 1u) << "vtice_spin's symbols were not read";
	EXPECT_EQ(m->lookup_in("vtice_spin", "shared_read").value(), kSpinText);
	EXPECT_EQ(m->module_of_function("shared_read", "other").value(), "other");
	auto missing = m->lookup_in("other", "vtice_spin_thread");
	ASSERT_FALSE(missing);
	EXPECT_EQ(missing.error().message, "no symbol vtice_spin_thread in module other's symbols");
	auto none = m->lookup_in("msr", "msr_read");
	ASSERT_FALSE(none);
	EXPECT_EQ(none.error().message, "no module msr in the kernel's list of modules");
	constexpr std::uint64_t kMsr = 0xffffffffc0e05000ull, kMsrText = 0xffffffffc0e00000ull;
	module(kMsr, "msr", kMsrText, {{"msr_read", 0x20}});
	link({kSpin, kOther, kMsr});
	EXPECT_EQ(m->lookup_in("msr", "msr_read").value(), kMsrText + 0x20) << "loaded since: the list walked again";
}

// A module unloaded, another loaded elsewhere: the walk that finds the new
// one forgets what was read of the old, whose text may hold other code.
TEST_F(StubModulesTest, WhatWasReadOfAModuleThatWentIsForgotten)
{
	module(kSpin, "vtice_spin", kSpinText, {{"vtice_spin_loop", 0}});
	link({kSpin});
	auto m = modules();
	ASSERT_TRUE(m->symbolize(kSpinText + 1));
	module(kOther, "other", kOtherText, {{"other_fn", 0}});
	link({kOther});
	ASSERT_TRUE(m->symbolize(kOtherText + 1)) << "a page none covers walks the list again";
	EXPECT_FALSE(m->lookup("vtice_spin_loop")) << "not the unloaded module's address";
	EXPECT_EQ(m->symbols_read().size(), 1u);
}

// rmmod, and a rebuild of the module (another size, other functions)
// loaded where it was, while the target ran: at the next stop the first
// use reads its struct module again, finds it changed, and its old
// symbols and tables are forgotten (a breakpoint at an old address would
// land mid-instruction in the new code). Within a stop the kernel did not
// run, and nothing is read again.
TEST_F(StubModulesTest, AModuleRebuiltAndLoadedWhereItWasIsReadAgainAtTheNextStop)
{
	module(kOther, "other", kOtherText, {{"other_fn", 0x100}});
	link({kOther});
	auto m = modules();
	ASSERT_EQ(m->lookup("other_fn"), kOtherText + 0x100);
	ASSERT_TRUE(m->table_for(kOtherText + 0x101).value());
	module(kOther, "other", kOtherText, {{"new_fn", 0x40}, {"other_fn", 0x200}});
	EXPECT_EQ(m->lookup("other_fn"), kOtherText + 0x100) << "the same stop: nothing is read again";
	target->runs = true;
	ASSERT_EQ(session->stop_count(), 0u);
	(void)session->reverse_step();	// any stop does; this one needs no registers
	ASSERT_EQ(session->stop_count(), 1u);
	EXPECT_EQ(m->lookup("other_fn"), kOtherText + 0x200) << "the new load's address";
	auto hit = m->symbolize(kOtherText + 0x41);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "new_fn");
	EXPECT_EQ(m->symbols_read().size(), 2u) << "the old load's symbol is forgotten";
	auto table = m->table_for(kOtherText + 0x201);
	ASSERT_TRUE(table && *table);
	EXPECT_TRUE((*table)->covers(kOtherText + 0x41)) << "the new load's ORC table (two entries)";
}

// A module that stays costs one read of its struct module a stop, not a
// walk of the list nor its symbols again.
TEST_F(StubModulesTest, AModuleThatStaysIsReadAgainOnceAStop)
{
	module(kSpin, "vtice_spin", kSpinText, {{"vtice_spin_loop", 0}});
	module(kOther, "other", kOtherText, {{"other_fn", 0x100}});
	link({kSpin, kOther});
	auto m = modules();
	ASSERT_TRUE(m->symbolize(kOtherText + 0x101));
	target->runs = true;
	(void)session->reverse_step();
	std::size_t before = target->reads;
	auto hit = m->symbolize(kOtherText + 0x101);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "other_fn");
	std::size_t confirm = target->reads - before;
	EXPECT_GT(confirm, 0u) << "read again after the stop";
	EXPECT_LE(confirm, 8u) << "its struct module's fields, not its symbols";
	before = target->reads;
	ASSERT_TRUE(m->symbolize(kOtherText + 0x101));
	EXPECT_EQ(target->reads, before) << "once a stop";
}

// A kernel built with frame pointers has no ORC fields in struct module:
// its modules are still listed, by name and text, so their addresses are
// named and their functions found (a breakpoint on one, a probe); there
// is no table to unwind through one.
TEST_F(StubModulesTest, AKernelWithoutOrcStillNamesItsModules)
{
	std::string without = btf_without_orc();
	if (without.empty())
		GTEST_SKIP() << "needs cc and pahole to build a frame-pointer kernel's struct module";
	use_btf(without);
	ASSERT_FALSE(orc.orc);
	module(kOther, "other", kOtherText, {{"other_fn", 0x100}});
	link({kOther});
	auto m = modules();
	EXPECT_EQ(m->lookup("other_fn"), kOtherText + 0x100);
	auto hit = m->symbolize(kOtherText + 0x104);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "other_fn");
	EXPECT_EQ(hit->offset, 4u);
	EXPECT_EQ(m->table_for(kOtherText + 0x104).value(), nullptr);
	std::filesystem::remove_all(std::filesystem::path(without).parent_path());
}

// --list's patterns through the stub: every listed module's functions,
// named MODULE:NAME as the local kallsyms names them; a symbol that is
// not a C name (a compiler's part, "f.cold") is no probe point.
TEST_F(StubModulesTest, EveryModulesFunctionsAreNamedWithTheirModule)
{
	module(kSpin, "vtice_spin", kSpinText, {{"vtice_spin_loop", 0}, {"vtice_spin_loop.cold", 0x40}});
	module(kOther, "other", kOtherText, {{"other_fn", 0x100}});
	link({kSpin, kOther});
	auto m = modules();
	auto names = m->function_names(every_module);
	ASSERT_TRUE(names) << names.error().message;
	EXPECT_EQ(*names, (std::vector<std::string>{"vtice_spin:vtice_spin_loop", "other:other_fn"}));
	const std::size_t before = target->reads;
	EXPECT_EQ(m->lookup("other_fn"), kOtherText + 0x100);
	EXPECT_EQ(target->reads, before) << "the symbols read for the names are kept";
}

// fn:other:* needs one module's functions: the others' symbols, seconds
// each over a serial line, are not read for it.
TEST_F(StubModulesTest, OnlyTheWantedModulesSymbolsAreReadForTheirFunctions)
{
	module(kSpin, "vtice_spin", kSpinText, {{"vtice_spin_loop", 0}});
	module(kOther, "other", kOtherText, {{"other_fn", 0x100}});
	link({kSpin, kOther});
	auto m = modules();
	auto names = m->function_names([](std::string_view module) { return module == "other"; });
	ASSERT_TRUE(names) << names.error().message;
	EXPECT_EQ(*names, std::vector<std::string>{"other:other_fn"});
	EXPECT_EQ(m->symbols_read().size(), 1u) << "vtice_spin's symbols were not read";
}

TEST_F(StubModulesTest, FunctionNamesSayWhyTheListCannotBeWalked)
{
	session->set_symbols(std::make_unique<dbg::SymbolList>(
		std::vector<dbg::SymbolList::Entry>{{kKernelText, "_stext", 'T'}}, "no modules"));
	auto names = modules()->function_names(every_module);
	ASSERT_FALSE(names);
	EXPECT_NE(names.error().message.find("have no 'modules'"), std::string::npos) << names.error().message;
}

TEST_F(StubModulesTest, AnUnreadableListFindsNoModuleAndSaysWhyOnce)
{
	auto m = modules();	// nothing at kHead at all
	auto table = m->table_for(kSpinText + 9);
	ASSERT_TRUE(table) << table.error().message;
	EXPECT_EQ(*table, nullptr);
	auto notes = m->take_notes();
	ASSERT_EQ(notes.size(), 1u);
	EXPECT_NE(notes[0].find("the module list at"), std::string::npos) << notes[0];
	const std::size_t before = target->reads;
	EXPECT_FALSE(m->symbolize(kSpinText + 0x10)) << "the same page";
	EXPECT_EQ(target->reads, before) << "not walked again for a page it was walked for";
	EXPECT_TRUE(m->take_notes().empty());
}

TEST_F(StubModulesTest, SymbolsWithoutTheListAreSaidAtEachAskWithoutReading)
{
	session->set_symbols(std::make_unique<dbg::SymbolList>(
		std::vector<dbg::SymbolList::Entry>{{kKernelText, "_stext", 'T'}}, "no modules"));
	auto m = modules();
	for (std::uint64_t at : {kSpinText + 9, kSpinText + 0x2000}) {
		auto table = m->table_for(at);
		ASSERT_FALSE(table);
		EXPECT_NE(table.error().message.find("have no 'modules'"), std::string::npos) << table.error().message;
	}
	EXPECT_FALSE(m->lookup("vtice_spin_loop"));
	EXPECT_EQ(target->reads, 0u);
}
