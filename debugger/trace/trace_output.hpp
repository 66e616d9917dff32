// A TraceResult as vtice trace contents: written as a trace file, and
// rendered by the same path `vtice report` takes for that file.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "block_tracer.hpp"
#include "trace_render.hpp"

namespace vtice::dbg {

// Records (their clock: instructions retired), the text pages they ran
// through, and, with symbols, the functions they touched, so the file
// renders without a vmlinux.
trace::TraceData trace_contents(const TraceResult &trace, const SymbolSource *symbols, std::int64_t slide);

// The function graph, as `vtice report` renders the file written from it.
trace::RenderedTrace render_trace(const TraceResult &trace, const Symbolizer &symbolize,
				  const trace::DecodeOptions &options = {});

Result<void> write_trace_file(const std::string &path, const TraceResult &trace, const SymbolSource *symbols,
			      std::int64_t slide);

// The text pages the decoder walks for these records (TSC order): from the
// start and each branch target to the next branch, and each branch's own
// bytes, which say what kind of branch it was. A run longer than a few
// pages is left out: such records are not of one flow (a seam between
// CPUs, or a corrupt record), and the decoder says so itself.
std::set<std::uint64_t> code_pages(const std::vector<vtice_record> &records, std::uint64_t start_pc);

// The same text as byte ranges [start, end), for a reader that pays for
// each byte (the debug stub's serial line): ranges nearer each other than
// a read's own cost are one, and none crosses a page, so an unmapped page
// costs only its own ranges. Sorted, not overlapping.
struct CodeRange {
	std::uint64_t start = 0, end = 0;
};
std::vector<CodeRange> code_ranges(const std::vector<vtice_record> &records, std::uint64_t start_pc);

// One task's records from several CPUs (TSC order), made one stream on the
// CPU of the first: the decoder keeps one call stack per CPU, so a task
// that moved mid-call would otherwise start over there with "already
// running" frames. Returns how many times the task moved.
std::uint64_t as_one_timeline(std::vector<vtice_record> &records);

}  // namespace vtice::dbg
