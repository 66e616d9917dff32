#include <cstdlib>

#include "../task.hpp"
#include "../trace/stub_tracer.hpp"
#include "../trace/trace_output.hpp"
#include "commands.hpp"
#include "vtice/write_output.hpp"

namespace vtice::dbg {

namespace {

struct TraceArgs {
	std::string syscall, comm, output;
	bool step = false, block = false, quiet = false, record = false;
};

Result<TraceArgs> parse(const std::vector<std::string> &args)
{
	TraceArgs t;
	for (std::size_t i = 0; i < args.size(); i++) {
		const std::string &a = args[i];
		auto value = [&](const char *name) -> Result<std::string> {
			if (i + 1 >= args.size())
				return make_error(std::string(name) + " needs a value");
			return args[++i];
		};
		if (a == "syscall") {
			auto v = value("syscall");
			if (!v)
				return v.error();
			t.syscall = *v;
		} else if (a == "--comm") {
			auto v = value("--comm");
			if (!v)
				return v.error();
			t.comm = *v;
		} else if (a == "-o" || a == "--output") {
			auto v = value("-o");
			if (!v)
				return v.error();
			t.output = *v;
		} else if (a == "--step") {
			t.step = true;
		} else if (a == "--record") {
			t.record = true;
			t.step = true;
		} else if (a == "--block") {
			t.block = true;
		} else if (a == "--quiet") {
			t.quiet = true;
		} else {
			return make_error("unknown trace argument '" + a + "'");
		}
	}
	if (t.record && t.block)
		return make_error("--record steps every instruction; it does not go with --block");
	if (t.record && t.output.empty())
		return make_error("--record needs -o FILE: the recording is for vtice replay and serve-replay");
	// Before any tracing: never over an input (the symbols, the commands).
	if (!t.output.empty())
		if (auto ok = check_output_path(t.output); !ok)
			return make_error("-o: " + ok.error().message);
	return t;
}

// Stops at the syscall's handler entry in a task named comm (any task if empty).
Result<void> run_to_syscall(CommandContext &ctx, const TraceArgs &t)
{
	Session &s = ctx.session;
	if (!s.symbols())
		return make_error("trace syscall needs symbols");
	std::string handler = "__x64_sys_" + t.syscall;
	if (!s.symbols()->lookup(handler))
		return make_error("no syscall handler '" + handler + "' in the symbols");
	BreakpointSpec spec;
	spec.location = handler;
	spec.temporary = false;
	auto id = s.add_breakpoint(spec);
	if (!id)
		return id.error();
	TaskInspector tasks(s);
	Result<void> out;
	for (int round = 0; round < 100000; round++) {
		auto stop = s.cont(ctx.run_timeout_ms);
		if (!stop) {
			out = stop.error();
			break;
		}
		if (stop->breakpoint != *id) {
			out = make_error("stopped elsewhere: " + stop->describe(s.symbolizer()));
			break;
		}
		if (t.comm.empty())
			break;
		auto task = tasks.current_task();
		auto name = task ? tasks.comm(*task) : Result<std::string>(task.error());
		if (!name) {
			out = make_error("--comm: " + name.error().message);
			break;
		}
		if (*name == t.comm)
			break;
	}
	(void)s.delete_breakpoint(*id);
	return out;
}

// The figures a user of --record weighs: how big, how much slower.
void report_recording(CommandContext &ctx, const TraceResult &traced)
{
	std::size_t steps = traced.recording->steps.size();
	double per_step = steps ? 1.0 / static_cast<double>(steps) : 0.0;
	ctx.out.print("record: %zu steps, %llu bytes of registers and memory (%.1f bytes per step), %.0f us per step "
		      "with its reads%s\n",
		      steps, static_cast<unsigned long long>(traced.recorded_bytes),
		      static_cast<double>(traced.recorded_bytes) * per_step, traced.seconds * 1e6 * per_step,
		      traced.unrecorded ? (", " + std::to_string(traced.unrecorded) +
					   " accesses the stub would not show (unknown in the replay)").c_str() : "");
}

Result<void> write_output(CommandContext &ctx, const TraceArgs &t, const TraceResult &traced)
{
	if (t.output.empty())
		return {};
	std::int64_t slide = ctx.session.kaslr_slide().value_or(0);
	if (auto r = write_trace_file(t.output, traced, ctx.session.symbols(), slide); !r)
		return r;
	ctx.out.print("trace: wrote %s (vtice report %s)\n", t.output.c_str(), t.output.c_str());
	return {};
}

Result<void> report_stub_trace(CommandContext &ctx, const TraceArgs &t, const TraceResult &traced,
			       const trace::RenderedTrace &rendering, const std::string &stub_report)
{
	std::size_t async = 0;
	for (const auto &r : traced.records)
		async += (r.flags & VTICE_BRANCH_ASYNC) != 0;
	ctx.out.print("trace: %llu instructions decoded into %zu calls, %zu taken branches "
		      "(%zu interrupts or exceptions), %llu stops in other tasks, %llu moves to another CPU "
		      "(shown as one timeline), %.3f s\n",
		      static_cast<unsigned long long>(rendering.instructions), rendering.calls,
		      traced.records.size(), async, static_cast<unsigned long long>(traced.foreign_stops),
		      static_cast<unsigned long long>(traced.migrations), traced.seconds);
	if (!stub_report.empty())
		ctx.out.write("stub: " + stub_report);
	if (auto r = write_output(ctx, t, traced); !r)
		return r;
	print_pc_line(ctx);
	return {};
}

}  // namespace

static Result<void> run(CommandContext &ctx, const std::vector<std::string> &args)
{
	auto t = parse(args);
	if (!t)
		return t.error();
	if (!t->syscall.empty()) {
		if (auto r = run_to_syscall(ctx, *t); !r)
			return r;
	}
	auto start = ctx.session.pc();
	if (!start)
		return start.error();
	bool by_stub = ctx.session.target().features().branch_trace && !t->step && !t->block;
	ctx.out.print("Tracing from %s until it returns (%s)\n",
		      format_address(*start, ctx.session.symbolizer()).c_str(),
		      by_stub ? "the hypervisor records every branch" :
		      t->record ? "single-stepping every instruction, recording registers and memory" :
		      t->step ? "single-stepping every instruction" : "block stepping");
	TraceOptions options;
	options.single_step = t->step;
	options.record = t->record;
	// Every CPU is stepped while the hypervisor traces: the run to the
	// return may take as long as any other run.
	if (by_stub)
		options.stop_timeout_ms = ctx.run_timeout_ms;
	options.progress = [&ctx, by_stub](std::uint64_t insns, std::uint64_t branches) {
		// The stub's records are counted as they are read; instructions come from decoding them later.
		ctx.out.progress(by_stub ? "trace: " + std::to_string(branches) + " records read from the stub" :
					   "trace: " + std::to_string(insns) + " instructions, " +
						   std::to_string(branches) + " branches");
	};
	options.code_progress = [&ctx](std::uint64_t done, std::uint64_t total) {
		ctx.out.progress("trace: reading the text the records ran through: " + std::to_string(done) +
				 " of " + std::to_string(total) + " bytes");
	};
	Result<TraceResult> traced = make_error("");
	std::string stub_report;
	if (by_stub) {
		StubTracer tracer(ctx.session, options);
		traced = tracer.trace_until_return();
		stub_report = tracer.stub_report();
	} else {
		BlockTracer tracer(ctx.session, options);
		traced = tracer.trace_until_return();
	}
	if (!traced)
		return traced.error();
	trace::RenderedTrace rendering = render_trace(*traced, ctx.session.symbolizer());
	if (!t->quiet)
		ctx.out.write(rendering.text);
	if (by_stub)
		return report_stub_trace(ctx, *t, *traced, rendering, stub_report);
	ctx.out.print("trace: %llu instructions (%llu decoded into %zu calls), %llu branches, %zu taken, "
		      "%llu steps, %llu continues, %llu interruptions skipped, %.3f s\n",
		      static_cast<unsigned long long>(traced->instructions),
		      static_cast<unsigned long long>(rendering.instructions), rendering.calls,
		      static_cast<unsigned long long>(traced->branches), traced->records.size(),
		      static_cast<unsigned long long>(traced->steps), static_cast<unsigned long long>(traced->continues),
		      static_cast<unsigned long long>(traced->interruptions), traced->seconds);
	if (traced->recording)
		report_recording(ctx, *traced);
	if (auto r = write_output(ctx, *t, *traced); !r)
		return r;
	print_pc_line(ctx);
	return {};
}

const Command kCmdTrace = {
	"trace", {}, "trace [syscall NAME [--comm COMM]] [--step|--block|--record] [-o FILE] [--quiet]",
	"branch-trace until the current function (or one syscall) returns",
	"Records the branch trace of the current task from here until the running\n"
	"function returns, and prints it as a function graph. With 'syscall NAME'\n"
	"it first runs to __x64_sys_NAME (in a task named COMM when --comm is\n"
	"given) and traces that whole syscall.\n"
	"On the vtice hypervisor stub, the hypervisor records the branches itself\n"
	"(it steps the task with the monitor trap flag): interrupts and exceptions\n"
	"show as their own subtrees, and the task is followed across CPUs.\n"
	"Elsewhere, or with --block, block stepping: each basic block is decoded, the target runs to the\n"
	"block's final branch (a breakpoint), and only that branch is stepped, so\n"
	"straight-line code is never single-stepped. Interrupts and other tasks\n"
	"that stop on the way are skipped and counted. --step single-steps every\n"
	"instruction instead (slower; the reference count). -o writes a vtice trace\n"
	"file for 'vtice report'.\n"
	"--record (needs -o) single-steps and also keeps, per step, the registers\n"
	"it changed and the memory it read and wrote, before and after: the file\n"
	"then opens in 'vtice replay' and 'vtice serve-replay' (stock gdb's\n"
	"reverse-stepi, reverse-continue, reverse-finish over the path).\n",
	run,
};

}  // namespace vtice::dbg
