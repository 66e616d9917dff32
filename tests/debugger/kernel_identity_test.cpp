// Which image is the running kernel: the banner an image holds at
// linux_banner against the bytes the running kernel shows there (moved by
// the KASLR slide the IDT gives), for --symbols and for the images found in
// /boot. The guest is a memory-only target built from the Debian vmlinux;
// the expected banner is found in the file by a plain byte search, not by
// the code under test.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "kernel_setup.hpp"
#include "memory_target.hpp"
#include "orc_unwinder.hpp"
#include "session.hpp"

using namespace vtice::dbg;

namespace {

constexpr std::int64_t kSlide = 0x1e00000;  // a 2 MiB-aligned KASLR slide

std::string debian_vmlinux()
{
	if (std::filesystem::is_directory(VTICE_KERNEL_DIR))
		for (const auto &entry : std::filesystem::directory_iterator(VTICE_KERNEL_DIR))
			if (std::filesystem::exists(entry.path() / "vmlinux"))
				return (entry.path() / "vmlinux").string();
	return {};
}

// The file's "Linux version RELEASE (...) #N ..." string: init/version.c's
// linux_banner, the one with the build number after '#' (the file holds
// other strings that start the same way, without it).
std::string banner_in_file(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	for (auto at = bytes.find("Linux version "); at != std::string::npos;
	     at = bytes.find("Linux version ", at + 1)) {
		std::string text = bytes.substr(at, bytes.find('\0', at) - at);
		auto hash = text.find(" #");
		if (hash != std::string::npos && hash + 2 < text.size() && std::isdigit(text[hash + 2]))
			return text;
	}
	return {};
}

std::vector<std::uint8_t> idt_gate(std::uint64_t handler)
{
	std::vector<std::uint8_t> g(16, 0);
	std::uint16_t low = handler & 0xffff, mid = (handler >> 16) & 0xffff;
	std::uint32_t high = handler >> 32;
	std::memcpy(&g[0], &low, 2);
	g[5] = 0x8e;  // present, 64-bit interrupt gate
	std::memcpy(&g[6], &mid, 2);
	std::memcpy(&g[8], &high, 4);
	return g;
}

class KernelIdentity : public ::testing::Test {
protected:
	void SetUp() override
	{
		vmlinux = debian_vmlinux();
		if (vmlinux.empty())
			GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
		banner = banner_in_file(vmlinux);
		ASSERT_FALSE(banner.empty()) << "no 'Linux version' string in " << vmlinux;
		auto image = default_symbol_file_loader()(vmlinux);
		ASSERT_TRUE(image) << image.error().message;
		divide_error = *(*image)->lookup("asm_exc_divide_error");
		linux_banner = *(*image)->lookup("linux_banner");
	}

	// A guest running this kernel at kSlide, showing shown at linux_banner.
	std::unique_ptr<Session> guest(const std::string &shown)
	{
		auto target = std::make_unique<test::MemoryTarget>();
		target->map(kCpuEntryAreaIdt, idt_gate(divide_error + kSlide));
		target->map(linux_banner + kSlide, std::vector<std::uint8_t>(shown.begin(), shown.end()));
		target->map(linux_banner + kSlide + shown.size(), std::vector<std::uint8_t>(kBannerMax, 0));
		return std::make_unique<Session>(std::move(target));
	}

	// setup_kernel with --symbols the Debian vmlinux, on a guest showing shown.
	vtice::Result<KernelInfo> attach_with_image(const std::string &shown)
	{
		session = guest(shown);
		KernelSetupOptions options;
		options.symbols_file = vmlinux;
		options.load_orc = false;
		return setup_kernel(*session, options, log);
	}

