#include "hex.hpp"
#include "kernel_setup.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kernel_cache.hpp"
#include "orc_unwinder.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::dbg {

namespace {

constexpr std::uint64_t k2M = 2ull << 20;
// __START_KERNEL_map + CONFIG_PHYSICAL_START (0x1000000, the x86-64 default
// and Debian's): where _text is linked.
constexpr std::uint64_t kLinkTimeText = 0xffffffff81000000ull;
// How far past the entry text the kallsyms tables may sit (they are in
// .rodata, which follows .text at the next 2 MiB boundary).
constexpr std::uint64_t kWindowStep = 2ull << 20, kWindowMax = 16ull << 20;
constexpr std::uint64_t kFirstStep = 64ull << 10, kLargestStep = 1ull << 20;

// A window of rodata in reads of 64 KiB and up, saying how far, how fast and
// how long at worst (up to kWindowMax) after each: over a serial line this
// is minutes. A read that came back within a tenth of a second doubles the
// next (QEMU's socket keeps many reads in flight; a serial line stays at
// 64 KiB, so its progress still moves every few seconds).
Result<std::vector<std::uint8_t>> read_with_progress(Session &session, std::uint64_t address, std::uint64_t length,
						     std::uint64_t done_before,
						     std::chrono::steady_clock::time_point start, Output &log)
{
	std::vector<std::uint8_t> out;
	std::uint64_t step = kFirstStep;
	while (out.size() < length) {
		auto asked = std::chrono::steady_clock::now();
		auto chunk = session.read_memory(address + out.size(), std::min(step, length - out.size()));
		if (!chunk)
			return chunk.error();
		out.insert(out.end(), chunk->begin(), chunk->end());
		if (std::chrono::steady_clock::now() - asked < std::chrono::milliseconds(100))
			step = std::min(step * 2, kLargestStep);
		double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		std::uint64_t done = done_before + out.size();
		double rate = seconds > 0 ? done / seconds : 0;
		char line[160];
		std::snprintf(line, sizeof(line),
			      "kallsyms from guest memory: %.1f of at most %llu MiB, %.1f KiB/s, at most %.0f s left",
			      done / 1048576.0, static_cast<unsigned long long>(kWindowMax >> 20), rate / 1024,
			      rate > 0 ? (kWindowMax - done) / rate : 0.0);
		log.progress(line);
	}
	return out;
}

// The running kernel's banner at the image's linux_banner, moved by the
// slide the IDT gives; empty when it cannot be read.
std::string guest_banner(Session &session, const SymbolList &image, std::optional<std::uint64_t> handler)
{
	auto banner = image.lookup("linux_banner");
	auto recorded = image.lookup("asm_exc_divide_error");
	if (!banner || !recorded || !handler)
		return {};
	auto bytes = session.read_memory(*banner + (*handler - *recorded), image.image_banner().size() + 1);
	if (!bytes)
		return {};
	std::string text(bytes->begin(), bytes->end());
	return text.substr(0, text.find('\0'));
}

std::string first_line(const std::string &text)
{
	return text.substr(0, text.find('\n'));
}

// The first candidate whose banner the running kernel shows.
Result<std::unique_ptr<SymbolList>> find_matching_image(Session &session, const KernelSetupOptions &options,
							 std::optional<std::uint64_t> handler, Output &log,
							 std::string &found)
{
	for (const std::string &path : options.image_candidates) {
		log.progress("symbols: trying " + path);
		auto image = default_symbol_file_loader()(path);
		if (!image || (*image)->image_banner().empty())
			continue;
		if (guest_banner(session, **image, handler) == (*image)->image_banner()) {
			found = path;
			return image;
		}
	}
	return make_error("no installed image matches the running kernel's banner");
}

Result<std::unique_ptr<SymbolList>> load_symbols(Session &session, const KernelSetupOptions &options,
						 std::optional<std::uint64_t> handler, Output &log, std::string &file)
{
	if (!options.symbols_file.empty()) {
		file = options.symbols_file;
		if (options.symbols_loaded)
			return options.symbols_loaded->slid(0);
		return default_symbol_file_loader()(options.symbols_file);
	}
	if (!options.image_candidates.empty()) {
		if (auto image = find_matching_image(session, options, handler, log, file))
			return image;
	}
	auto recover = default_memory_symbol_recovery();
	if (!options.recover_symbols || !recover)
		return make_error("no symbol file given and kallsyms recovery from memory is not built in");
	if (!handler)
		return make_error("cannot place the kallsyms window without the IDT");
	// Grow the window until the tables decode completely.
	std::uint64_t base = (*handler + k2M - 1) & ~(k2M - 1);
	std::vector<std::uint8_t> window;
	Error last = make_error("no window read");
	auto start = std::chrono::steady_clock::now();
	while (window.size() < kWindowMax) {
		auto chunk = read_with_progress(session, base + window.size(), kWindowStep, window.size(), start, log);
		if (!chunk)
			return make_error("reading kernel rodata at " + hex(base + window.size()) + ": " + chunk.error().message);
		window.insert(window.end(), chunk->begin(), chunk->end());
		auto table = recover(window, base);
		if (table)
			return table;
		last = table.error();
	}
	return make_error("kallsyms not found in " + std::to_string(kWindowMax >> 20) + " MiB after " + hex(base) +
			  ": " + last.message);
}

// From the symbols' vmlinux when there is one (a serial line would take
// minutes to carry the tables), else from guest memory.
Result<std::unique_ptr<OrcUnwinder>> load_orc_from_guest_or_file(Session &session, const std::string &file,
								 std::string &where)
{
	if (!file.empty()) {
		if (auto from_file = load_orc_from_image(session, file)) {
			where = file;
			return from_file;
		}
	}
	return load_orc_from_guest(session);
}

std::string load_orc(Session &session, const std::string &symbols_file)
{
	std::string where = "guest memory";
	auto unwinder = load_orc_from_guest_or_file(session, symbols_file, where);
	if (!unwinder)
		return "no ORC: " + unwinder.error().message;
	std::string summary = std::to_string((*unwinder)->table().size()) + " ORC entries from " + where + " (" +
			      ((*unwinder)->table().new_format() ? "6.3+" : "up to 6.2") + " layout)";
	session.set_unwinder(std::move(*unwinder));
	return summary;
}

// " (banner matches)", or a loud warning naming both banners: symbols from
// another build would put every breakpoint and backtrace in the wrong place.
// A target that shows no banner (a replay, whose memory is only what its
// recording read; no IDT to find the slide by) is said to be unchecked, not
// to differ.
std::string banner_verdict(Session &session, const SymbolList &table, std::optional<std::uint64_t> handler,
			   Output &log)
{
	std::string guest = guest_banner(session, table, handler);
	if (guest == table.image_banner())
		return " (banner matches the running kernel)";
	if (guest.empty()) {
		log.print("note: the target does not show the kernel's banner at linux_banner: the symbols are not "
			  "checked against it\n");
		return " (banner not compared: the target does not show it)";
	}
	log.print("warning: the symbols are not the running kernel's: the image says '%s', the kernel says '%s'\n",
		  first_line(table.image_banner()).c_str(), first_line(guest).c_str());
	return " (banner does NOT match the running kernel)";
}

// A cache whose banner the running kernel shows at the same place, moved
// by the slide between then and now: a few hundred bytes per candidate.
std::optional<std::pair<KernelMemoryCache, std::string>> find_cached_kernel(Session &session, const std::string &dir,
									      std::uint64_t handler)
{
	std::error_code ec;
	std::size_t tried = 0;
	for (const auto &entry : std::filesystem::directory_iterator(dir, ec)) {
		std::string name = entry.path().filename().string();
		if (name.rfind("kernel-", 0) != 0 || entry.path().extension() != ".mem" || ++tried > 32)
			continue;
		auto cache = read_kernel_cache(entry.path().string());
		if (!cache)
			continue;  // damaged or another version: rewritten after this session
		auto shown = session.read_memory(cache->banner_address + (handler - cache->handler), cache->banner.size());
		if (shown && std::string(shown->begin(), shown->end()) == cache->banner)
			return std::make_pair(std::move(*cache), entry.path().string());
	}
	return std::nullopt;
}

// What this session read of the kernel, saved under its banner.
std::string save_kernel_cache(Session &session, const std::string &dir, std::uint64_t handler,
			      std::vector<MemoryRegion> regions)
{
	auto at = session.symbols() ? session.symbols()->lookup("linux_banner") : std::nullopt;
	if (!at)
		return "not cached: no linux_banner in the symbols";
	auto bytes = session.read_memory(*at, kBannerMax);
	if (!bytes)
		return "not cached: cannot read the banner: " + bytes.error().message;
	KernelMemoryCache cache;
	cache.banner.assign(bytes->begin(), bytes->end());
	cache.banner.resize(cache.banner.find('\0') == std::string::npos ? 0 : cache.banner.find('\0'));
	if (cache.banner.empty())
		return "not cached: the banner is not a string";
	cache.banner_address = *at;
	cache.handler = handler;
	cache.regions = std::move(regions);
	std::string path = cache_file_for(dir, cache.banner);
	if (auto r = write_kernel_cache(path, cache); !r)
		return "not cached: " + r.error().message;
	return "saved " + path;
}

}  // namespace

