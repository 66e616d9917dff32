// The vmcore writer, read back with elfutils' libelf (an independent ELF
// reader, the one eu-readelf uses): headers, where each physical page's
// bytes are, zero fill, refused pages, the split budget, the notes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "vmcore/elf_core.hpp"
#include "vmcore/notes.hpp"

namespace vc = vtice::dbg::vmcore;

namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kDirectMap = 0xffff888000000000ull;

// Guest memory: each page's bytes from its physical address, except the
// pages listed as zero (all zero) or refused (the reader fails on them).
struct FakeRam {
	std::set<std::uint64_t> zero, refused;
	unsigned reads = 0;

	std::uint8_t byte(std::uint64_t paddr) const
	{
		if (zero.count(paddr / kPage * kPage))
			return 0;
		return static_cast<std::uint8_t>((paddr * 131) >> 3 | 1);
	}
	vc::PhysicalReader reader()
	{
		return [this](std::uint64_t paddr, std::size_t n) -> vtice::Result<std::vector<std::uint8_t>> {
			++reads;
			for (std::uint64_t p = paddr / kPage * kPage; p < paddr + n; p += kPage)
				if (refused.count(p))
					return vtice::make_error("refused");
			std::vector<std::uint8_t> out(n);
			for (std::size_t i = 0; i < n; ++i)
				out[i] = byte(paddr + i);
			return out;
		};
	}
};

vc::RamRange range(std::uint64_t paddr, std::uint64_t pages)
{
	return {paddr, kDirectMap + paddr, pages * kPage};
}

// A core file written to a temporary file, then opened with libelf.
class Core {
public:
	explicit Core(const vc::CoreLayout &layout, FakeRam &ram, std::size_t chunk = 1 << 20)
	{
		char name[] = "/tmp/vtice-vmcore-test-XXXXXX";
		fd_ = ::mkstemp(name);
		path_ = name;
		stats = vc::write_core(fd_, layout, ram.reader(), nullptr, chunk);
		elf_version(EV_CURRENT);
		elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
	}
	~Core()
	{
		elf_end(elf_);
		::close(fd_);
		::unlink(path_.c_str());
	}

	std::vector<GElf_Phdr> headers() const
	{
		std::size_t n = 0;
		elf_getphdrnum(elf_, &n);
		std::vector<GElf_Phdr> out(n);
		for (std::size_t i = 0; i < n; ++i)
			gelf_getphdr(elf_, static_cast<int>(i), &out[i]);
		return out;
	}
	// One physical page as a reader of the file sees it: its bytes (zeros
	// past p_filesz), or nothing when no direct-map PT_LOAD covers it.
	std::optional<std::vector<std::uint8_t>> page(std::uint64_t paddr) const
	{
		for (const auto &h : headers()) {
			if (h.p_type != PT_LOAD || h.p_vaddr >= 0xffffffff80000000ull)
				continue;
			if (paddr < h.p_paddr || paddr + kPage > h.p_paddr + h.p_memsz)
				continue;
			std::vector<std::uint8_t> bytes(kPage, 0);
			std::uint64_t at = paddr - h.p_paddr;
			if (at < h.p_filesz)
				::pread(fd_, bytes.data(), kPage, static_cast<off_t>(h.p_offset + at));
			return bytes;
		}
		return std::nullopt;
	}
	std::vector<std::uint8_t> file_bytes(std::uint64_t offset, std::size_t n) const
	{
		std::vector<std::uint8_t> out(n);
		::pread(fd_, out.data(), n, static_cast<off_t>(offset));
		return out;
	}
	// (name, type, descriptor) of each note in the PT_NOTE.
	std::vector<std::tuple<std::string, unsigned, std::vector<std::uint8_t>>> notes() const
	{
		std::vector<std::tuple<std::string, unsigned, std::vector<std::uint8_t>>> out;
		for (const auto &h : headers()) {
			if (h.p_type != PT_NOTE)
				continue;
			Elf_Data *data = elf_getdata_rawchunk(elf_, static_cast<off_t>(h.p_offset), h.p_filesz, ELF_T_NHDR);
			GElf_Nhdr nhdr;
			std::size_t name_at, desc_at;
			for (std::size_t at = 0; data && (at = gelf_getnote(data, at, &nhdr, &name_at, &desc_at)) != 0;) {
				const auto *base = static_cast<const std::uint8_t *>(data->d_buf);
				out.emplace_back(std::string(reinterpret_cast<const char *>(base + name_at)), nhdr.n_type,
						 std::vector<std::uint8_t>(base + desc_at, base + desc_at + nhdr.n_descsz));
			}
		}
		return out;
	}

