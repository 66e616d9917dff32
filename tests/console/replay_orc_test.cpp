// vtice replay --symbols: the KASLR slide taken from the recording's own
// functions against Debian's vmlinux, and the refusals. The slides below are
// made up by the test and applied to addresses read from the vmlinux, so the
// expected values do not come from the code under test. The unwinding itself
// is checked against stock gdb in qemu.replay (tests/qemu/replay_test.py).
#include <gtest/gtest.h>

#include "../symbols/kernel_dir.hpp"
#include "replay_orc.hpp"
#include "symbols/loader.hpp"

using namespace vtice;

namespace {

// Every kernel make kernel unpacked (Debian's 6.1 and 6.12).
std::vector<std::string> rig_vmlinuxes()
{
	std::vector<std::string> paths;
	for (const auto &dir : symbols::testing::debian_kernel_dirs())
		paths.push_back((dir / "vmlinux").string());
	return paths;
}

trace::TraceSymbol at_slide(const symbols::SymbolTable &table, const char *name, std::int64_t slide)
{
	const symbols::Symbol *symbol = table.find(name);
	EXPECT_NE(symbol, nullptr) << name;
	return {symbol ? symbol->address + static_cast<std::uint64_t>(slide) : 0, 0, name};
}

void check_slide(const std::string &vmlinux)
{
	SCOPED_TRACE(vmlinux);
	auto loaded = symbols::load_symbols(vmlinux);
	ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
	constexpr std::int64_t kSlide = 0x2a00000;
	std::vector<trace::TraceSymbol> recorded = {
		at_slide(*loaded->table, "do_sys_openat2", kSlide), at_slide(*loaded->table, "getname_flags", kSlide),
		at_slide(*loaded->table, "strncpy_from_user", kSlide),
		at_slide(*loaded->table, "__x64_sys_openat", 0x1000),  // one stray address, outvoted
		{0xffffffff81000000ull, 0, "vtice_no_such_function"}};
	auto orc = console::load_replay_orc(vmlinux, recorded);
	ASSERT_TRUE(orc.ok()) << orc.error().to_string();
	EXPECT_EQ(orc->slide, kSlide);
	EXPECT_EQ(orc->agreeing, 3u);
	// The names and the ORC table follow the slide too.
	auto hit = orc->symbolizer(recorded[0].address + 4);
	ASSERT_TRUE(hit.has_value());
	EXPECT_EQ(hit->name, "do_sys_openat2");
	EXPECT_EQ(hit->offset, 4u);
	EXPECT_TRUE(orc->unwinder->table().covers(recorded[0].address));
}

}  // namespace

TEST(ReplayOrc, TheSlideIsTheOneMostRecordedFunctionsAgreeOn)
{
	if (rig_vmlinuxes().empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	for (const std::string &path : rig_vmlinuxes())
		check_slide(path);
}

TEST(ReplayOrc, AnotherKernelsRecordingIsRefusedAsSuch)
{
	if (rig_vmlinuxes().empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	for (const std::string &path : rig_vmlinuxes()) {
		auto loaded = symbols::load_symbols(path);
		ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
		// No name in common; names in common whose addresses another build
		// moved by different amounts (a tie included).
		std::vector<std::vector<trace::TraceSymbol>> others = {
			{{0xffffffff81000000ull, 0, "vtice_no_such_function"}},
			{at_slide(*loaded->table, "do_sys_openat2", 0x1000), at_slide(*loaded->table, "getname_flags", 0x2000),
			 at_slide(*loaded->table, "strncpy_from_user", 0x3000)},
			{at_slide(*loaded->table, "do_sys_openat2", 0x1000), at_slide(*loaded->table, "getname_flags", 0x1000),
			 at_slide(*loaded->table, "strncpy_from_user", 0x3000),
			 at_slide(*loaded->table, "__x64_sys_openat", 0x4000)}};
		for (const auto &recorded : others) {
			auto orc = console::load_replay_orc(path, recorded);
			ASSERT_FALSE(orc.ok()) << path;
			EXPECT_NE(orc.error().to_string().find("not the kernel that was recorded"), std::string::npos)
				<< orc.error().to_string();
		}
	}
}

TEST(ReplayOrc, AMissingFileIsNamed)
{
	auto orc = console::load_replay_orc("/nonexistent/vmlinux", {{0xffffffff81000000ull, 0, "do_sys_openat2"}});
	ASSERT_FALSE(orc.ok());
	EXPECT_NE(orc.error().to_string().find("/nonexistent/vmlinux"), std::string::npos) << orc.error().to_string();
}
