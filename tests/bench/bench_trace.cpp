// btf-trace throughput: records already in memory -> call tree, without and
// with function symbols (the goal is >= 20 M branch records/s/core),
// trace-file reading, and each renderer.
// Figures and the command line are in docs/btf-trace.md.
#include <benchmark/benchmark.h>

#include <cstring>

#include "call_tree.hpp"
#include "record_builders.hpp"
#include "code_source.hpp"
#include "render.hpp"
#include "trace_file.hpp"

namespace {

using namespace vtice;
using namespace vtice::trace;

constexpr std::uint64_t kBase = 0xffffffff81000000ull;
constexpr int kFunctions = 32;
constexpr std::uint64_t kStride = 64;

// Function i: 4 nops, call function i+1, 2 nops, ret; the last one is a leaf
// (4 nops, ret); function 0 loops back to its call with a jmp. One sweep of
// the chain is 31 calls, 31 returns and a jmp, 63 records.
std::vector<std::uint8_t> make_code()
{
	std::vector<std::uint8_t> code(kFunctions * kStride, 0xcc);
	for (int i = 0; i < kFunctions; i++) {
		std::uint8_t *f = &code[i * kStride];
		f[0] = f[1] = f[2] = f[3] = 0x90;
		if (i == kFunctions - 1) {
			f[4] = 0xc3;
			continue;
		}
		std::int32_t rel = static_cast<std::int32_t>(kStride - 9);  // to function i+1
		f[4] = 0xe8;
		std::memcpy(&f[5], &rel, 4);
		f[9] = 0x90;
		f[10] = 0x90;
		f[11] = 0xc3;
		if (i == 0) {
			f[9] = 0xeb;  // jmp back to the call: rel8 = 4 - 11
			f[10] = static_cast<std::uint8_t>(-7);
		}
	}
	return code;
}

vtice_record branch(std::uint64_t tsc, std::uint64_t from, std::uint64_t to)
{
	return vtice::test::branch_record(0, tsc, from, to);
}

std::vector<vtice_record> make_records(std::size_t count)
{
	std::vector<vtice_record> out;
	out.reserve(count + 2 * kFunctions);
	std::uint64_t tsc = 0;
	auto fn = [](int i) { return kBase + i * kStride; };
	while (out.size() < count) {
		for (int i = 0; i < kFunctions - 1; i++)
			out.push_back(branch(tsc += 7, fn(i) + 4, fn(i + 1)));
		out.push_back(branch(tsc += 7, fn(kFunctions - 1) + 4, fn(kFunctions - 2) + 9));
		for (int i = kFunctions - 2; i >= 1; i--)
			out.push_back(branch(tsc += 7, fn(i) + 11, fn(i - 1) + 9));
		out.push_back(branch(tsc += 7, fn(0) + 9, fn(0) + 4));
	}
	out.resize(count);
	return out;
}

struct Inputs {
	std::vector<std::uint8_t> code = make_code();
	std::vector<vtice_record> records = make_records(1 << 20);
	CodeMap map{std::vector<CodeBlob>{{kBase, code}}};
	Disassembler disassembler;
};

Inputs &inputs()
{
	static Inputs in;
	return in;
}

// Each kStride-aligned function as a symbol, function_N.
std::optional<SymbolHit> function_at(std::uint64_t address)
{
	std::uint64_t start = address & ~(kStride - 1);
	return SymbolHit{"function_" + std::to_string((start - kBase) / kStride), start, address - start};
}

void decode_to_call_tree(benchmark::State &state, const Symbolizer &functions)
{
	Inputs &in = inputs();
	std::size_t nodes = 0;
	for (auto _ : state) {
		CallTree tree = build_call_tree(in.records, in.map, in.disassembler, functions);
		nodes = tree.nodes.size();
		benchmark::DoNotOptimize(tree.nodes.data());
	}
	state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * in.records.size()));
	state.counters["nodes"] = static_cast<double>(nodes);
}

void BM_DecodeToCallTree(benchmark::State &state) { decode_to_call_tree(state, {}); }
BENCHMARK(BM_DecodeToCallTree)->Unit(benchmark::kMillisecond);

// The same decode with function symbols, as report has them from a vmlinux:
// thunk and tail-call checks on every branch. Named so that the filter
// "Decode" still selects the plain decode alone.
void BM_CallTreeWithSymbols(benchmark::State &state) { decode_to_call_tree(state, function_at); }
BENCHMARK(BM_CallTreeWithSymbols)->Unit(benchmark::kMillisecond);

void BM_ReadTraceFile(benchmark::State &state)
{
	Inputs &in = inputs();
	TraceWriter writer(TraceHeader{});
	writer.add_code(kBase, in.code);
	writer.add_records(in.records);
	std::vector<std::uint8_t> file = writer.finish();
	for (auto _ : state) {
		auto data = read_trace(file);
		benchmark::DoNotOptimize(data->records.data());
	}
	state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * in.records.size()));
	state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * file.size()));
}
BENCHMARK(BM_ReadTraceFile)->Unit(benchmark::kMillisecond);

template <std::string (*Render)(const CallTree &, const RenderOptions &)>
void BM_Render(benchmark::State &state)
{
	Inputs &in = inputs();
	static const CallTree tree = build_call_tree(in.records, in.map, in.disassembler);
	RenderOptions options{1000000, function_at};
	std::size_t bytes = 0;
	for (auto _ : state) {
		std::string out = Render(tree, options);
		bytes = out.size();
		benchmark::DoNotOptimize(out.data());
	}
	state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * tree.nodes.size()));
	state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_Render<render_graph>)->Name("BM_RenderGraph")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render<render_folded>)->Name("BM_RenderFolded")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Render<render_perfetto>)->Name("BM_RenderPerfetto")->Unit(benchmark::kMillisecond);

}  // namespace
