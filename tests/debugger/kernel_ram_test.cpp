// Where the dump finds RAM: the kernel's iomem resource list, read through
// BTF from a memory-only target laid out here, as a sane kernel and as a
// hostile one (a loop, ranges out of order, past the physical limit).
#include <gtest/gtest.h>

#include <bpf/btf.h>

#include <cstdio>
#include <cstring>

#include "memory_target.hpp"
#include "session.hpp"
#include "vmcore/kernel_ram.hpp"

using namespace vtice::dbg;

namespace {

constexpr std::uint64_t kRoot = 0xffffffff82a51c40ull, kNodes = 0xffff888000100000ull;
constexpr std::uint64_t kRamName = 0xffffffff82000000ull, kReservedName = 0xffffffff82000100ull;

// struct resource { u64 start, end; const char *name; u64 flags, desc;
//                   struct resource *parent, *sibling, *child; };   size 64
std::vector<std::uint8_t> resource_btf()
{
	struct btf *b = btf__new_empty();
	int u64 = btf__add_int(b, "unsigned long long", 8, 0);
	int chr = btf__add_int(b, "char", 1, BTF_INT_CHAR);
	int name = btf__add_ptr(b, chr);
	int self = btf__add_ptr(b, static_cast<int>(btf__type_cnt(b)) + 1);
	btf__add_struct(b, "resource", 64);
	const char *fields[] = {"start", "end", "name", "flags", "desc", "parent", "sibling", "child"};
	for (unsigned i = 0; i < 8; ++i)
		btf__add_field(b, fields[i], i == 2 ? name : i >= 5 ? self : u64, 64 * i, 0);
	std::uint32_t size = 0;
	auto *raw = static_cast<const std::uint8_t *>(btf__raw_data(b, &size));
	std::vector<std::uint8_t> out(raw, raw + size);
	btf__free(b);
	return out;
}

struct Entry {
	std::uint64_t start, end;
	bool ram;
};

class KernelRam : public ::testing::Test {
protected:
	void SetUp() override
	{
		auto parsed = btf::Types::parse(resource_btf(), "test BTF");
		ASSERT_TRUE(parsed);
		types.emplace(std::move(*parsed));
		auto target = std::make_unique<test::MemoryTarget>();
		memory = target.get();
		memory->map(kRamName, {'S', 'y', 's', 't', 'e', 'm', ' ', 'R', 'A', 'M', 0, 0, 0, 0, 0, 0});
		memory->map(kReservedName, {'R', 'e', 's', 'e', 'r', 'v', 'e', 'd', 0, 0, 0, 0, 0, 0, 0, 0});
		session = std::make_unique<Session>(std::move(target));
		char map[64];
		std::snprintf(map, sizeof map, "%016llx D iomem_resource\n", static_cast<unsigned long long>(kRoot));
		auto symbols = parse_kallsyms_text(map, "test symbols");
		ASSERT_TRUE(symbols);
		session->set_symbols(std::move(*symbols));
	}
	static std::vector<std::uint8_t> resource(std::uint64_t start, std::uint64_t end, std::uint64_t name,
						  std::uint64_t sibling, std::uint64_t child)
	{
		std::vector<std::uint8_t> r(64, 0);
		std::uint64_t fields[8] = {start, end, name, 0, 0, kRoot, sibling, child};
		std::memcpy(r.data(), fields, sizeof fields);
		return r;
	}
	// The root and its children in this order; `last_sibling` ends the list.
	void lay_out(const std::vector<Entry> &entries, std::uint64_t last_sibling = 0)
	{
		memory->map(kRoot, resource(0, ~0ull, 0, 0, entries.empty() ? 0 : kNodes));
		for (std::size_t i = 0; i < entries.size(); ++i) {
			std::uint64_t next = i + 1 < entries.size() ? kNodes + 64 * (i + 1) : last_sibling;
			memory->map(kNodes + 64 * i, resource(entries[i].start, entries[i].end,
							       entries[i].ram ? kRamName : kReservedName, next, 0));
		}
	}

