#include "elf_core.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <elf.h>
#include <unistd.h>

#include "../hex.hpp"

namespace vtice::dbg::vmcore {

namespace {

constexpr std::uint64_t kPage = 4096;

Result<void> write_all(int fd, const void *data, std::size_t length)
{
	const auto *p = static_cast<const std::uint8_t *>(data);
	while (length) {
		ssize_t n = ::write(fd, p, length);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return make_error(std::string("writing the core file: ") + std::strerror(n < 0 ? errno : EIO));
		p += n;
		length -= static_cast<std::size_t>(n);
	}
	return {};
}

struct Chunk {
	std::vector<std::uint8_t> bytes;
	std::vector<bool> readable;  // per page
};

// Reads one chunk; where the target refuses it, page by page. An error when
// the target is gone.
Result<Chunk> read_chunk(const PhysicalReader &read, const TargetAlive &alive, std::uint64_t paddr,
			 std::size_t length)
{
	std::size_t pages = (length + kPage - 1) / kPage;
	auto whole = read(paddr, length);
	if (whole && whole->size() == length)
		return Chunk{std::move(*whole), std::vector<bool>(pages, true)};
	Chunk c{std::vector<std::uint8_t>(length, 0), std::vector<bool>(pages, false)};
	for (std::size_t i = 0; i < pages; ++i) {
		if (alive && !alive())
			return make_error("lost the target at physical " + hex(paddr + i * kPage) + ": " +
					  (whole ? std::string("short read") : whole.error().message));
		std::size_t at = i * kPage, n = std::min<std::size_t>(kPage, length - at);
		auto page = read(paddr + at, n);
		if (page && page->size() == n) {
			std::memcpy(c.bytes.data() + at, page->data(), n);
			c.readable[i] = true;
		}
	}
	return c;
}

bool all_zero(const std::uint8_t *p, std::size_t n)
{
	return std::all_of(p, p + n, [](std::uint8_t b) { return b == 0; });
}

// The PT_LOADs as pages go to the file. A data page extends the last
// segment when it follows its data; a zero page extends the last segment's
// zero tail (p_memsz past p_filesz, which readers take as zeros); a refused
// page ends the segment, and readers then report it missing. The page after
// a zero tail or a hole needs a new segment: entering either takes one from
// the split budget, and where none is left the page is written as data.
class Segments {
public:
	enum class Kind { Data, Zero, Refused };
	struct Written {
		std::uint64_t paddr, vaddr, filesz, memsz, offset;
	};

	Segments(std::uint64_t file_offset, unsigned splits) : offset_(file_offset), splits_(splits) {}

	// A new RAM range: its first segment is budgeted.
	void start_range(const RamRange &r) { range_ = r, mode_ = Mode::Closed; }
	// Records one page; true when its bytes go to the file.
	bool add(std::uint64_t paddr, Kind kind)
	{
		if (kind == Kind::Refused) {
			if (mode_ == Mode::Data && !take_split())
				return add_data(paddr);
			mode_ = Mode::Closed;  // a zero tail's reserve carries over
			return false;
		}
		if (kind == Kind::Zero) {
			if (mode_ == Mode::ZeroTail) {
				list_.back().memsz += kPage;
				return false;
			}
			if (!take_split())
				return add_data(paddr);
			if (mode_ == Mode::Data)
				list_.back().memsz += kPage;
			else
				list_.push_back({paddr, vaddr_of(paddr), 0, kPage, offset_});
			mode_ = Mode::ZeroTail;
			return false;
		}
		return add_data(paddr);
	}
	const std::vector<Written> &list() const { return list_; }
	std::uint64_t end_offset() const { return offset_; }

private:
	enum class Mode { Closed, Data, ZeroTail };

	bool add_data(std::uint64_t paddr)
	{
		if (mode_ == Mode::Data) {
			list_.back().filesz += kPage;
			list_.back().memsz += kPage;
		} else {
			list_.push_back({paddr, vaddr_of(paddr), kPage, kPage, offset_});
			mode_ = Mode::Data;
		}
		offset_ += kPage;
		return true;
	}
	bool take_split()
	{
		if (splits_ == 0)
			return false;
		--splits_;
		return true;
	}
	std::uint64_t vaddr_of(std::uint64_t paddr) const { return range_.vaddr + (paddr - range_.paddr); }

