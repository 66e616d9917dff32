// Writes an ELF core file in the layout kdump's /proc/vmcore has, the layout
// crash and drgn read: the program headers right after the ELF header, the
// PT_NOTE first (PRSTATUS per CPU, VMCOREINFO), then one PT_LOAD per run of
// RAM written, p_paddr the physical address and p_vaddr its address in the
// kernel's direct map. The kernel image gets a PT_LOAD of its own at its
// link-time virtual address, as kexec-tools writes it (drgn reads the page
// tables through it; older crash derives phys_base from it); its bytes are
// not written twice: that header points into the RAM segment that holds
// them, and zero pages inside the image are always written so it stays one
// run.
//
// Pages the target refuses are left out: a reader then reports them as
// missing instead of showing made-up contents. All-zero pages, when asked,
// take no room in the file: they become a segment's zero tail (p_memsz past
// p_filesz), which every ELF reader takes as zeros (makedumpfile -d 1 does
// the same). Both can split a segment; the header table has room for a
// bounded number of splits, after which pages are written as they are
// (refused ones as zeros, counted).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::dbg::vmcore {

struct RamRange {
	std::uint64_t paddr = 0;
	std::uint64_t vaddr = 0;  // where the kernel maps it (direct map)
	std::uint64_t size = 0;
};

struct CoreLayout {
	std::vector<std::uint8_t> notes;   // whole ELF notes, each 4-byte aligned
	std::vector<RamRange> ram;         // sorted by paddr, not overlapping
	std::optional<RamRange> kernel_image;  // must lie inside one ram range
	bool skip_zero_pages = false;
	unsigned max_splits = 4096;        // segments that leaving pages out may add
};

// Reads physical memory; an error makes the writer retry page by page.
using PhysicalReader = std::function<Result<std::vector<std::uint8_t>>(std::uint64_t paddr, std::size_t length)>;
// After a failed read: false when the target is gone (the link lost), which
// ends the dump with an error instead of leaving every page out.
using TargetAlive = std::function<bool()>;
// Bytes of RAM done so far, of the total; false stops the dump.
using CoreProgress = std::function<bool(std::uint64_t done, std::uint64_t total)>;

struct CoreStats {
	std::uint64_t ram_bytes = 0;         // RAM looked at
	std::uint64_t written_bytes = 0;     // RAM written to the file
	std::uint64_t zero_pages = 0;        // all zero, stored as zero fill (skip_zero_pages)
	std::uint64_t unreadable_pages = 0;  // the target refused them
	std::uint64_t unreadable_as_zeros = 0;  // of those, written as zeros (no split left)
	std::uint64_t first_unreadable = 0;  // paddr of the first refused page
	std::uint64_t file_bytes = 0;
	unsigned load_segments = 0;
	bool kernel_image_header = false;    // the image's own PT_LOAD was written
};

// Checks the layout (sorted, disjoint, page-aligned, the kernel image
// inside one range); an error names what is wrong.
Result<void> check_layout(const CoreLayout &layout);

// Writes the core to fd (a new, empty, seekable file), reading RAM in
// chunks of at most chunk bytes, fewer on a slow link.
Result<CoreStats> write_core(int fd, const CoreLayout &layout, const PhysicalReader &read, const CoreProgress &progress,
			     std::size_t chunk = 1 << 20, const TargetAlive &alive = nullptr);

// One ELF note: the header, the name with its NUL, the descriptor, each
// padded to 4 bytes.
std::vector<std::uint8_t> elf_note(const std::string &name, std::uint32_t type, std::span<const std::uint8_t> desc);

}  // namespace vtice::dbg::vmcore