	vtice::Result<vc::CoreStats> stats = vtice::make_error("not written");
	Elf *elf_ = nullptr;

private:
	int fd_ = -1;
	std::string path_;
};

// write_core into a temporary file that is gone afterwards; only the result.
vtice::Result<vc::CoreStats> write_to_scratch(const vc::CoreLayout &layout, const vc::PhysicalReader &read,
					      const vc::CoreProgress &progress, std::size_t chunk,
					      const vc::TargetAlive &alive = nullptr)
{
	char name[] = "/tmp/vtice-vmcore-test-XXXXXX";
	int fd = ::mkstemp(name);
	auto r = vc::write_core(fd, layout, read, progress, chunk, alive);
	::close(fd);
	::unlink(name);
	return r;
}

std::vector<std::uint8_t> expected_page(const FakeRam &ram, std::uint64_t paddr)
{
	std::vector<std::uint8_t> out(kPage);
	for (std::uint64_t i = 0; i < kPage; ++i)
		out[i] = ram.byte(paddr + i);
	return out;
}

}  // namespace

TEST(VmcoreWriter, ElfReadersSeeACoreWithEveryPageWhereItsAddressSays)
{
	FakeRam ram;
	vc::CoreLayout layout;
	layout.notes = vc::elf_note("CORE", NT_PRSTATUS, std::vector<std::uint8_t>(336, 0));
	layout.ram = {range(0x1000, 3), range(0x100000, 40)};
	layout.kernel_image = vc::RamRange{0x104000, 0xffffffff81000000ull, 8 * kPage};
	Core core(layout, ram, 5 * kPage);  // chunks that do not divide the ranges
	ASSERT_TRUE(core.stats) << core.stats.error().to_string();

	GElf_Ehdr e;
	ASSERT_NE(gelf_getehdr(core.elf_, &e), nullptr);
	EXPECT_EQ(e.e_type, ET_CORE);
	EXPECT_EQ(e.e_machine, EM_X86_64);
	EXPECT_EQ(e.e_ident[EI_CLASS], ELFCLASS64);
	auto h = core.headers();
	ASSERT_EQ(h.size(), 4u);
	EXPECT_EQ(h[0].p_type, PT_NOTE);  // crash wants the notes first
	EXPECT_EQ(h[1].p_vaddr, 0xffffffff81000000ull);
	EXPECT_EQ(h[1].p_paddr, 0x104000u);
	EXPECT_EQ(h[2].p_vaddr, kDirectMap + 0x1000);
	EXPECT_EQ(h[3].p_memsz, 40 * kPage);
	for (std::size_t i = 1; i < h.size(); ++i)
		EXPECT_EQ(h[i].p_offset % kPage, 0u) << "segment " << i;
	for (const auto &r : layout.ram)
		for (std::uint64_t p = r.paddr; p < r.paddr + r.size; p += kPage)
			EXPECT_EQ(core.page(p), expected_page(ram, p)) << std::hex << p;
	// The image's header shares the bytes of the RAM segment that holds it.
	EXPECT_EQ(core.file_bytes(h[1].p_offset, kPage), expected_page(ram, 0x104000));
	EXPECT_EQ(core.stats->file_bytes, h[3].p_offset + h[3].p_filesz);
	EXPECT_TRUE(core.stats->kernel_image_header);
	EXPECT_EQ(core.page(0x0), std::nullopt);  // not RAM: not in the file
}

