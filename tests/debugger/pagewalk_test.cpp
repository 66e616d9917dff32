// The page walk over a synthetic page table whose entries are written here
// by hand from the SDM's formats (Vol. 3A §4.5, Tables 4-15..4-20).
#include <gtest/gtest.h>

#include <map>

#include "pagewalk.hpp"

using namespace vtice::dbg;
using vtice::Result;
using vtice::make_error;

namespace {

constexpr std::uint64_t P = 1, RW = 2, US = 4, PS = 0x80, XD = 1ull << 63;

struct Memory {
	std::map<std::uint64_t, std::uint64_t> words;
	PhysicalReader reader()
	{
		return [this](std::uint64_t pa) -> Result<std::uint64_t> {
			auto it = words.find(pa);
			return it == words.end() ? 0 : it->second;  // absent = zero (not present)
		};
	}
	void set(std::uint64_t table, unsigned index, std::uint64_t entry) { words[table + 8 * index] = entry; }
};

unsigned idx(std::uint64_t va, int level) { return (va >> (12 + 9 * level)) & 511; }

}  // namespace

TEST(PageWalk, FourKilobytePage)
{
	Memory m;
	std::uint64_t cr3 = 0x1000, va = 0xffff888000123456ull;
	m.set(0x1000, idx(va, 3), 0x2000 | P | RW);
	m.set(0x2000, idx(va, 2), 0x3000 | P | RW);
	m.set(0x3000, idx(va, 1), 0x4000 | P | RW);
	m.set(0x4000, idx(va, 0), 0xabcd000 | P | RW | XD);
	auto t = translate_address(cr3 | 0x18 /* PCD|PWT ignored */, va, m.reader());
	ASSERT_TRUE(t.ok()) << t.error().message;
	EXPECT_EQ(t->physical, 0xabcd456u);
	EXPECT_EQ(t->page_size, 4096u);
	EXPECT_TRUE(t->writable);
	EXPECT_FALSE(t->executable);
	EXPECT_FALSE(t->user);
}

TEST(PageWalk, TwoMegabyteAndOneGigabytePages)
{
	Memory m;
	std::uint64_t va = 0xffffffff81363fa0ull;
	m.set(0x1000, idx(va, 3), 0x2000 | P | RW | US);
	m.set(0x2000, idx(va, 2), 0x3000 | P | RW | US);
	// 2 MiB page at 0x1200000 with the PAT bit (12) set: must not leak into the address.
	m.set(0x3000, idx(va, 1), 0x1200000 | 0x1000 | P | PS | US);
	auto t = translate_address(0x1000, va, m.reader());
	ASSERT_TRUE(t.ok()) << t.error().message;
	EXPECT_EQ(t->physical, 0x1200000u + (va & 0x1fffff));
	EXPECT_EQ(t->page_size, 2u << 20);
	EXPECT_FALSE(t->writable);
	EXPECT_TRUE(t->user);

	std::uint64_t va2 = 0xffff888040000010ull;
	m.set(0x1000, idx(va2, 3), 0x5000 | P | RW);
	m.set(0x5000, idx(va2, 2), 0x80000000ull | P | RW | PS);
	auto g = translate_address(0x1000, va2, m.reader());
	ASSERT_TRUE(g.ok()) << g.error().message;
	EXPECT_EQ(g->physical, 0x80000010u);
	EXPECT_EQ(g->page_size, 1u << 30);
}

TEST(PageWalk, ErrorsNameLevelAndEntry)
{
	Memory m;
	std::uint64_t va = 0xffff888000000000ull;
	auto r = translate_address(0x1000, va, m.reader());
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("PML4 entry 273"), std::string::npos) << r.error().message;
	EXPECT_NE(r.error().message.find("not present"), std::string::npos);

	m.set(0x1000, idx(va, 3), 0x2000 | P | PS);
	r = translate_address(0x1000, va, m.reader());
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("reserved PS"), std::string::npos);

	r = translate_address(0x1000, 0x0000800000000000ull, m.reader());
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("not canonical"), std::string::npos);

	auto failing = [](std::uint64_t) -> Result<std::uint64_t> { return make_error("bus error"); };
	r = translate_address(0x1000, va, failing);
	ASSERT_FALSE(r.ok());
	EXPECT_NE(r.error().message.find("bus error"), std::string::npos);
}

TEST(PageWalk, FiveLevelPaging)
{
	Memory m;
	std::uint64_t va = 0xff11000000001000ull;  // canonical for 57 bits, not for 48
	m.set(0x1000, idx(va, 4), 0x2000 | P);
	m.set(0x2000, idx(va, 3), 0x3000 | P);
	m.set(0x3000, idx(va, 2), 0x4000 | P);
	m.set(0x4000, idx(va, 1), 0x5000 | P);
	m.set(0x5000, idx(va, 0), 0x77000 | P);
	EXPECT_FALSE(translate_address(0x1000, va, m.reader(), false).ok());
	auto t = translate_address(0x1000, va, m.reader(), true);
	ASSERT_TRUE(t.ok()) << t.error().message;
	EXPECT_EQ(t->physical, 0x77000u);
}
