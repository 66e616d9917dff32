#include "kernel_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "crc32.hpp"
#include "vtice/read_input.hpp"
#include "vtice/write_output.hpp"

namespace vtice::dbg {

namespace {

// "VTICEMEM", version, banner, banner address, handler, regions, CRC-32 of
// everything before it; integers little-endian.
constexpr char kMagic[8] = {'V', 'T', 'I', 'C', 'E', 'M', 'E', 'M'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kMaxCacheFile = 64ull << 20;     // kallsyms window + ORC are < 24 MiB
constexpr std::uint32_t kMaxRegions = 4096;
constexpr std::uint32_t kMaxBanner = 4096;

void put(std::vector<std::uint8_t> &out, std::uint64_t value, int bytes)
{
	for (int i = 0; i < bytes; i++)
		out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

class Reader {
public:
	explicit Reader(const std::vector<std::uint8_t> &bytes) : bytes_(bytes) {}
	bool take(std::uint64_t &value, int bytes)
	{
		if (bytes_.size() - at_ < static_cast<std::size_t>(bytes))
			return false;
		value = 0;
		for (int i = 0; i < bytes; i++)
			value |= std::uint64_t(bytes_[at_ + i]) << (8 * i);
		at_ += bytes;
		return true;
	}
	bool take(std::size_t length, const std::uint8_t *&out)
	{
		if (bytes_.size() - at_ < length)
			return false;
		out = bytes_.data() + at_;
		at_ += length;
		return true;
	}
	std::size_t at() const { return at_; }

private:
	const std::vector<std::uint8_t> &bytes_;
	std::size_t at_ = 0;
};

std::uint64_t fnv1a(const std::string &text)
{
	std::uint64_t hash = 0xcbf29ce484222325ull;
	for (unsigned char c : text)
		hash = (hash ^ c) * 0x100000001b3ull;
	return hash;
}

// Only regular files: anything else in the cache directory is not ours.
Result<std::vector<std::uint8_t>> read_bounded(const std::string &path)
{
	std::error_code ec;
	if (!std::filesystem::is_regular_file(path, ec))
		return make_error(path + ": not a regular file");
	auto size = std::filesystem::file_size(path, ec);
	if (ec || size > kMaxCacheFile)
		return make_error(path + ": larger than a kernel cache can be");
	auto bytes = read_input(path, kMaxCacheFile);
	// The cache is ours to replace, not an input to protect.
	RunInputs::get().forget(path);
	return bytes;
}

}  // namespace

std::string default_cache_dir()
{
	if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
		return std::string(xdg) + "/vtice";
	if (const char *home = std::getenv("HOME"); home && *home)
		return std::string(home) + "/.cache/vtice";
	return {};
}

std::string cache_file_for(const std::string &dir, const std::string &banner)
{
	char name[40];
	std::snprintf(name, sizeof(name), "kernel-%016llx.mem", static_cast<unsigned long long>(fnv1a(banner)));
	return dir + "/" + name;
}

Result<KernelMemoryCache> read_kernel_cache(const std::string &path)
{
	auto bytes = read_bounded(path);
	if (!bytes)
		return bytes.error();
	auto bad = [&](const char *why) { return make_error(path + ": " + why); };
	if (bytes->size() < sizeof(kMagic) + 4 || std::memcmp(bytes->data(), kMagic, sizeof(kMagic)) != 0)
		return bad("not a vtice kernel cache");
	std::uint32_t stored = 0;
	std::memcpy(&stored, bytes->data() + bytes->size() - 4, 4);
	std::span<const std::uint8_t> body(bytes->data(), bytes->size() - 4);
	if (trace::crc32(body) != stored)
		return bad("checksum mismatch (damaged or cut short)");
	Reader r(*bytes);
	const std::uint8_t *skip = nullptr;
	std::uint64_t version = 0, banner_len = 0, count = 0;
	KernelMemoryCache cache;
	if (!r.take(sizeof(kMagic), skip) || !r.take(version, 4))
		return bad("truncated header");
	if (version != kVersion)
		return bad("written by another vtice version");
	const std::uint8_t *text = nullptr;
	if (!r.take(banner_len, 4) || banner_len > kMaxBanner || !r.take(banner_len, text) ||
	    !r.take(cache.banner_address, 8) || !r.take(cache.handler, 8) || !r.take(count, 4) || count > kMaxRegions)
		return bad("bad header");
	cache.banner.assign(reinterpret_cast<const char *>(text), banner_len);
	for (std::uint64_t i = 0; i < count; i++) {
		MemoryRegion region;
		std::uint64_t length = 0;
		const std::uint8_t *data = nullptr;
		if (!r.take(region.address, 8) || !r.take(length, 4) || !r.take(length, data))
			return bad("region runs past the end");
		region.bytes.assign(data, data + length);
		cache.regions.push_back(std::move(region));
	}
	if (r.at() != body.size())
		return bad("trailing bytes");
	return cache;
}

Result<void> write_kernel_cache(const std::string &path, const KernelMemoryCache &cache)
{
	std::vector<std::uint8_t> out(kMagic, kMagic + sizeof(kMagic));
	put(out, kVersion, 4);
	put(out, cache.banner.size(), 4);
	out.insert(out.end(), cache.banner.begin(), cache.banner.end());
	put(out, cache.banner_address, 8);
	put(out, cache.handler, 8);
	put(out, cache.regions.size(), 4);
	for (const auto &region : cache.regions) {
		put(out, region.address, 8);
		put(out, region.bytes.size(), 4);
		out.insert(out.end(), region.bytes.begin(), region.bytes.end());
	}
	put(out, trace::crc32(out), 4);
	std::error_code ec;
	std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
	return write_output_file(path, out);
}

std::optional<std::vector<std::uint8_t>> CachedKernelMemory::read(std::uint64_t address, std::size_t length) const
{
	std::uint64_t then = address - static_cast<std::uint64_t>(delta_);
	for (const auto &region : cache_.regions) {
		if (then < region.address || then - region.address > region.bytes.size() ||
		    length > region.bytes.size() - (then - region.address))
			continue;
		auto from = region.bytes.begin() + static_cast<std::ptrdiff_t>(then - region.address);
		return std::vector<std::uint8_t>(from, from + static_cast<std::ptrdiff_t>(length));
	}
	return std::nullopt;
}

void MemoryRecorder::add(std::uint64_t address, const std::vector<std::uint8_t> &bytes)
{
	if (!regions_.empty()) {
		MemoryRegion &last = regions_.back();
		if (last.address + last.bytes.size() == address) {
			last.bytes.insert(last.bytes.end(), bytes.begin(), bytes.end());
			return;
		}
	}
	regions_.push_back({address, bytes});
}

}  // namespace vtice::dbg
