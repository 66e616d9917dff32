// Chrome trace-event JSON, which Perfetto and chrome://tracing load: one
// complete ("X") event per call, tid = CPU, times in microseconds from the
// first record.
#include <cstdio>

#include "render.hpp"
#include "vtice/json_string.hpp"

namespace vtice::trace {

namespace {

class PerfettoWriter {
public:
	PerfettoWriter(const CallTree &tree, const RenderOptions &options, TextSink &sink)
		: tree_(tree), options_(options), out_(sink)
	{
	}
	void run();

private:
	// A record stamped before the first (a clock that went back, a damaged
	// trace) is placed at the start rather than wrapped around.
	double micros(std::uint64_t tsc) const
	{
		double ticks = tsc > tree_.first_tsc ? static_cast<double>(tsc - tree_.first_tsc) : 0.0;
		// Unknown frequency, or an instruction clock: one tick (or one
		// instruction) is shown as one nanosecond.
		return options_.tsc_khz ? ticks * 1000.0 / static_cast<double>(options_.tsc_khz) : ticks / 1000.0;
	}
	void event(const std::string &body);
	void node_event(const CallNode &node);

	const CallTree &tree_;
	const RenderOptions &options_;
	SinkBuffer out_;
	bool first_ = true;
};

void PerfettoWriter::event(const std::string &body)
{
	out_ += first_ ? "\n  {" : ",\n  {";
	out_ += body;
	out_ += "}";
	first_ = false;
}

void PerfettoWriter::node_event(const CallNode &node)
{
	char times[160];
	std::string name = json_string(node_name(node, options_.symbolize));
	if (node.kind == NodeKind::Lost) {
		std::snprintf(times, sizeof(times), "\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,"
			      "\"args\":{\"records\":%llu}", node.cpu, micros(node.start_tsc),
			      static_cast<unsigned long long>(node.lost));
		event("\"name\":\"lost records\"," + std::string(times));
		return;
	}
	const char *category = node.kind == NodeKind::Interrupt ? "interrupt"
			       : node.kind == NodeKind::Partial ? "partial"
			       : node.tail_call ? "tail-call" : "call";
	// A call whose end is stamped before its start: its time went back (a
	// clock from two CPUs, a damaged trace). Perfetto takes no negative
	// duration; it is shown as 0 and flagged.
	bool backwards = node.end_tsc < node.start_tsc;
	double duration = backwards ? 0.0 : micros(node.end_tsc) - micros(node.start_tsc);
	std::snprintf(times, sizeof(times), "\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,"
		      "\"dur\":%.3f,\"args\":{\"insns\":%llu%s}", category, node.cpu, micros(node.start_tsc),
		      duration < 0 ? 0.0 : duration, static_cast<unsigned long long>(node.self_insns),
		      backwards ? ",\"time_went_back\":true" : "");
	event("\"name\":" + name + "," + times);
}

void PerfettoWriter::run()
{
	out_ += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
	const char *process = options_.clock == TraceClock::Instructions
				      ? "vtice branch trace (time axis: 1 ns = 1 instruction)"
				      : "vtice branch trace";
	event(std::string("\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"") + process +
	      "\"}");
	for (std::uint32_t root : tree_.roots) {
		std::uint16_t cpu = tree_.nodes[root].cpu;
		event("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(cpu) +
		      ",\"args\":{\"name\":\"cpu " + std::to_string(cpu) + "\"}");
		walk_tree(tree_, root, [&](std::uint32_t index, int, bool leaving) {
			if (!leaving)
				node_event(tree_.nodes[index]);
		});
	}
	out_ += "\n]}\n";
}

}  // namespace

void write_perfetto(const CallTree &tree, const RenderOptions &options, TextSink &sink)
{
	PerfettoWriter(tree, options, sink).run();
}

}  // namespace vtice::trace
