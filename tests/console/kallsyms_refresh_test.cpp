// KallsymsRefresh (console/kallsyms_refresh.hpp): kallsyms is read again
// when a module's name comes or goes in the module list (/proc/modules'
// format: name, size, use count, users, state, address), looked at no more
// than once a second; a use count that changes is not a new module.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "kallsyms_refresh.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

constexpr std::uint64_t kSecond = 1000000000;

const char *kImage = "ffffffff81000000 T _stext\nffffffff81a00000 T entry_SYSCALL_64\n";
const char *kSpinModule = "ffffffffc0001000 t vtice_spin_loop\t[vtice_spin]\n";

class KallsymsRefreshTest : public ::testing::Test {
protected:
	// ctest runs each test as its own process, side by side: one pair of
	// files per test.
	std::string kallsyms = scratch("kallsyms"), modules = scratch("modules");

	static std::string scratch(const std::string &what)
	{
		return ::testing::TempDir() + "/refresh-" +
		       ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + what;
	}

	void SetUp() override
	{
		write(kallsyms, kImage);
		write(modules, "ext4 1003520 1 - Live 0xffffffffc0100000\n");
	}

	void TearDown() override
	{
		std::remove(kallsyms.c_str());
		std::remove(modules.c_str());
	}

	static void write(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

	// Polls (a second apart from `from` on) until the reread is in, for up
	// to max_ms of wall time (a reread of these small files takes well
	// under a millisecond).
	static std::unique_ptr<dbg::SymbolList> wait_for_reread(KallsymsRefresh &r, std::uint64_t from,
								int max_ms = 5000)
	{
		for (int i = 0; i < max_ms; i++) {
			if (auto fresh = r.poll(from + static_cast<std::uint64_t>(i) * kSecond))
				return fresh;
			std::this_thread::sleep_for(std::chrono::milliseconds(1));
		}
		return nullptr;
	}
};

TEST_F(KallsymsRefreshTest, AModuleLoadedMidRunIsNamedAfterTheReread)
{
	KallsymsRefresh r(kallsyms, modules);
	EXPECT_EQ(r.poll(kSecond), nullptr) << "the module list has not changed";
	write(kallsyms, std::string(kImage) + kSpinModule);
	write(modules, "vtice_spin 16384 0 - Live 0xffffffffc0001000 (OE)\n"
		       "ext4 1003520 1 - Live 0xffffffffc0100000\n");
	EXPECT_EQ(r.poll(kSecond + kSecond / 2), nullptr) << "looked at once a second, not at every poll";
	auto fresh = wait_for_reread(r, 2 * kSecond);
	ASSERT_NE(fresh, nullptr);
	EXPECT_EQ(fresh->lookup("vtice_spin_loop").value_or(0), 0xffffffffc0001000ull);
	EXPECT_EQ(r.poll(100 * kSecond), nullptr) << "one reread per change";
}

TEST_F(KallsymsRefreshTest, AUseCountThatChangesIsNoNewModule)
{
	KallsymsRefresh r(kallsyms, modules);
	write(modules, "ext4 1003520 7 - Live 0xffffffffc0100000\n");
	write(kallsyms, std::string(kImage) + kSpinModule);
	EXPECT_EQ(wait_for_reread(r, kSecond, 300), nullptr);
}

TEST_F(KallsymsRefreshTest, AModuleThatGoesIsAChangeToo)
{
	KallsymsRefresh r(kallsyms, modules);
	write(modules, "");
	EXPECT_NE(wait_for_reread(r, kSecond), nullptr);
}

TEST_F(KallsymsRefreshTest, AFailedRereadKeepsTheOldNames)
{
	KallsymsRefresh r(kallsyms, modules);
	write(kallsyms, "0000000000000000 T entry_SYSCALL_64\n");	// kptr_restrict's zeros
	write(modules, "vtice_spin 16384 0 - Live 0xffffffffc0001000 (OE)\n");
	EXPECT_EQ(wait_for_reread(r, kSecond, 300), nullptr) << "null: the caller keeps the symbols it has";
}

}  // namespace