TEST(VmcoreWriter, ZeroPagesTakeNoRoomAndStillReadAsZeros)
{
	FakeRam ram;
	ram.zero = {0x101000, 0x102000, 0x107000, 0x10f000};
	vc::CoreLayout layout;
	layout.ram = {range(0x100000, 16)};
	layout.skip_zero_pages = true;
	Core core(layout, ram);
	ASSERT_TRUE(core.stats);
	EXPECT_EQ(core.stats->zero_pages, 4u);
	EXPECT_EQ(core.stats->written_bytes, 12 * kPage);
	std::uint64_t filesz = 0, memsz = 0;
	for (const auto &h : core.headers())
		if (h.p_type == PT_LOAD)
			filesz += h.p_filesz, memsz += h.p_memsz;
	EXPECT_EQ(filesz, 12 * kPage);
	EXPECT_EQ(memsz, 16 * kPage);
	for (std::uint64_t p = 0x100000; p < 0x110000; p += kPage)
		EXPECT_EQ(core.page(p), expected_page(ram, p)) << std::hex << p;
}

TEST(VmcoreWriter, ZeroPagesInsideTheKernelImageAreWrittenSoItStaysOneRun)
{
	FakeRam ram;
	ram.zero = {0x103000};
	vc::CoreLayout layout;
	layout.ram = {range(0x100000, 8)};
	layout.kernel_image = vc::RamRange{0x102000, 0xffffffff81000000ull, 3 * kPage};
	layout.skip_zero_pages = true;
	Core core(layout, ram);
	ASSERT_TRUE(core.stats);
	EXPECT_EQ(core.stats->zero_pages, 0u);
	EXPECT_TRUE(core.stats->kernel_image_header);
}

TEST(VmcoreWriter, RefusedPagesAreLeftOutNotMadeUp)
{
	FakeRam ram;
	ram.refused = {0x103000};
	vc::CoreLayout layout;
	layout.ram = {range(0x100000, 8)};
	Core core(layout, ram);
	ASSERT_TRUE(core.stats);
	EXPECT_EQ(core.stats->unreadable_pages, 1u);
	EXPECT_EQ(core.stats->first_unreadable, 0x103000u);
	EXPECT_EQ(core.stats->unreadable_as_zeros, 0u);
	EXPECT_EQ(core.page(0x103000), std::nullopt);
	EXPECT_EQ(core.page(0x102000), expected_page(ram, 0x102000));
	EXPECT_EQ(core.page(0x104000), expected_page(ram, 0x104000));
}

TEST(VmcoreWriter, WithNoSplitLeftPagesAreWrittenAsTheyAreAndCounted)
{
	FakeRam ram;
	ram.zero = {0x101000};
	ram.refused = {0x103000};
	vc::CoreLayout layout;
	layout.ram = {range(0x100000, 6)};
	layout.skip_zero_pages = true;
	layout.max_splits = 0;
	Core core(layout, ram);
	ASSERT_TRUE(core.stats);
	EXPECT_EQ(core.stats->unreadable_as_zeros, 1u);
	EXPECT_EQ(core.stats->zero_pages, 0u);
	EXPECT_EQ(core.headers().size(), 2u);  // the note and one PT_LOAD
	EXPECT_EQ(core.page(0x103000), std::vector<std::uint8_t>(kPage, 0));
	EXPECT_EQ(core.page(0x104000), expected_page(ram, 0x104000));
}

