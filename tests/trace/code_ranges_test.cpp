// The text a trace reader fetches over the stub's line (code_ranges): the
// golden fixtures must render the same from those bytes alone as from
// their whole text, and the ranges follow their rules (worked by hand).
#include <gtest/gtest.h>

#include "call_tree.hpp"
#include "fixture_builder.hpp"
#include "render.hpp"
#include "symbol_table.hpp"
#include "trace/trace_output.hpp"

namespace vtice {
namespace {

const std::string kFixtures = std::string(VTICE_TEST_DATA) + "/fixtures/";

vtice_record branch(std::uint64_t from, std::uint64_t to)
{
	vtice_record r{};
	r.type = VTICE_REC_BRANCH;
	r.u.branch.from = from;
	r.u.branch.to = to;
	return r;
}

using Spans = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

Spans spans_of(const std::vector<vtice_record> &records, std::uint64_t start_pc = 0)
{
	Spans spans;
	for (const dbg::CodeRange &r : dbg::code_ranges(records, start_pc))
		spans.emplace_back(r.start, r.end);
	return spans;
}

std::string graph_of(const test::Fixture &fixture, const std::vector<trace::CodeBlob> &code)
{
	trace::CodeMap map(code);
	trace::SymbolTable symbols(trace::read_trace(test::fixture_trace(fixture))->symbols);
	Disassembler disassembler;
	auto tree = trace::build_call_tree(fixture.records, map, disassembler, symbols.symbolizer());
	return trace::render_graph(tree, {fixture.tsc_khz, symbols.symbolizer()});
}

class CodeRanges : public testing::TestWithParam<std::string> {};

TEST_P(CodeRanges, TheRangesAloneRenderAsTheWholeText)
{
	std::string error;
	auto fixture = test::build_fixture(kFixtures + GetParam(), error);
	ASSERT_TRUE(fixture) << error;
	const auto &text = fixture->object.text;
	std::uint64_t base = fixture->object.text_address;
	std::vector<trace::CodeBlob> cut;
	std::uint64_t kept = 0;
	for (const dbg::CodeRange &r : dbg::code_ranges(fixture->records, 0)) {
		// A range past the text (a branch's 16 bytes at its end) reads what there is.
		std::uint64_t start = std::max(r.start, base), end = std::min(r.end, base + text.size());
		if (start >= end)
			continue;
		cut.push_back({start, {text.begin() + (start - base), text.begin() + (end - base)}});
		kept += end - start;
	}
	ASSERT_FALSE(cut.empty());
	EXPECT_EQ(graph_of(*fixture, cut), graph_of(*fixture, {{base, text}}));
	EXPECT_LE(kept, text.size());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CodeRanges, testing::Values("calls", "interrupts", "tailcall"));

TEST(CodeRanges, RunsFromEachTargetToTheNextBranchAndItsSixteenBytes)
{
	// The first branch's bytes (no run before it: no start), the run from
	// 0x1100 to the branch at 0x1120 and its bytes, then the run from 0x2000
	// to 0x3000's bytes, split where the page ends.
	std::vector<vtice_record> records{branch(0x1000, 0x1100), branch(0x1120, 0x2000), branch(0x3000, 0x9000)};
	EXPECT_EQ(spans_of(records), (Spans{{0x1000, 0x1010}, {0x1100, 0x1130}, {0x2000, 0x3000}, {0x3000, 0x3010}}));
}

TEST(CodeRanges, NearbyRangesAreOneAndFarOnesAreNot)
{
	// A gap of 32 bytes (0x1010 to 0x1030) joins; 33 (0x1040 to 0x1061) does not.
	std::vector<vtice_record> records{branch(0x1000, 0x9000'0000), branch(0x1030, 0x9000'0000),
					  branch(0x1061, 0x9000'0000)};
	EXPECT_EQ(spans_of(records), (Spans{{0x1000, 0x1040}, {0x1061, 0x1071}}));
}

TEST(CodeRanges, ARunTooLongForOneFlowKeepsOnlyTheBranch)
{
	// 64 pages and one byte from the target to the next branch: a seam, not a run.
	std::uint64_t far = 0x10000 + 64 * 4096 + 1;
	std::vector<vtice_record> records{branch(0x1000, 0x10000), branch(far, 0x1000)};
	EXPECT_EQ(spans_of(records), (Spans{{0x1000, 0x1010}, {far, far + 16}}));
}

TEST(CodeRanges, ARecordAtTheTopOfTheAddressSpaceWrapsToNothing)
{
	std::vector<vtice_record> records{branch(~0ull - 4, 0x1000)};
	EXPECT_TRUE(spans_of(records).empty());
	EXPECT_TRUE(spans_of({}, 0x1000).empty());
}

TEST(CodeRanges, PagesCoverEveryRange)
{
	std::vector<vtice_record> records{branch(0x1ff8, 0x5000), branch(0x5020, 0x7000)};
	auto pages = dbg::code_pages(records, 0x1f00);
	for (const dbg::CodeRange &r : dbg::code_ranges(records, 0x1f00))
		for (std::uint64_t a = r.start; a < r.end; a++)
			EXPECT_TRUE(pages.count(a & ~0xfffull)) << std::hex << a;
	EXPECT_EQ(pages, (std::set<std::uint64_t>{0x1000, 0x2000, 0x5000}));
}

}  // namespace
}  // namespace vtice
