#include "free_pages.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "kernel_state.hpp"
#include "notes.hpp"
#include "symbols/bytes.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::dbg::vmcore {

namespace {

constexpr std::uint64_t kPage = 4096;
// arch/x86/include/asm/pgtable_64_types.h: vmemmap without KASLR.
constexpr std::uint64_t kDefaultVmemmap = 0xffffea0000000000ull;
// MAX_ORDER is 10 or 11; anything above 20 is a corrupt or hostile word.
constexpr std::uint64_t kMaxOrder = 20;
// struct pages read at a time: 32 KiB, a few seconds over a serial line.
constexpr std::uint64_t kPagesPerRead = 512;

Result<std::int64_t> number(std::string_view info, const char *key)
{
	std::string text = vmcoreinfo_value(info, key);
	char *end = nullptr;
	long long v = std::strtoll(text.c_str(), &end, 10);
	if (text.empty() || *end != '\0')
		return make_error(std::string("this kernel's VMCOREINFO has no ") + key +
				  " (--filter free needs it)");
	return v;
}

}  // namespace

Result<PageLayout> page_layout(Session &session, std::string_view vmcoreinfo)
{
	PageLayout l;
	auto size = number(vmcoreinfo, "SIZE(page)");
	auto mapcount = number(vmcoreinfo, "OFFSET(page._mapcount)");
	auto order = number(vmcoreinfo, "OFFSET(page.private)");
	auto mark = number(vmcoreinfo, "NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)");
	for (const auto *r : {&size, &mapcount, &order, &mark})
		if (!*r)
			return r->error();
	if (*size < 32 || *size > 256 || *mapcount < 0 || *mapcount + 4 > *size || *order < 0 || *order + 8 > *size)
		return make_error("this kernel's VMCOREINFO gives a struct page layout that cannot be right");
	l.size = static_cast<std::uint64_t>(*size);
	l.mapcount = static_cast<std::uint64_t>(*mapcount);
	l.order = static_cast<std::uint64_t>(*order);
	l.buddy_mark = *mark;
	l.vmemmap = kDefaultVmemmap;
	if (session.resolve_location("vmemmap_base")) {
		auto base = read_symbol_u64(session, "vmemmap_base");
		if (!base)
			return base.error();
		l.vmemmap = *base;
	}
	return l;
}

bool is_buddy(std::int32_t word, std::int64_t mark)
{
	auto bits = static_cast<std::uint32_t>(mark);
	// A mark with its low 24 bits clear is a type byte (PGTY_buddy << 24,
	// however the kernel printed it); else the whole word (~PG_buddy).
	if ((bits & 0xffffff) != 0)
		return static_cast<std::uint32_t>(word) == bits;
	return (static_cast<std::uint32_t>(word) >> 24) == (bits >> 24);
}

Result<std::vector<PhysicalRange>> free_blocks(Session &session, const PageLayout &layout,
					       const std::vector<PhysicalRange> &ram, Output &out)
{
	std::vector<PhysicalRange> blocks;
	std::uint64_t total = 0, done = 0;
	auto started = std::chrono::steady_clock::now();
	for (const auto &r : ram)
		total += r.size / kPage;
	for (const auto &r : ram) {
		std::uint64_t first = r.start / kPage, end = first + r.size / kPage;
		for (std::uint64_t base = first; base < end;) {
			if (interrupts::command_interrupted() || interrupts::end_signal())
				return make_error("interrupted while reading struct pages");
			std::uint64_t n = std::min(kPagesPerRead, end - base);
			auto bytes = session.read_memory(layout.vmemmap + base * layout.size,
							 static_cast<std::size_t>(n * layout.size));
			std::uint64_t next = base + n;
			for (std::uint64_t pfn = base; bytes && pfn < base + n;) {
				const std::uint8_t *page = bytes->data() + (pfn - base) * layout.size;
				if (!is_buddy(symbols::load_le<std::int32_t>(page + layout.mapcount), layout.buddy_mark)) {
					++pfn;
					continue;
				}
				std::uint64_t order = symbols::load_le<std::uint64_t>(page + layout.order);
				std::uint64_t count = order <= kMaxOrder ? 1ull << order : 1;
				std::uint64_t stop = std::min(pfn + count, end);
				if (!blocks.empty() && blocks.back().start + blocks.back().size == pfn * kPage)
					blocks.back().size += (stop - pfn) * kPage;
				else
					blocks.push_back({pfn * kPage, (stop - pfn) * kPage});
				next = std::max(next, stop);
				pfn = stop;
			}
			done += next - base;
			base = next;
			double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
			char line[128];
			std::snprintf(line, sizeof line, "vmcore: finding free pages: %llu of %llu MiB of RAM, %.0f s left",
				      static_cast<unsigned long long>(done >> 8), static_cast<unsigned long long>(total >> 8),
				      seconds * static_cast<double>(total - done) / static_cast<double>(done));
			out.progress(line);
		}
	}
	return blocks;
}

std::vector<PhysicalRange> outside(const std::vector<PhysicalRange> &holes, const PhysicalRange &keep)
{
	std::vector<PhysicalRange> out;
	std::uint64_t keep_end = keep.start + keep.size;
	for (const auto &h : holes) {
		std::uint64_t end = h.start + h.size;
		if (end <= keep.start || h.start >= keep_end) {
			out.push_back(h);
			continue;
		}
		if (h.start < keep.start)
			out.push_back({h.start, keep.start - h.start});
		if (end > keep_end)
			out.push_back({keep_end, end - keep_end});
	}
	return out;
}

std::vector<PhysicalRange> subtract(const std::vector<PhysicalRange> &ram, std::vector<PhysicalRange> holes,
				    std::size_t max_ranges)
{
	// Each hole adds at most one range: keep the largest ones that fit.
	std::size_t room = max_ranges > ram.size() ? max_ranges - ram.size() : 0;
	if (holes.size() > room) {
		std::stable_sort(holes.begin(), holes.end(),
				 [](const PhysicalRange &a, const PhysicalRange &b) { return a.size > b.size; });
		holes.resize(room);
		std::sort(holes.begin(), holes.end(),
			  [](const PhysicalRange &a, const PhysicalRange &b) { return a.start < b.start; });
	}
	std::vector<PhysicalRange> kept;
	std::size_t h = 0;
	for (const auto &r : ram) {
		std::uint64_t at = r.start, end = r.start + r.size;
		while (h < holes.size() && holes[h].start < end) {
			std::uint64_t hole_end = holes[h].start + holes[h].size;
			std::uint64_t hs = std::max(holes[h].start, at), he = std::min(hole_end, end);
			if (he > hs) {
				if (hs > at)
					kept.push_back({at, hs - at});
				at = he;
			}
			if (hole_end > end)
				break;  // it goes on into the next range
			++h;
		}
		if (at < end)
			kept.push_back({at, end - at});
	}
	return kept;
}

}  // namespace vtice::dbg::vmcore
