// Free pages as the kernel's buddy allocator marks them in its own struct
// page array, what makedumpfile's -d 16 leaves out of a dump. The layout
// (SIZE(page), OFFSET(page._mapcount), OFFSET(page.private)) and the mark
// (NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)) come from the kernel's VMCOREINFO,
// which it writes for exactly this use; nothing is guessed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "../output.hpp"
#include "../session.hpp"
#include "kernel_ram.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg::vmcore {

struct PageLayout {
	std::uint64_t vmemmap = 0;     // struct page of pfn 0 (vmemmap_base)
	std::uint64_t size = 0;        // SIZE(page)
	std::uint64_t mapcount = 0;    // OFFSET(page._mapcount): page_type shares it
	std::uint64_t order = 0;       // OFFSET(page.private): a free block's order
	std::int64_t buddy_mark = 0;   // NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)
};

Result<PageLayout> page_layout(Session &session, std::string_view vmcoreinfo);

// Whether a page_type/_mapcount word marks the first page of a free block:
// before 6.12 the word equals the mark (~PG_buddy, e.g. -129); since, the
// type is the word's top byte (include/linux/page-flags.h: PGTY_buddy 0xf0,
// page_type >> 24) and the mark is PGTY_buddy << 24.
bool is_buddy(std::int32_t word, std::int64_t mark);

// The free blocks inside `ram`, in order. Reads the struct pages in chunks;
// a chunk that cannot be read counts as not free.
Result<std::vector<PhysicalRange>> free_blocks(Session &session, const PageLayout &layout,
					       const std::vector<PhysicalRange> &ram, Output &out);

// `holes` without what lies in `keep` (the kernel image: freed __init pages
// inside it must stay, or the image would not be one run of the file).
std::vector<PhysicalRange> outside(const std::vector<PhysicalRange> &holes, const PhysicalRange &keep);

// `ram` without `holes` (both sorted), leaving in the smallest holes when
// the result would have more than max_ranges ranges.
std::vector<PhysicalRange> subtract(const std::vector<PhysicalRange> &ram, std::vector<PhysicalRange> holes,
				    std::size_t max_ranges);

}  // namespace vtice::dbg::vmcore