	std::optional<btf::Types> types;
	test::MemoryTarget *memory = nullptr;
	std::unique_ptr<Session> session;
};

}  // namespace

TEST_F(KernelRam, SystemRamEntriesBecomePageRoundedRanges)
{
	// /proc/iomem of the QEMU rig's 512 MiB guest.
	lay_out({{0x0, 0xfff, false}, {0x1000, 0x9fbff, true}, {0xa0000, 0xbffff, false},
		 {0x100000, 0x1ffdffff, true}, {0xfeffc000, 0xfeffffff, false}});
	auto ram = vmcore::system_ram(*session, *types);
	ASSERT_TRUE(ram) << ram.error().to_string();
	ASSERT_EQ(ram->size(), 2u);
	EXPECT_EQ((*ram)[0].start, 0x1000u);
	EXPECT_EQ((*ram)[0].size, 0x9e000u);  // the partial page at 0x9f000 is left out
	EXPECT_EQ((*ram)[1].start, 0x100000u);
	EXPECT_EQ((*ram)[1].size, 0x1fee0000u);
}

TEST_F(KernelRam, ALoopInTheListIsAnErrorNotAHang)
{
	// A loop through RAM entries meets a range it has seen...
	lay_out({{0x1000, 0x1fff, true}, {0x100000, 0x1fffff, false}}, kNodes);
	auto ram = vmcore::system_ram(*session, *types);
	ASSERT_FALSE(ram);
	EXPECT_NE(ram.error().message.find("overlaps or precedes"), std::string::npos) << ram.error().message;
	// ... one through other entries only ends at the bound.
	lay_out({{0x0, 0xfff, false}, {0xa0000, 0xbffff, false}}, kNodes);
	auto other = vmcore::system_ram(*session, *types);
	ASSERT_FALSE(other);
	EXPECT_NE(other.error().message.find("a loop?"), std::string::npos) << other.error().message;
}

TEST_F(KernelRam, RangesOutOfOrderOrPastThePhysicalLimitAreRefused)
{
	lay_out({{0x100000, 0x1fffff, true}, {0x1000, 0x1fff, true}});
	auto backwards = vmcore::system_ram(*session, *types);
	ASSERT_FALSE(backwards);
	EXPECT_NE(backwards.error().message.find("overlaps or precedes"), std::string::npos);
	lay_out({{0x1000, 1ull << 60, true}});
	auto huge = vmcore::system_ram(*session, *types);
	ASSERT_FALSE(huge);
	EXPECT_NE(huge.error().message.find("not a physical range"), std::string::npos);
}

TEST_F(KernelRam, NoRamOrAnUnreadableEntryIsAnErrorThatSaysSo)
{
	lay_out({{0x0, 0xfff, false}});
	auto none = vmcore::system_ram(*session, *types);
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("no System RAM"), std::string::npos);
	lay_out({{0x1000, 0x1fff, true}}, 0xffff888000900000ull);  // sibling points at unmapped memory
	auto unreadable = vmcore::system_ram(*session, *types);
	ASSERT_FALSE(unreadable);
	EXPECT_NE(unreadable.error().message.find("reading struct resource at 0xffff888000900000"), std::string::npos);
}

TEST_F(KernelRam, ANameRightAtTheEndOfMappedMemoryStillReads)
{
	constexpr std::uint64_t kTight = 0xffffffff82000ff5ull;  // 11 bytes before an unmapped page
	memory->map(kTight, {'S', 'y', 's', 't', 'e', 'm', ' ', 'R', 'A', 'M', 0});
	memory->map(kRoot, resource(0, ~0ull, 0, 0, kNodes));
	memory->map(kNodes, resource(0x1000, 0x1fff, kTight, 0, 0));
	auto ram = vmcore::system_ram(*session, *types);
	ASSERT_TRUE(ram) << ram.error().to_string();
	EXPECT_EQ(ram->size(), 1u);
}
