#include "trace_output.hpp"

#include <algorithm>
#include <set>

namespace vtice::dbg {

namespace {

// The functions the trace touched, by the addresses its records name.
std::vector<trace::TraceSymbol> touched_functions(const TraceResult &t, const SymbolSource &symbols)
{
	std::set<std::string> seen;
	std::vector<trace::TraceSymbol> table;
	for (const auto &r : t.records)
		for (std::uint64_t a : {r.u.branch.from, r.u.branch.to})
			if (auto hit = symbols.symbolize(a); hit && seen.insert(hit->name).second)
				table.push_back({hit->start, 0, hit->name});
	return table;
}

}  // namespace

trace::TraceData trace_contents(const TraceResult &t, const SymbolSource *symbols, std::int64_t slide)
{
	trace::TraceData data;
	data.header.kaslr_slide = static_cast<std::uint64_t>(slide);
	data.header.clock = t.tsc_clock ? trace::TraceClock::Tsc : trace::TraceClock::Instructions;
	data.records = t.records;
	for (const auto &[address, bytes] : t.code)
		data.code.push_back({address, bytes});
	if (symbols)
		data.symbols = touched_functions(t, *symbols);
	return data;
}

trace::RenderedTrace render_trace(const TraceResult &t, const Symbolizer &symbolize,
				  const trace::DecodeOptions &options)
{
	return trace::render_trace(trace_contents(t, nullptr, 0), nullptr, symbolize, trace::write_graph, options);
}

Result<void> write_trace_file(const std::string &path, const TraceResult &t, const SymbolSource *symbols,
			      std::int64_t slide)
{
	trace::TraceData data = trace_contents(t, symbols, slide);
	trace::TraceWriter writer(data.header);
	writer.add_records(data.records);
	for (const auto &blob : data.code)
		writer.add_code(blob.address, blob.bytes);
	if (!data.symbols.empty())
		writer.add_symbols(data.symbols);
	if (t.recording)
		replay::add_recording(writer, *t.recording);
	auto bytes = writer.finish();
	return trace::write_file(path, bytes);
}

}  // namespace vtice::dbg

namespace vtice::dbg {

namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kMaxRun = 64 * kPage;
constexpr std::uint64_t kMaxInsn = 16;  // an instruction's 15 bytes, rounded
// A read costs its packets' framing and a round trip, about 20 bytes of
// memory on a 115,200-baud line (hex doubles each byte): a gap shorter
// than this is cheaper read than asked for twice.
constexpr std::uint64_t kMergeGap = 32;

// What the decoder walks, as code_pages explains: each branch's own bytes
// and the run from the last branch target to it.
template <typename Visit>
void walk_code(const std::vector<vtice_record> &records, std::uint64_t start_pc, Visit visit)
{
	std::uint64_t at = start_pc;
	for (const vtice_record &r : records) {
		if (r.type != VTICE_REC_BRANCH)
			continue;
		std::uint64_t from = r.u.branch.from;
		if (at && from >= at && from - at <= kMaxRun)
			visit(at, from + kMaxInsn);
		else
			visit(from, from + kMaxInsn);
		at = r.u.branch.to;
	}
}

}  // namespace

std::set<std::uint64_t> code_pages(const std::vector<vtice_record> &records, std::uint64_t start_pc)
{
	std::set<std::uint64_t> pages;
	walk_code(records, start_pc, [&](std::uint64_t start, std::uint64_t end) {
		for (std::uint64_t p = start & ~(kPage - 1); p < end; p += kPage)
			pages.insert(p);
	});
	return pages;
}

std::vector<CodeRange> code_ranges(const std::vector<vtice_record> &records, std::uint64_t start_pc)
{
	std::vector<CodeRange> wanted;
	walk_code(records, start_pc, [&](std::uint64_t start, std::uint64_t end) { wanted.push_back({start, end}); });
	std::sort(wanted.begin(), wanted.end(), [](const CodeRange &a, const CodeRange &b) { return a.start < b.start; });
	std::vector<CodeRange> merged;
	for (const CodeRange &r : wanted) {
		if (!merged.empty() && r.start <= merged.back().end + kMergeGap)
			merged.back().end = std::max(merged.back().end, r.end);
		else
			merged.push_back(r);
	}
	std::vector<CodeRange> ranges;
	for (const CodeRange &r : merged)
		for (std::uint64_t start = r.start; start < r.end;) {
			std::uint64_t page_end = (start & ~(kPage - 1)) + kPage;
			std::uint64_t end = std::min(r.end, page_end);
			ranges.push_back({start, end});
			start = end;
		}
	return ranges;
}

std::uint64_t as_one_timeline(std::vector<vtice_record> &records)
{
	if (records.empty())
		return 0;
	std::uint16_t home = records.front().cpu, last = home;
	std::uint64_t moves = 0;
	for (vtice_record &r : records) {
		if (r.cpu != last)
			moves++;
		last = r.cpu;
		r.cpu = home;
	}
	return moves;
}

}  // namespace vtice::dbg
