// The session's names for addresses with the kernel's loaded modules beside
// its symbols (Session::set_modules): an address the symbols do not name is
// asked of the modules, one they name never is.
#include <gtest/gtest.h>

#include "scripted_target.hpp"
#include "session.hpp"

using namespace vtice::dbg;

namespace {

constexpr std::uint64_t kFn = 0xffffffff81001000ull, kModuleFn = 0xffffffffc0a00000ull;

struct NamedModule final : ModuleSource {
	std::vector<std::uint64_t> asked;

	vtice::Result<const vtice::symbols::OrcTable *> table_for(std::uint64_t) override { return nullptr; }
	std::optional<vtice::SymbolHit> symbolize(std::uint64_t address) override
	{
		asked.push_back(address);
		if (address < kModuleFn || address >= kModuleFn + 0x40)
			return std::nullopt;
		return vtice::SymbolHit{"vtice_spin_loop", kModuleFn, address - kModuleFn};
	}
	std::optional<std::uint64_t> lookup(std::string_view name) override
	{
		looked_for.emplace_back(name);
		return name == "vtice_spin_loop" ? std::optional<std::uint64_t>(kModuleFn) : std::nullopt;
	}
	std::vector<std::string> looked_for;
};

}  // namespace

TEST(SessionModules, AnAddressTheSymbolsDoNotNameIsNamedByTheModules)
{
	Session session(std::make_unique<fake::ScriptedTarget>());
	std::vector<SymbolList::Entry> entries = {{kFn, "do_sys_openat2", 'T'}, {kFn + 0x100, "_etext", 'T'}};
	session.set_symbols(std::make_unique<SymbolList>(entries, "test"));
	EXPECT_FALSE(session.symbolizer()(kModuleFn + 9)) << "no modules: nothing names it";
	auto modules = std::make_shared<NamedModule>();
	session.set_modules(modules);
	vtice::Symbolizer name = session.symbolizer();
	auto hit = name(kModuleFn + 9);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "vtice_spin_loop");
	EXPECT_EQ(hit->offset, 9u);
	EXPECT_EQ(vtice::format_address(kFn + 0x10, name), "do_sys_openat2+0x10");
	EXPECT_EQ(modules->asked, std::vector<std::uint64_t>{kModuleFn + 9}) << "the kernel's own address is not asked";
	EXPECT_EQ(vtice::format_address(kModuleFn + 0x80, name), "0xffffffffc0a00080");
}

TEST(SessionModules, ANameTheSymbolsLackIsLookedUpInTheModules)
{
	Session session(std::make_unique<fake::ScriptedTarget>());
	std::vector<SymbolList::Entry> entries = {{kFn, "do_sys_openat2", 'T'}, {kFn + 0x100, "_etext", 'T'}};
	session.set_symbols(std::make_unique<SymbolList>(entries, "test"));
	auto modules = std::make_shared<NamedModule>();
	session.set_modules(modules);
	auto at = session.resolve_location("vtice_spin_loop+0x10");
	ASSERT_TRUE(at) << at.error().message;
	EXPECT_EQ(*at, kModuleFn + 0x10);
	at = session.resolve_location("do_sys_openat2");
	ASSERT_TRUE(at);
	EXPECT_EQ(*at, kFn);
	EXPECT_EQ(modules->looked_for, std::vector<std::string>{"vtice_spin_loop"}) << "the kernel's own is not asked";
	EXPECT_FALSE(session.resolve_location("no_such_function"));
}

// probe's resolution through the stub: the kernel's table with the modules' symbols.
TEST(SessionModules, ATableWithTheModulesSymbolsFindsAndBoundsTheirFunctions)
{
	SymbolList kernel({{kFn, "do_sys_openat2", 'T'}, {kFn + 0x100, "_etext", 'T'}}, "vmlinux");
	auto both = kernel.with({{kModuleFn + 0x40, "vtice_spin_thread", 't'}, {kModuleFn, "vtice_spin_loop", 't'}},
				"vmlinux and the modules'");
	EXPECT_EQ(both->lookup("vtice_spin_loop"), kModuleFn);
	EXPECT_TRUE(both->text_at(kModuleFn + 4));
	EXPECT_EQ(both->next_start(kModuleFn), kModuleFn + 0x40) << "the function ends where the next begins";
	EXPECT_EQ(both->lookup("do_sys_openat2"), kFn);
	EXPECT_EQ(both->origin(), "vmlinux and the modules'");
	EXPECT_FALSE(kernel.lookup("vtice_spin_loop")) << "the kernel's own table is left as it was";
}
