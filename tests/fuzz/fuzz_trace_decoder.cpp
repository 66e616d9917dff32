// libFuzzer target for the decoder layers behind the file reader, which
// the CRCs otherwise shield from most mutations: the input is a code blob
// and raw records whose addresses are folded into (and just past) that
// blob, so classification, block counting, the call tree and the renderers
// all see hostile but reachable input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "call_tree.hpp"
#include "code_source.hpp"
#include "render.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	constexpr std::uint64_t kBase = 0xffffffff81000000ull;
	if (size < 2)
		return 0;
	std::size_t code_len = std::min<std::size_t>(data[0] | (data[1] << 8), size - 2);
	std::vector<std::uint8_t> code(data + 2, data + 2 + code_len);
	std::vector<vtice_record> records((size - 2 - code_len) / sizeof(vtice_record));
	if (!records.empty())
		std::memcpy(records.data(), data + 2 + code_len, records.size() * sizeof(vtice_record));
	std::uint64_t span = code_len + 16;
	for (vtice_record &r : records) {
		r.cpu %= 4;
		if (r.type == VTICE_REC_BRANCH) {
			r.u.branch.from = kBase + r.u.branch.from % span;
			r.u.branch.to = kBase + r.u.branch.to % span;
		}
	}
	vtice::trace::CodeMap map(std::vector<vtice::trace::CodeBlob>{{kBase, code}});
	vtice::Disassembler disassembler;
	// Pretend a function starts every 32 bytes, so tail-call detection runs too.
	vtice::Symbolizer functions = [&](std::uint64_t address) -> std::optional<vtice::SymbolHit> {
		if (address < kBase || address >= kBase + span)
			return std::nullopt;
		std::uint64_t start = address & ~31ull;
		return vtice::SymbolHit{"f", start, address - start};
	};
	auto tree = vtice::trace::build_call_tree(records, map, disassembler, functions);
	vtice::trace::RenderOptions options{records.empty() ? 0 : records[0].tsc % 4000000, functions};
	vtice::trace::render_graph(tree, options);
	vtice::trace::render_folded(tree, options);
	vtice::trace::render_perfetto(tree, options);
	return 0;
}