	std::uint64_t offset_;
	unsigned splits_;
	RamRange range_;
	Mode mode_ = Mode::Closed;
	std::vector<Written> list_;
};

Elf64_Phdr load_header(std::uint64_t paddr, std::uint64_t vaddr, std::uint64_t filesz, std::uint64_t memsz,
		       std::uint64_t offset)
{
	Elf64_Phdr h{};
	h.p_type = PT_LOAD;
	h.p_flags = PF_R | PF_W | PF_X;
	h.p_offset = offset;
	h.p_vaddr = vaddr;
	h.p_paddr = paddr;
	h.p_filesz = filesz;
	h.p_memsz = memsz;
	return h;
}

Result<void> write_at(int fd, const void *data, std::size_t length, std::uint64_t offset)
{
	if (::lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0)
		return make_error(std::string("seeking in the core file: ") + std::strerror(errno));
	return write_all(fd, data, length);
}

// The pages of one chunk into the file and the segments: runs of kept
// pages in one write each.
Result<void> store_chunk(int fd, const Chunk &c, std::uint64_t paddr, const CoreLayout &layout,
			 Segments &segments, CoreStats &stats)
{
	const auto &k = layout.kernel_image;
	auto in_image = [&k](std::uint64_t at) { return k && at >= k->paddr && at < k->paddr + k->size; };
	std::size_t run_start = 0, run_bytes = 0;
	auto flush = [&]() -> Result<void> {
		if (!run_bytes)
			return {};
		auto w = write_all(fd, c.bytes.data() + run_start, run_bytes);
		run_bytes = 0;
		return w;
	};
	for (std::size_t at = 0; at < c.bytes.size(); at += kPage) {
		bool readable = c.readable[at / kPage];
		bool zero = readable && layout.skip_zero_pages && !in_image(paddr + at) &&
			    all_zero(c.bytes.data() + at, kPage);
		auto kind = !readable ? Segments::Kind::Refused : zero ? Segments::Kind::Zero : Segments::Kind::Data;
		if (!readable && !stats.unreadable_pages++)
			stats.first_unreadable = paddr + at;
		if (!segments.add(paddr + at, kind)) {
			if (auto w = flush(); !w)
				return w;
			stats.zero_pages += zero;
			continue;
		}
		stats.unreadable_as_zeros += !readable;
		if (!run_bytes)
			run_start = at;
		run_bytes += kPage;
		stats.written_bytes += kPage;
	}
	return flush();
}

// The ELF header, the program headers (notes, the image's alias, the
// segments) and the notes, at the start of the file.
Result<void> write_headers(int fd, const CoreLayout &layout, const Segments &segments, std::uint64_t notes_at,
			   std::uint64_t ram_at, CoreStats &stats)
{
	std::vector<Elf64_Phdr> phdrs(1);
	phdrs[0].p_type = PT_NOTE;
	phdrs[0].p_offset = notes_at;
	phdrs[0].p_filesz = layout.notes.size();
	if (const auto &k = layout.kernel_image) {
		for (const auto &s : segments.list())
			if (k->paddr >= s.paddr && k->paddr + k->size <= s.paddr + s.filesz) {
				phdrs.push_back(load_header(k->paddr, k->vaddr, k->size, k->size, s.offset + (k->paddr - s.paddr)));
				stats.kernel_image_header = true;
			}
	}
	for (const auto &s : segments.list())
		phdrs.push_back(load_header(s.paddr, s.vaddr, s.filesz, s.memsz, s.offset));

	Elf64_Ehdr e{};
	std::memcpy(e.e_ident, ELFMAG, SELFMAG);
	e.e_ident[EI_CLASS] = ELFCLASS64;
	e.e_ident[EI_DATA] = ELFDATA2LSB;
	e.e_ident[EI_VERSION] = EV_CURRENT;
	e.e_ident[EI_OSABI] = ELFOSABI_NONE;
	e.e_type = ET_CORE;
	e.e_machine = EM_X86_64;
	e.e_version = EV_CURRENT;
	e.e_phoff = sizeof(Elf64_Ehdr);
	e.e_ehsize = sizeof(Elf64_Ehdr);
	e.e_phentsize = sizeof(Elf64_Phdr);
	e.e_phnum = static_cast<std::uint16_t>(phdrs.size());
	std::vector<std::uint8_t> head(ram_at, 0);
	std::memcpy(head.data(), &e, sizeof e);
	std::memcpy(head.data() + sizeof e, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr));
	if (!layout.notes.empty())
		std::memcpy(head.data() + notes_at, layout.notes.data(), layout.notes.size());
	stats.load_segments = static_cast<unsigned>(phdrs.size() - 1);
	return write_at(fd, head.data(), head.size(), 0);
}

}  // namespace

