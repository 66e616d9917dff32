#include "stub_tracer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "../hex.hpp"
#include "../task.hpp"
#include "trace_output.hpp"

namespace vtice::dbg {

namespace {

constexpr int kMaxForeignStops = 100000;

}  // namespace

StubTracer::StubTracer(Session &session, TraceOptions options)
	: session_(session), target_(session.target()), options_(std::move(options))
{
}

// The filter first: each Qbtrace:bts starts a trace of that task only.
Result<void> StubTracer::enable_all(std::uint64_t task)
{
	if (auto r = target_.monitor("btrace task " + hex(task)); !r)
		return r.error();
	auto threads = target_.threads();
	if (!threads)
		return threads.error();
	int home = target_.selected_thread();
	for (int thread : *threads) {
		if (auto r = target_.set_branch_trace(thread, true); !r) {
			disable_all();
			return r;
		}
		traced_threads_.push_back(thread);
	}
	session_.invalidate_registers();
	return target_.select_thread(home);
}

void StubTracer::disable_all()
{
	int home = target_.selected_thread();
	for (int thread : traced_threads_)
		(void)target_.set_branch_trace(thread, false);
	(void)target_.select_thread(home);
	session_.invalidate_registers();
}

// Other tasks pass the same return address (it is in the syscall entry
// code): only this task, with its stack back above the traced frame, ends it.
Result<void> StubTracer::run_to_return(std::uint64_t task, std::uint64_t return_address, std::uint64_t caller_sp)
{
	BreakpointSpec spec;
	spec.location = hex(return_address);
	auto id = session_.add_breakpoint(spec);
	if (!id)
		return id.error();
	TaskInspector tasks(session_);
	Result<void> out = make_error("trace: the traced function did not return after " +
				      std::to_string(kMaxForeignStops) + " stops in other tasks");
	for (int round = 0; round < kMaxForeignStops; round++) {
		auto stop = session_.cont(options_.stop_timeout_ms);
		if (!stop) {
			out = stop.error();
			break;
		}
		if (stop->breakpoint != *id) {
			out = make_error("trace: stopped elsewhere: " + stop->describe(session_.symbolizer()));
			break;
		}
		auto current = tasks.current_task();
		auto sp = session_.register_value("rsp");
		if (!current || !sp) {
			out = !current ? current.error() : sp.error();
			break;
		}
		if (*current == task && *sp >= caller_sp) {
			out = {};
			break;
		}
		result_.foreign_stops++;
	}
	(void)session_.delete_breakpoint(*id);
	return out;
}

// Every CPU's records, as one timeline of the task (TSC order).
Result<void> StubTracer::collect()
{
	for (int thread : traced_threads_) {
		auto records = target_.read_branch_trace(thread);
		if (!records)
			return records.error();
		result_.records.insert(result_.records.end(), records->begin(), records->end());
		if (options_.progress)
			options_.progress(0, result_.records.size());
	}
	std::stable_sort(result_.records.begin(), result_.records.end(),
			 [](const vtice_record &a, const vtice_record &b) { return a.tsc < b.tsc; });
	result_.migrations = as_one_timeline(result_.records);
	return {};
}

// Only the bytes the decoder walks: whole pages were most of a trace's
// time on a serial line (Bochs, hvtrace: 1.1 MB of hex, the command 155 s
// of wall time; with ranges 105 KB, 37 s; docs/tracing.md).
void StubTracer::read_code()
{
	std::vector<CodeRange> ranges = code_ranges(result_.records, result_.start_pc);
	std::uint64_t total = 0, done = 0;
	for (const CodeRange &r : ranges)
		total += r.end - r.start;
	for (const CodeRange &r : ranges) {
		auto bytes = session_.read_memory(r.start, r.end - r.start);
		if (bytes)
			result_.code[r.start] = std::move(*bytes);
		done += r.end - r.start;
		if (options_.code_progress)
			options_.code_progress(done, total);
	}
}

// The call that entered the traced function is known from its return
// address: recording it makes the function a call in the graph rather
// than a frame "already running" (as the block tracer does).
void StubTracer::record_entry_call(std::uint64_t entry, std::uint64_t return_address)
{
	std::vector<std::uint8_t> bytes;
	auto site = find_call_site(session_.disassembler(), return_address,
				   [&](std::uint64_t at) -> Result<std::span<const std::uint8_t>> {
					   auto read = session_.read_memory(at, return_address - at);
					   if (!read)
						   return read.error();
					   bytes = std::move(*read);
					   return std::span<const std::uint8_t>(bytes);
				   });
	if (!site)
		return;
	vtice_record r{};
	r.type = VTICE_REC_BRANCH;
	r.flags = VTICE_BRANCH_FROM_STEP;
	if (!result_.records.empty()) {
		r.cpu = result_.records.front().cpu;
		r.tsc = result_.records.front().tsc;
	}
	r.u.branch.from = *site;
	r.u.branch.to = entry;
	result_.records.insert(result_.records.begin(), r);
}

Result<TraceResult> StubTracer::trace_until_return()
{
	auto started = std::chrono::steady_clock::now();
	auto pc = session_.pc();
	auto sp = session_.register_value("rsp");
	if (!pc || !sp)
		return !pc ? pc.error() : sp.error();
	auto sym = session_.symbols() ? session_.symbols()->symbolize(*pc) : std::nullopt;
	if (!sym || sym->offset != 0)
		return make_error("trace: the hypervisor's tracer starts at a function's first instruction "
				  "(break on the function, or use 'trace syscall NAME')");
	auto word = session_.read_memory(*sp, 8);
	if (!word)
		return word.error();
	std::uint64_t return_address = 0;
	std::memcpy(&return_address, word->data(), 8);
	auto task = TaskInspector(session_).current_task();
	if (!task)
		return task.error();
	result_.start_pc = *pc;
	result_.end_pc = return_address;
	if (auto r = enable_all(*task); !r)
		return r.error();
	auto ran = run_to_return(*task, return_address, *sp + 8);
	disable_all();
	if (!ran)
		return ran.error();
	if (auto r = collect(); !r)
		return r.error();
	if (auto report = target_.monitor("btrace"))
		stub_report_ = *report;
	record_entry_call(*pc, return_address);
	read_code();
	result_.returned = true;
	result_.tsc_clock = true;
	result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	return std::move(result_);
}

}  // namespace vtice::dbg
