// Golden fixtures: assemble snippet.S, build records from branches.txt,
// write a trace file, read it back, decode, render, and compare with the
// hand-written expected.graph / expected.folded.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "call_tree.hpp"
#include "fixture_builder.hpp"
#include "render.hpp"
#include "symbol_table.hpp"

namespace vtice {
namespace {

const std::string kFixtures = std::string(VTICE_TEST_DATA) + "/fixtures/";

struct Rendered {
	std::string graph, folded, perfetto;
};

Rendered render_file(std::span<const std::uint8_t> bytes)
{
	auto data = trace::read_trace(bytes);
	EXPECT_TRUE(data.ok());
	if (!data)
		return {};
	EXPECT_TRUE(data->complete);
	EXPECT_FALSE(data->error) << data->error->to_string();
	trace::CodeMap code(data->code);
	trace::SymbolTable symbols(data->symbols);
	Disassembler disassembler;
	auto tree = trace::build_call_tree(data->records, code, disassembler, symbols.symbolizer());
	trace::RenderOptions options{data->header.tsc_khz, symbols.symbolizer()};
	return {trace::render_graph(tree, options), trace::render_folded(tree, options),
		trace::render_perfetto(tree, options)};
}

class Golden : public testing::TestWithParam<std::string> {};

TEST_P(Golden, RendersAsWrittenByHand)
{
	std::string dir = kFixtures + GetParam();
	std::string error;
	auto fixture = test::build_fixture(dir, error);
	ASSERT_TRUE(fixture) << error;
	auto rendered = render_file(test::fixture_trace(*fixture));
	EXPECT_EQ(rendered.graph, test::read_text_file(dir + "/expected.graph"));
	EXPECT_EQ(rendered.folded, test::read_text_file(dir + "/expected.folded"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden, testing::Values("calls", "interrupts", "tailcall"));

// The bundled demo trace (make demo) is the "calls" fixture written by
// vtice_make_fixture: it must still render to that fixture's expected graph.
TEST(Golden, BundledDemoTraceRenders)
{
	auto data = trace::read_trace_file(kFixtures + "demo.vtrace");
	ASSERT_TRUE(data.ok()) << data.error().to_string();
	std::vector<std::uint8_t> bytes;
	std::ifstream in(kFixtures + "demo.vtrace", std::ios::binary);
	bytes.assign(std::istreambuf_iterator<char>(in), {});
	EXPECT_EQ(render_file(bytes).graph, test::read_text_file(kFixtures + "calls/expected.graph"));
}

}  // namespace
}  // namespace vtice