Result<void> check_layout(const CoreLayout &layout)
{
	if (layout.ram.empty())
		return make_error("no RAM to dump");
	if (layout.notes.size() % 4)
		return make_error("the notes are not 4-byte aligned");
	std::uint64_t end = 0;
	for (const auto &r : layout.ram) {
		if (r.size == 0 || r.paddr % kPage || r.size % kPage)
			return make_error("RAM range " + hex(r.paddr) + "+" + hex(r.size) + " is empty or not page-aligned");
		if (r.paddr + r.size < r.paddr)
			return make_error("RAM range " + hex(r.paddr) + "+" + hex(r.size) + " wraps");
		if (r.paddr < end)
			return make_error("RAM ranges overlap or are out of order at " + hex(r.paddr));
		end = r.paddr + r.size;
	}
	if (layout.ram.size() > 0xfff0)
		return make_error("too many RAM ranges for one ELF header table (" + std::to_string(layout.ram.size()) + ")");
	if (const auto &k = layout.kernel_image) {
		auto holder = std::find_if(layout.ram.begin(), layout.ram.end(), [&](const RamRange &r) {
			return k->paddr >= r.paddr && k->paddr + k->size <= r.paddr + r.size;
		});
		if (holder == layout.ram.end() || k->size == 0)
			return make_error("the kernel image at " + hex(k->paddr) + " is not inside one RAM range");
	}
	return {};
}

std::vector<std::uint8_t> elf_note(const std::string &name, std::uint32_t type, std::span<const std::uint8_t> desc)
{
	auto pad4 = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
	Elf64_Nhdr h{};
	h.n_namesz = static_cast<std::uint32_t>(name.size() + 1);
	h.n_descsz = static_cast<std::uint32_t>(desc.size());
	h.n_type = type;
	std::vector<std::uint8_t> out(sizeof h + pad4(name.size() + 1) + pad4(desc.size()), 0);
	std::memcpy(out.data(), &h, sizeof h);
	std::memcpy(out.data() + sizeof h, name.data(), name.size());
	if (!desc.empty())
		std::memcpy(out.data() + sizeof h + pad4(name.size() + 1), desc.data(), desc.size());
	return out;
}

Result<CoreStats> write_core(int fd, const CoreLayout &layout, const PhysicalReader &read, const CoreProgress &progress,
			     std::size_t chunk, const TargetAlive &alive)
{
	if (auto r = check_layout(layout); !r)
		return r.error();
	std::size_t max_chunk = std::max<std::size_t>(kPage, chunk / kPage * kPage);
	// Chunks sized to take about a second on this link, so progress moves
	// as often over a serial line (kilobytes a second) as over QEMU's socket.
	chunk = std::min<std::size_t>(max_chunk, 16 * kPage);
	// The header table has room for every range, the splits and the text's
	// header; e_phnum stays below PN_XNUM, which crash does not read.
	unsigned splits = std::min<unsigned>(layout.max_splits, 0xff00 - static_cast<unsigned>(layout.ram.size()));
	std::uint64_t room = 2 + layout.ram.size() + splits;
	std::uint64_t notes_at = sizeof(Elf64_Ehdr) + room * sizeof(Elf64_Phdr);
	// RAM starts page-aligned, so a reader may map it.
	std::uint64_t ram_at = (notes_at + layout.notes.size() + kPage - 1) / kPage * kPage;
	if (::lseek(fd, static_cast<off_t>(ram_at), SEEK_SET) < 0)
		return make_error(std::string("the core file must be seekable: ") + std::strerror(errno));

	CoreStats stats;
	Segments segments(ram_at, splits);
	std::uint64_t total = 0;
	for (const auto &r : layout.ram)
		total += r.size;
	for (const auto &r : layout.ram) {
		segments.start_range(r);
		for (std::uint64_t done = 0; done < r.size;) {
			if (progress && !progress(stats.ram_bytes, total)) {
				char text[96];
				std::snprintf(text, sizeof text, "interrupted after %.1f MiB of %.1f MiB",
					      static_cast<double>(stats.ram_bytes) / (1 << 20),
					      static_cast<double>(total) / (1 << 20));
				return make_error(text);
			}
			std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, r.size - done));
			std::uint64_t paddr = r.paddr + done;
			auto asked = std::chrono::steady_clock::now();
			auto c = read_chunk(read, alive, paddr, n);
			if (!c)
				return c.error();
			double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
			if (took < 0.25 && n == chunk)
				chunk = std::min(max_chunk, chunk * 2);
			else if (took > 2 && chunk > kPage)
				chunk /= 2;
			if (auto w = store_chunk(fd, *c, paddr, layout, segments, stats); !w)
				return w.error();
			done += n;
			stats.ram_bytes += n;
		}
	}
	if (progress)
		progress(stats.ram_bytes, total);
	if (auto w = write_headers(fd, layout, segments, notes_at, ram_at, stats); !w)
		return w.error();
	stats.file_bytes = segments.end_offset();
	return stats;
}

}  // namespace vtice::dbg::vmcore
