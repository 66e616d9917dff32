// debugger/trace/kcore.cpp. The header layouts come from the ELF
// specification (<elf.h>'s Elf64_Ehdr/Elf64_Phdr), built here by hand; the
// live check reads the running kernel's own banner through /proc/kcore at
// the address /proc/kallsyms gives linux_banner, and the oracle is the
// text every Linux banner starts with.
#include <gtest/gtest.h>

#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "trace/kcore.hpp"

using vtice::dbg::Kcore;
using vtice::dbg::parse_kcore_segments;

namespace {

std::vector<std::uint8_t> core(std::vector<Elf64_Phdr> phdrs)
{
	Elf64_Ehdr eh{};
	std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_CORE;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = static_cast<Elf64_Half>(phdrs.size());
	std::vector<std::uint8_t> out(sizeof(eh) + phdrs.size() * sizeof(Elf64_Phdr));
	std::memcpy(out.data(), &eh, sizeof(eh));
	if (!phdrs.empty())
		std::memcpy(out.data() + sizeof(eh), phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr));
	return out;
}

Elf64_Phdr load(std::uint64_t vaddr, std::uint64_t offset, std::uint64_t size)
{
	Elf64_Phdr ph{};
	ph.p_type = PT_LOAD;
	ph.p_vaddr = vaddr;
	ph.p_offset = offset;
	ph.p_filesz = size;
	return ph;
}

TEST(Kcore, LoadSegmentsOnlyNotesAndEmptyOnesLeftOut)
{
	Elf64_Phdr note{};
	note.p_type = PT_NOTE;
	note.p_filesz = 100;
	auto segs = parse_kcore_segments(core({note, load(0xffffffff81000000ull, 0x2000, 0x1000),
						load(0xffff888000000000ull, 0x9000, 0)}));
	ASSERT_TRUE(segs) << segs.error().to_string();
	ASSERT_EQ(segs->size(), 1u);
	EXPECT_EQ((*segs)[0].address, 0xffffffff81000000ull);
	EXPECT_EQ((*segs)[0].offset, 0x2000u);
}

TEST(Kcore, MalformedHeadersAreErrorsThatSayWhat)
{
	auto bad = [](std::vector<std::uint8_t> bytes) {
		auto r = parse_kcore_segments(bytes);
		return r ? std::string("accepted") : r.error().message;
	};
	EXPECT_EQ(bad({1, 2, 3}), "shorter than an ELF header");
	auto not_core = core({load(0, 0, 1)});
	not_core[16] = ET_EXEC;
	EXPECT_EQ(bad(not_core), "not an ELF core file");
	auto far = core({load(0, 0, 1)});
	Elf64_Ehdr eh;
	std::memcpy(&eh, far.data(), sizeof(eh));
	eh.e_phoff = ~0ull - 8;
	std::memcpy(far.data(), &eh, sizeof(eh));
	EXPECT_EQ(bad(far), "program header table at an implausible offset") << "no read near 2^64";
	EXPECT_EQ(bad(core({})), "bad program header table (0 entries of 56 bytes)");
	EXPECT_EQ(bad(core({load(~0ull - 10, 0, 100)})), "segment 0 wraps around");
}

TEST(Kcore, DirectoriesAndNonCoresAreRefusedByName)
{
	auto dir = Kcore::open("/tmp");
	ASSERT_FALSE(dir);
	EXPECT_NE(dir.error().message.find("/tmp: "), std::string::npos) << dir.error().message;
	auto zero = Kcore::open("/dev/zero");
	ASSERT_FALSE(zero);
	EXPECT_EQ(zero.error().message, "/dev/zero: not a kernel core file (/proc/kcore is a regular file)");
}

std::uint64_t kallsyms_address(const std::string &name)
{
	std::ifstream in("/proc/kallsyms");
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream fields(line);
		std::string address, type, symbol;
		fields >> address >> type >> symbol;
		if (symbol == name)
			return std::stoull(address, nullptr, 16);
	}
	return 0;
}

TEST(Kcore, ReadsTheRunningKernelsBanner)
{
	if (geteuid() != 0 || access("/proc/kcore", R_OK) != 0)
		GTEST_SKIP() << "needs root and /proc/kcore";
	std::uint64_t banner = kallsyms_address("linux_banner");
	if (!banner)
		GTEST_SKIP() << "/proc/kallsyms hides addresses (kptr_restrict)";
	auto kcore = Kcore::open("/proc/kcore");
	ASSERT_TRUE(kcore) << kcore.error().to_string();
	auto bytes = kcore->read(banner, 14);
	ASSERT_TRUE(bytes) << bytes.error().to_string();
	EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "Linux version ");
	EXPECT_FALSE(kcore->read(0x1000, 16)) << "user space is in no kcore segment";
}

}  // namespace