std::vector<std::string> installed_kernel_images(std::size_t max)
{
	namespace fs = std::filesystem;
	std::vector<std::pair<fs::file_time_type, std::string>> found;
	for (const char *dir : {"/boot", "/usr/lib/debug/boot"}) {
		std::error_code ec;
		for (const auto &entry : fs::directory_iterator(dir, ec)) {
			std::string name = entry.path().filename().string();
			if ((name.rfind("vmlinuz-", 0) == 0 || name.rfind("vmlinux-", 0) == 0) && entry.is_regular_file(ec))
				found.emplace_back(entry.last_write_time(ec), entry.path().string());
		}
	}
	std::sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
	std::vector<std::string> out;
	for (std::size_t i = 0; i < found.size() && i < max; i++)
		out.push_back(found[i].second);
	return out;
}

Result<std::uint64_t> read_idt_handler(Session &session, unsigned vector)
{
	// SDM Vol. 3A §6.14.1: a 64-bit gate is 16 bytes; offset bits 15:0 at
	// byte 0, 31:16 at byte 6, 63:32 at byte 8; P is bit 7 of byte 5.
	auto gate = session.read_memory(kCpuEntryAreaIdt + 16ull * vector, 16);
	if (!gate)
		return make_error("cannot read the IDT at " + hex(kCpuEntryAreaIdt) + ": " + gate.error().message);
	const std::uint8_t *g = gate->data();
	if (!(g[5] & 0x80))
		return make_error("IDT gate " + std::to_string(vector) + " is not present");
	std::uint16_t low, mid;
	std::uint32_t high;
	std::memcpy(&low, g, 2);
	std::memcpy(&mid, g + 6, 2);
	std::memcpy(&high, g + 8, 4);
	return (std::uint64_t(high) << 32) | (std::uint64_t(mid) << 16) | low;
}