TEST(VmcoreWriter, ALayoutThatCannotBeRightIsRefused)
{
	vc::CoreLayout empty;
	EXPECT_FALSE(vc::check_layout(empty));
	vc::CoreLayout unaligned;
	unaligned.ram = {{0x1001, kDirectMap, kPage}};
	EXPECT_FALSE(vc::check_layout(unaligned));
	vc::CoreLayout overlapping;
	overlapping.ram = {range(0x100000, 4), range(0x102000, 4)};
	EXPECT_FALSE(vc::check_layout(overlapping));
	vc::CoreLayout wrapping;
	wrapping.ram = {{0xfffffffffffff000ull, 0, 2 * kPage}};
	EXPECT_FALSE(vc::check_layout(wrapping));
	vc::CoreLayout image_outside;
	image_outside.ram = {range(0x100000, 4)};
	image_outside.kernel_image = vc::RamRange{0x103000, 0xffffffff81000000ull, 2 * kPage};
	EXPECT_FALSE(vc::check_layout(image_outside));
}

TEST(VmcoreWriter, AProgressThatSaysStopEndsTheDumpWithAnError)
{
	FakeRam ram;
	vc::CoreLayout layout;
	layout.ram = {range(0x100000, 64)};
	unsigned calls = 0;
	auto r = write_to_scratch(layout, ram.reader(), [&](std::uint64_t, std::uint64_t) { return ++calls < 3; },
				  8 * kPage);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("interrupted"), std::string::npos);
	EXPECT_EQ(ram.reads, 2u);
}

TEST(VmcoreNotes, PrstatusAndVmcoreinfoReadBackThroughLibelf)
{
	vc::PrstatusRegisters regs{};
	for (std::size_t i = 0; i < regs.size(); ++i)
		regs[i] = 0x1000 + i;
	const std::string info = "OSRELEASE=6.1.0-56-amd64\nPAGESIZE=4096\nNUMBER(phys_base)=0\n";
	vc::CoreLayout layout;
	layout.notes = vc::prstatus_note(regs, 4242);
	auto second = vc::vmcoreinfo_note(info);
	layout.notes.insert(layout.notes.end(), second.begin(), second.end());
	layout.ram = {range(0x100000, 1)};
	FakeRam ram;
	Core core(layout, ram);
	ASSERT_TRUE(core.stats);
	auto notes = core.notes();
	ASSERT_EQ(notes.size(), 2u);
	auto &[name, type, desc] = notes[0];
	EXPECT_EQ(name, "CORE");
	EXPECT_EQ(type, static_cast<unsigned>(NT_PRSTATUS));
	ASSERT_EQ(desc.size(), 336u);  // sizeof(struct elf_prstatus) on x86-64
	std::int32_t pid;
	std::memcpy(&pid, desc.data() + 32, 4);
	EXPECT_EQ(pid, 4242);
	// pr_reg at 112 in user_regs_struct order: rip is its 17th register.
	std::uint64_t rip;
	std::memcpy(&rip, desc.data() + 112 + 16 * 8, 8);
	EXPECT_EQ(rip, 0x1000u + 16);
	EXPECT_STREQ(vc::kPrstatusRegisters[16], "rip");
	EXPECT_EQ(std::get<0>(notes[1]), "VMCOREINFO");
	EXPECT_EQ(std::get<1>(notes[1]), 0u);
	const auto &text = std::get<2>(notes[1]);
	EXPECT_EQ(std::string(text.begin(), text.end()), info);
}

TEST(VmcoreNotes, TheKernelsVmcoreinfoIsCheckedBeforeItIsCopied)
{
	EXPECT_TRUE(vc::check_vmcoreinfo("OSRELEASE=6.12.9\nPAGESIZE=4096\n"));
	EXPECT_FALSE(vc::check_vmcoreinfo(""));
	EXPECT_FALSE(vc::check_vmcoreinfo("PAGESIZE=4096\n"));
	EXPECT_FALSE(vc::check_vmcoreinfo(std::string("OSRELEASE=6.1\nPAGESIZE=4096\n\x01\n")));
	EXPECT_FALSE(vc::check_vmcoreinfo("OSRELEASE=6.1\nPAGESIZE=4096\n" + std::string(5000, 'a')));
	EXPECT_EQ(vc::vmcoreinfo_value("OSRELEASE=6.1\nNUMBER(phys_base)=-5\n", "NUMBER(phys_base)"), "-5");
	EXPECT_EQ(vc::vmcoreinfo_value("OSRELEASEX=1\n", "OSRELEASE"), "");
}

