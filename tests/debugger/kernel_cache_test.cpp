// The kernel memory cache file (debugger/kernel_cache.cpp): a round trip,
// and every way a file can be wrong is refused with a message, never
// trusted. The QEMU rig's qemu.symbol_cache checks it end to end.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

#include "kernel_cache.hpp"

using namespace vtice::dbg;

namespace {

class KernelCacheFile : public ::testing::Test {
protected:
	void SetUp() override
	{
		dir = std::filesystem::temp_directory_path() / ("vtice-cache-test-" + std::to_string(::getpid()));
		std::filesystem::create_directories(dir);
		cache.banner = "Linux version 6.1.0-56-amd64 (test) #1 SMP\n";
		cache.banner_address = 0xffffffff82161900ull;
		cache.handler = 0xffffffff81c00990ull;
		cache.regions.push_back({0xffffffff82000000ull, std::vector<std::uint8_t>(70000, 0x5a)});
		cache.regions.push_back({0xffffffff82e00000ull, {1, 2, 3, 4, 5}});
		path = cache_file_for(dir.string(), cache.banner);
	}
	void TearDown() override { std::filesystem::remove_all(dir); }

	std::vector<std::uint8_t> file_bytes()
	{
		std::ifstream in(path, std::ios::binary);
		return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
	}
	void rewrite(const std::vector<std::uint8_t> &bytes)
	{
		std::ofstream out(path, std::ios::binary | std::ios::trunc);
		out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
	}

	std::filesystem::path dir;
	std::string path;
	KernelMemoryCache cache;
};

TEST_F(KernelCacheFile, RoundTrip)
{
	ASSERT_TRUE(write_kernel_cache(path, cache));
	auto back = read_kernel_cache(path);
	ASSERT_TRUE(back) << back.error().message;
	EXPECT_EQ(back->banner, cache.banner);
	EXPECT_EQ(back->banner_address, cache.banner_address);
	EXPECT_EQ(back->handler, cache.handler);
	ASSERT_EQ(back->regions.size(), 2u);
	EXPECT_EQ(back->regions[0].bytes, cache.regions[0].bytes);
	EXPECT_EQ(back->regions[1].address, cache.regions[1].address);
	for (const auto &entry : std::filesystem::directory_iterator(dir))
		EXPECT_EQ(entry.path().string(), path) << "no temporary file left behind";
}

TEST_F(KernelCacheFile, TheNameIsTheBanners)
{
	std::string other = cache.banner;
	other[other.size() - 2] = 'X';
	EXPECT_NE(cache_file_for("d", cache.banner), cache_file_for("d", other));
	EXPECT_EQ(cache_file_for("d", cache.banner), cache_file_for("d", cache.banner));
}

TEST_F(KernelCacheFile, EveryFlippedByteIsCaught)
{
	ASSERT_TRUE(write_kernel_cache(path, cache));
	auto good = file_bytes();
	for (std::size_t at : {std::size_t(0), std::size_t(9), std::size_t(20), good.size() / 2, good.size() - 1}) {
		auto bad = good;
		bad[at] ^= 0x40;
		rewrite(bad);
		auto r = read_kernel_cache(path);
		EXPECT_FALSE(r) << "byte " << at;
	}
}

TEST_F(KernelCacheFile, TruncatedEmptyAndForeignFilesAreRefused)
{
	ASSERT_TRUE(write_kernel_cache(path, cache));
	auto good = file_bytes();
	for (std::size_t keep : {std::size_t(0), std::size_t(7), std::size_t(40), good.size() - 5}) {
		rewrite(std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(keep)));
		EXPECT_FALSE(read_kernel_cache(path)) << keep << " bytes";
	}
	rewrite(std::vector<std::uint8_t>(100, 0));
	auto r = read_kernel_cache(path);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("not a vtice kernel cache"), std::string::npos);
	EXPECT_FALSE(read_kernel_cache(dir.string())) << "a directory";
	EXPECT_FALSE(read_kernel_cache("/dev/zero")) << "a device";
	EXPECT_FALSE(read_kernel_cache((dir / "missing").string()));
}

TEST_F(KernelCacheFile, OverlayServesOnlyWholeReadsInsideARegionAtTheNewSlide)
{
	const std::int64_t delta = 0x200000;
	CachedKernelMemory overlay(cache, delta);
	auto inside = overlay.read(0xffffffff82000000ull + delta + 100, 16);
	ASSERT_TRUE(inside);
	EXPECT_EQ(*inside, std::vector<std::uint8_t>(16, 0x5a));
	EXPECT_TRUE(overlay.read(0xffffffff82000000ull + delta + 70000 - 8, 8)) << "the last bytes";
	EXPECT_FALSE(overlay.read(0xffffffff82000000ull + delta + 70000 - 8, 9)) << "one past the end";
	EXPECT_FALSE(overlay.read(0xffffffff82000000ull + 100, 16)) << "the old address";
	EXPECT_FALSE(overlay.read(0xffffffff82e00000ull + delta - 1, 2)) << "straddles the start";
}

TEST(MemoryRecorder, AdjacentReadsBecomeOneRegion)
{
	MemoryRecorder r;
	r.add(0x1000, std::vector<std::uint8_t>(16, 1));
	r.add(0x1010, std::vector<std::uint8_t>(16, 2));
	r.add(0x3000, std::vector<std::uint8_t>(4, 3));
	auto regions = r.take();
	ASSERT_EQ(regions.size(), 2u);
	EXPECT_EQ(regions[0].address, 0x1000u);
	EXPECT_EQ(regions[0].bytes.size(), 32u);
	EXPECT_EQ(regions[1].address, 0x3000u);
}

}  // namespace
