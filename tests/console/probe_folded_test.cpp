// vtice probe --folded: a kstack map as FlameGraph folded lines. The lines
// are worked out by hand from FlameGraph's format (frames root first,
// ';'-separated, a space and the count).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "checker.hpp"
#include "maps.hpp"
#include "probe_folded.hpp"

using namespace vtice;

namespace {

std::string folded(const probes::MapInfo &info, const probes::MapEntries &entries)
{
	char *text = nullptr;
	size_t len = 0;
	std::FILE *f = open_memstream(&text, &len);
	console::write_folded_map(f, info, entries);
	std::fclose(f);
	std::string out(text, len);
	std::free(text);
	return out;
}

probes::Cell counted(std::int64_t n)
{
	probes::Cell c;
	c.count = n;
	return c;
}

}  // namespace

TEST(ProbeFolded, StacksGoRootFirstAfterTheOtherKeys)
{
	probes::MapInfo info{"@", {probes::Type::String, probes::Type::Stack}, probes::MapKind::Count};
	probes::MapEntries entries;
	entries[{std::string("dd"), std::string("read_zero\nvfs_read\nksys_read")}] = counted(7);
	entries[{std::string("a b;c"), std::string("f;g\nh i")}] = counted(2);
	entries[{std::string("idle"), std::string("")}] = counted(1);
	entries[{std::string("gone"), std::string("x")}] = counted(0);	// no width: left out
	EXPECT_EQ(folded(info, entries), "a\\x20b\\x3bc;h\\x20i;f\\x3bg 2\n"
					 "dd;ksys_read;vfs_read;read_zero 7\n"
					 "idle;[no stack] 1\n");
}

TEST(ProbeFolded, OnlyMapsWithOneStackAndANumberFold)
{
	using probes::MapKind;
	using probes::Type;
	EXPECT_TRUE(console::foldable({"@", {Type::Stack}, MapKind::Count}));
	EXPECT_TRUE(console::foldable({"@", {Type::Int, Type::Stack}, MapKind::Sum}));
	EXPECT_FALSE(console::foldable({"@", {Type::String}, MapKind::Count}));
	EXPECT_FALSE(console::foldable({"@", {Type::Stack, Type::Stack}, MapKind::Count}));
	EXPECT_FALSE(console::foldable({"@", {Type::Stack}, MapKind::Hist}));
	EXPECT_FALSE(console::foldable({"@", {Type::Stack}, MapKind::String}));
	probes::MapEntries entries;
	entries[{std::string("x")}] = counted(3);
	EXPECT_EQ(folded({"@", {Type::String}, MapKind::Count}, entries), "");
}