#include "vmcore/free_pages.hpp"

TEST(VmcoreFreePages, TheBuddyMarkIsTheWholeWordBefore612AndTheTopByteSince)
{
	// 6.1: PAGE_BUDDY_MAPCOUNT_VALUE = ~PG_buddy = -129, and _mapcount equals it.
	EXPECT_TRUE(vc::is_buddy(-129, -129));
	EXPECT_FALSE(vc::is_buddy(-1, -129));   // an unmapped page's _mapcount
	EXPECT_FALSE(vc::is_buddy(-257, -129));  // PageOffline
	// 6.12: the type is the top byte (PGTY_buddy = 0xf0), the rest is data.
	EXPECT_TRUE(vc::is_buddy(static_cast<std::int32_t>(0xf0000003u), 0xf0000000));
	EXPECT_FALSE(vc::is_buddy(static_cast<std::int32_t>(0xf1000000u), 0xf0000000));
	EXPECT_TRUE(vc::is_buddy(static_cast<std::int32_t>(0xf0000000u), -268435456));  // printed as an int
}

TEST(VmcoreFreePages, FreeBlocksAreCutOutOfRamAndTheImageStaysWhole)
{
	std::vector<vc::PhysicalRange> ram = {{0x1000, 0x9e000}, {0x100000, 0x1000000}};
	std::vector<vc::PhysicalRange> holes = {{0x2000, 0x1000}, {0x200000, 0x100000}, {0x400000, 0x1000}};
	auto kept = vc::subtract(ram, holes, 100);
	std::vector<std::pair<std::uint64_t, std::uint64_t>> got;
	for (const auto &r : kept)
		got.emplace_back(r.start, r.size);
	std::vector<std::pair<std::uint64_t, std::uint64_t>> want = {
		{0x1000, 0x1000}, {0x3000, 0x9c000}, {0x100000, 0x100000}, {0x300000, 0x100000}, {0x401000, 0xcff000}};
	EXPECT_EQ(got, want);
	// With room for only one more range, the largest hole is the one cut out.
	auto tight = vc::subtract(ram, holes, 3);
	ASSERT_EQ(tight.size(), 3u);
	EXPECT_EQ(tight[1].start, 0x100000u);
	EXPECT_EQ(tight[2].start, 0x300000u);
	// A hole across the kernel image is cut around it.
	auto cut = vc::outside({{0x100000, 0x400000}}, {0x200000, 0x100000});
	ASSERT_EQ(cut.size(), 2u);
	EXPECT_EQ(cut[0].start + cut[0].size, 0x200000u);
	EXPECT_EQ(cut[1].start, 0x300000u);
	EXPECT_EQ(cut[1].size, 0x200000u);
}

TEST(VmcoreWriter, ALostTargetEndsTheDumpInsteadOfLeavingEveryPageOut)
{
	FakeRam ram;
	vc::CoreLayout layout;
	layout.ram = {range(0x100000, 64)};
	bool connected = true;
	auto good = ram.reader();
	auto reader = [&](std::uint64_t paddr, std::size_t n) -> vtice::Result<std::vector<std::uint8_t>> {
		if (paddr >= 0x110000)
			connected = false;
		if (!connected)
			return vtice::make_error("connection to tcp:127.0.0.1:1 is closed");
		return good(paddr, n);
	};
	auto r = write_to_scratch(layout, reader, nullptr, 4 * kPage, [&] { return connected; });
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("lost the target at physical 0x110000: connection"), std::string::npos)
		<< r.error().message;
}