Result<KernelInfo> setup_kernel(Session &session, const KernelSetupOptions &options, Output &log)
{
	KernelInfo info;
	if (auto handler = read_idt_handler(session, 0))
		info.divide_error_handler = *handler;
	else if (session.is_recording()) {
		if (options.symbols_file.empty())	// else they are given
			log.print("note: a recording holds no IDT or banner (only the memory its steps read): give "
				  "the recorded kernel's symbols with --symbols VMLINUX\n");
	} else
		log.print("warning: %s\n", handler.error().message.c_str());
	// A cache of an earlier session with this kernel serves the reads below;
	// without one, they are recorded to make one.
	MemoryRecorder recorder;
	bool record = false;
	if (options.symbols_file.empty() && !options.cache_dir.empty() && info.divide_error_handler) {
		if (auto hit = find_cached_kernel(session, options.cache_dir, *info.divide_error_handler)) {
			auto delta = static_cast<std::int64_t>(*info.divide_error_handler - hit->first.handler);
			session.set_memory_overlay(std::make_shared<CachedKernelMemory>(std::move(hit->first), delta));
			info.cache = "read " + hit->second;
		} else {
			record = true;
			session.set_memory_tap([&recorder](std::uint64_t a, const std::vector<std::uint8_t> &b) {
				recorder.add(a, b);
			});
		}
	}
	// Ctrl-C during setup skips what is left of it; the session goes on.
	auto symbols = interrupts::command_interrupted()
			       ? Result<std::unique_ptr<SymbolList>>(make_error("skipped: interrupted (Ctrl-C)"))
			       : load_symbols(session, options, info.divide_error_handler, log, info.symbols_file);
	if (!symbols) {
		info.symbols = "no symbols: " + symbols.error().message;
	} else {
		std::unique_ptr<SymbolList> table = std::move(*symbols);
		// The slide is whatever moves the recorded handler to where the IDT
		// says it is: 0 for run-time tables, the KASLR offset for an image.
		auto recorded = table->lookup("asm_exc_divide_error");
		if (info.divide_error_handler && recorded) {
			info.slide = static_cast<std::int64_t>(*info.divide_error_handler - *recorded);
			if (*info.slide % static_cast<std::int64_t>(k2M) != 0)
				log.print("warning: KASLR slide %s is not 2 MiB aligned; symbols may not match this kernel\n",
					  hex(static_cast<std::uint64_t>(*info.slide)).c_str());
			if (*info.slide != 0)
				table = table->slid(*info.slide);
		}
		// Tables from memory or /proc/kallsyms already hold run-time
		// addresses (relocated by 0 above); the kernel's own slide is where
		// _text is against its link address.
		if (auto text = table->lookup("_text"); text && info.slide) {
			info.slide = static_cast<std::int64_t>(*text - kLinkTimeText);
			session.set_kaslr_slide(*info.slide);
		}
		info.symbols = std::to_string(table->size()) + " symbols from " + table->origin();
		if (!table->image_banner().empty())
			info.symbols += banner_verdict(session, *table, info.divide_error_handler, log);
		session.set_symbols(std::move(table));
	}
	if (options.load_orc)
		info.orc = interrupts::command_interrupted() ? "no ORC: skipped: interrupted (Ctrl-C)"
							     : load_orc(session, info.symbols_file);
	if (record) {
		session.set_memory_tap({});
		// Only what came from guest memory is worth keeping; an image is on disk.
		if (info.symbols_file.empty() && session.symbols())
			info.cache = save_kernel_cache(session, options.cache_dir, *info.divide_error_handler, recorder.take());
	}
	// The cached window also holds the end of .text, which the kernel
	// patches at run time (static keys, ftrace): after setup every read
	// goes to the machine again.
	session.set_memory_overlay(nullptr);
	return info;
}

}  // namespace vtice::dbg