	std::string vmlinux, banner;
	std::uint64_t divide_error = 0, linux_banner = 0;
	std::unique_ptr<Session> session;
	StringOutput log;
};

TEST_F(KernelIdentity, TheImageCarriesTheBannerTheFileHolds)
{
	auto image = default_symbol_file_loader()(vmlinux);
	ASSERT_TRUE(image) << image.error().message;
	EXPECT_EQ((*image)->image_banner(), banner);
}

TEST_F(KernelIdentity, SymbolsFileWithTheRunningKernelsBanner)
{
	auto info = attach_with_image(banner);
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_NE(info->symbols.find("banner matches"), std::string::npos) << info->symbols;
	EXPECT_EQ(log.text().find("warning"), std::string::npos) << log.text();
	EXPECT_EQ(info->slide, kSlide);
}

TEST_F(KernelIdentity, SymbolsFileOfAnotherBuildIsALoudWarning)
{
	std::string other = banner;
	other.replace(other.find("Linux version ") + 14, 1, "9");
	auto info = attach_with_image(other);
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_NE(info->symbols.find("does NOT match"), std::string::npos) << info->symbols;
	EXPECT_NE(log.text().find("warning: the symbols are not the running kernel's"), std::string::npos);
	EXPECT_NE(log.text().find(other.substr(0, 30)), std::string::npos) << "names the kernel's banner";
}

// A replay's memory is what its recording read: linux_banner is not in it.
// The symbols cannot be compared; that is said, not that they differ.
TEST_F(KernelIdentity, ATargetThatShowsNoBannerIsNotCalledAnotherBuild)
{
	auto target = std::make_unique<test::MemoryTarget>();
	target->map(kCpuEntryAreaIdt, idt_gate(divide_error + kSlide));
	session = std::make_unique<Session>(std::move(target));
	KernelSetupOptions options;
	options.symbols_file = vmlinux;
	options.load_orc = false;
	auto info = setup_kernel(*session, options, log);
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_NE(info->symbols.find("banner not compared"), std::string::npos) << info->symbols;
	EXPECT_EQ(info->symbols.find("does NOT match"), std::string::npos) << info->symbols;
	EXPECT_EQ(log.text().find("warning"), std::string::npos) << log.text();
	EXPECT_NE(log.text().find("not checked"), std::string::npos) << log.text();
}

TEST_F(KernelIdentity, InstalledImagesAreTriedUntilOneMatches)
{
	auto session = guest(banner);
	KernelSetupOptions options;
	options.image_candidates = {"/nonexistent/vmlinuz-0", "/dev/null", vmlinux};
	options.load_orc = false;
	options.recover_symbols = false;  // a miss must not fall back to memory here
	auto info = setup_kernel(*session, options, log);
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_EQ(info->symbols_file, vmlinux);
	EXPECT_NE(info->symbols.find("banner matches"), std::string::npos) << info->symbols;
}

TEST_F(KernelIdentity, NoInstalledImageMatches)
{
	auto session = guest("Linux version 0.0.1 (nobody) #1\n");
	KernelSetupOptions options;
	options.image_candidates = {vmlinux};
	options.load_orc = false;
	options.recover_symbols = false;
	auto info = setup_kernel(*session, options, log);
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_TRUE(info->symbols_file.empty());
	EXPECT_EQ(info->symbols.rfind("no symbols", 0), 0u) << info->symbols;
}

// The image's ORC moved by the slide describes the running kernel's code:
// the entry for a function at its run-time address is the image's entry at
// the link-time one.
TEST_F(KernelIdentity, OrcFromTheImageAtASlide)
{
	auto session = guest(banner);
	KernelSetupOptions options;
	options.symbols_file = vmlinux;
	auto info = setup_kernel(*session, options, log);
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_NE(info->orc.find(vmlinux), std::string::npos) << info->orc;
	auto *orc = dynamic_cast<const OrcUnwinder *>(session->unwinder());
	ASSERT_NE(orc, nullptr);
	auto image = default_symbol_file_loader()(vmlinux);
	std::uint64_t fn = *(*image)->lookup("do_sys_openat2");
	auto at_run_time = orc->table().find(fn + kSlide + 5);
	ASSERT_TRUE(at_run_time);
	EXPECT_EQ(at_run_time->ip, fn + kSlide) << "the entry starts at the function's run-time address";
}

}  // namespace
