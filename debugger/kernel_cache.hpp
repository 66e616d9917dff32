// Guest memory an earlier session read from this very kernel (the kallsyms
// tables and ORC), kept on disk keyed by the kernel's banner, so a second
// attach over a slow line reads a few hundred bytes instead of megabytes.
// The file is checked whole (magic, version, bounds, CRC-32) before use and
// written to a temporary name, then renamed into place.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vtice/result.hpp"
#include "session.hpp"

namespace vtice::dbg {

struct MemoryRegion {
	std::uint64_t address = 0;
	std::vector<std::uint8_t> bytes;
};

struct KernelMemoryCache {
	std::string banner;                // linux_banner, as the kernel showed it
	std::uint64_t banner_address = 0;  // where, in the saving session
	std::uint64_t handler = 0;         // IDT vector 0's handler then (gives the slide)
	std::vector<MemoryRegion> regions;
};

// $XDG_CACHE_HOME/vtice, else $HOME/.cache/vtice; empty when neither is set.
std::string default_cache_dir();
std::string cache_file_for(const std::string &dir, const std::string &banner);

Result<KernelMemoryCache> read_kernel_cache(const std::string &path);
Result<void> write_kernel_cache(const std::string &path, const KernelMemoryCache &cache);

// Serves reads inside the cached regions, moved by the slide between the
// saving session and this one (handler now - handler then).
class CachedKernelMemory final : public MemoryOverlay {
public:
	CachedKernelMemory(KernelMemoryCache cache, std::int64_t delta) : cache_(std::move(cache)), delta_(delta) {}
	std::optional<std::vector<std::uint8_t>> read(std::uint64_t address, std::size_t length) const override;

private:
	KernelMemoryCache cache_;
	std::int64_t delta_;
};

// Collects the reads the target answered into contiguous regions.
class MemoryRecorder {
public:
	void add(std::uint64_t address, const std::vector<std::uint8_t> &bytes);
	std::vector<MemoryRegion> take() { return std::move(regions_); }

private:
	std::vector<MemoryRegion> regions_;
};

}  // namespace vtice::dbg
