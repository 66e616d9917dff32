// libFuzzer target: a hostile kernel's say in a vmcore. The input chooses
// the RAM ranges (valid or not), the kernel image, which pages are zero or
// refused, the split budget, the free blocks, and the VMCOREINFO text. The
// writer must refuse a bad layout and otherwise write a core in which every
// page reads back as what the target held, as zeros it held, or as missing
// when the target refused it: never as bytes the target did not give.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmcore/elf_core.hpp"
#include "vmcore/free_pages.hpp"
#include "vmcore/notes.hpp"

namespace vc = vtice::dbg::vmcore;

namespace {

constexpr std::uint64_t kPage = 4096;

struct Input {
	const std::uint8_t *data;
	std::size_t size, at = 0;
	std::uint8_t byte() { return at < size ? data[at++] : 0; }
	std::uint64_t u16() { return byte() | static_cast<std::uint64_t>(byte()) << 8; }
};

// Never 0: a page the test does not make zero must not be zero by chance.
std::uint8_t page_byte(std::uint64_t paddr) { return static_cast<std::uint8_t>(((paddr >> 12) * 37) | 1); }

// The page as the core file shows it through its direct-map PT_LOADs.
enum class Seen { Missing, Zeros, Content, Other };

Seen read_back(int fd, const std::vector<Elf64_Phdr> &headers, std::uint64_t paddr)
{
	for (const auto &h : headers) {
		if (h.p_type != PT_LOAD || h.p_vaddr >= 0xffffffff80000000ull)
			continue;
		if (paddr < h.p_paddr || paddr + kPage > h.p_paddr + h.p_memsz)
			continue;
		std::uint64_t at = paddr - h.p_paddr;
		if (at >= h.p_filesz)
			return Seen::Zeros;
		std::vector<std::uint8_t> bytes(kPage);
		if (::pread(fd, bytes.data(), kPage, static_cast<off_t>(h.p_offset + at)) != static_cast<ssize_t>(kPage))
			return Seen::Other;
		bool zeros = true, content = true;
		for (std::uint64_t i = 0; i < kPage; ++i) {
			zeros &= bytes[i] == 0;
			content &= bytes[i] == page_byte(paddr);
		}
		return content ? Seen::Content : zeros ? Seen::Zeros : Seen::Other;
	}
	return Seen::Missing;
}

void check_core(Input &in)
{
	vc::CoreLayout layout;
	unsigned ranges = in.byte() % 5;
	std::uint64_t at = 0;
	for (unsigned i = 0; i < ranges; ++i) {
		std::uint8_t shape = in.byte();
		// Mostly page-aligned and in order; sometimes not, to be refused.
		std::uint64_t gap = (shape & 0x80) ? in.u16() : (in.byte() % 4) * kPage;
		std::uint64_t pages = in.byte() % 24 + ((shape & 0x40) ? 0 : 1);
		std::uint64_t start = (shape & 0x20) && at >= kPage ? at - kPage : at + gap;
		layout.ram.push_back({start, 0xffff888000000000ull + start, pages * kPage});
		at = start + pages * kPage;
	}
	if (in.byte() & 1 && !layout.ram.empty()) {
		const auto &r = layout.ram[in.byte() % layout.ram.size()];
		std::uint64_t first = in.byte() % 8 * kPage, pages = in.byte() % 8 + 1;
		layout.kernel_image = vc::RamRange{r.paddr + first, 0xffffffff81000000ull, pages * kPage};
	}
	layout.skip_zero_pages = in.byte() & 1;
	layout.max_splits = in.byte() % 6;
	std::set<std::uint64_t> zero, refused;
	for (unsigned i = in.byte() % 16; i > 0; --i) {
		std::uint64_t page = (in.u16() % 128) * kPage;
		(in.byte() & 1 ? zero : refused).insert(page);
	}
	bool valid = static_cast<bool>(vc::check_layout(layout));

	int fd = ::memfd_create("fuzz_vmcore", 0);
	if (fd < 0)
		return;
	auto reader = [&](std::uint64_t paddr, std::size_t n) -> vtice::Result<std::vector<std::uint8_t>> {
		for (std::uint64_t p = paddr / kPage * kPage; p < paddr + n; p += kPage)
			if (refused.count(p))
				return vtice::make_error("refused");
		std::vector<std::uint8_t> out(n);
		for (std::size_t i = 0; i < n; ++i)
			out[i] = zero.count((paddr + i) / kPage * kPage) ? 0 : page_byte(paddr + i);
		return out;
	};
	auto stats = vc::write_core(fd, layout, reader, nullptr, (in.byte() % 4 + 1) * kPage);
	if (static_cast<bool>(stats) != valid)
		std::abort();  // check_layout and write_core disagree
	if (stats) {
		Elf64_Ehdr e;
		if (::pread(fd, &e, sizeof e, 0) != sizeof e || e.e_phnum == 0)
			std::abort();
		std::vector<Elf64_Phdr> headers(e.e_phnum);
		::pread(fd, headers.data(), headers.size() * sizeof(Elf64_Phdr), static_cast<off_t>(e.e_phoff));
		for (const auto &r : layout.ram)
			for (std::uint64_t p = r.paddr; p < r.paddr + r.size; p += kPage) {
				Seen seen = read_back(fd, headers, p);
				bool is_zero = zero.count(p) != 0, is_refused = refused.count(p) != 0;
				bool ok = is_refused ? seen == Seen::Missing || seen == Seen::Zeros
					  : is_zero  ? seen == Seen::Zeros
						     : seen == Seen::Content;
				if (!ok)
					std::abort();  // a page the file shows wrongly
			}
	}
	::close(fd);
}

void check_free_ranges(Input &in)
{
	std::vector<vc::PhysicalRange> ram, holes;
	std::uint64_t at = 0;
	for (unsigned i = in.byte() % 4; i > 0; --i) {
		at += (in.byte() % 4 + 1) * kPage;
		std::uint64_t size = (in.byte() % 32 + 1) * kPage;
		ram.push_back({at, size});
		at += size;
	}
	std::uint64_t h = 0;
	for (unsigned i = in.byte() % 8; i > 0; --i) {
		h += (in.byte() % 16) * kPage;
		std::uint64_t size = (in.byte() % 8 + 1) * kPage;
		holes.push_back({h, size});
		h += size;
	}
	vc::PhysicalRange keep{(in.byte() % 64) * kPage, (in.byte() % 8) * kPage};
	auto cut = vc::outside(holes, keep);
	std::size_t budget = in.byte() % 12;
	auto kept = vc::subtract(ram, cut, budget);
	// Every kept byte is RAM, none lies in a hole that was cut out, and the
	// budget holds (or each range is whole).
	std::uint64_t last = 0;
	for (const auto &k : kept) {
		if (k.size == 0 || k.start < last)
			std::abort();
		last = k.start + k.size;
		bool in_ram = false;
		for (const auto &r : ram)
			in_ram |= k.start >= r.start && last <= r.start + r.size;
		if (!in_ram)
			std::abort();
	}
	if (kept.size() > std::max(budget, ram.size()))
		std::abort();
	for (const auto &c : cut)
		if (c.start < keep.start + keep.size && c.start + c.size > keep.start && keep.size)
			std::abort();  // a hole inside the kept range survived
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	Input in{data, size};
	check_core(in);
	check_free_ranges(in);
	(void)vc::is_buddy(static_cast<std::int32_t>(in.u16() << 16 | in.u16()),
			   static_cast<std::int32_t>(in.u16() << 16 | in.u16()));
	std::string text(reinterpret_cast<const char *>(data), size);
	if (vc::check_vmcoreinfo(text))
		(void)vc::vmcoreinfo_value(text, "OSRELEASE");
	(void)vc::vmcoreinfo_note(text.substr(0, 4096));
	return 0;
}
