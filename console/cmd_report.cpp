// vtice report: a trace file -> function_graph text, folded stacks or
// Perfetto JSON. A damaged trace is rendered up to the damage, and the
// error (with its offset) goes to stderr.
#include <cstdio>
#include <cstring>
#include <vector>

#include "args.hpp"
#include "report_symbols.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "symbol_table.hpp"
#include "trace_file.hpp"
#include "trace_render.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {

static const char kReportHelp[] =
	"usage: vtice report TRACE [--format graph|folded|perfetto] [--symbols SRC] [-o FILE]\n"
	"\n"
	"Decodes a vtice branch trace (.vtrace) into per-CPU call trees and renders them.\n"
	"\n"
	"  --format graph     ftrace function_graph-style text: CPU, duration, nested calls (default)\n"
	"  --format folded    FlameGraph folded stacks, weight = instructions (flamegraph.pl input)\n"
	"  --format perfetto  Chrome trace-event JSON; open it in ui.perfetto.dev\n"
	"  --symbols SRC      names from vmlinux, vmlinuz, System.map or a /proc/kallsyms copy,\n"
	"                     and code from a vmlinux, for what the trace does not embed\n"
	"  -o, --output FILE  write to FILE instead of standard output\n"
	"\n"
	"Branches are classified by disassembling the trace's CODE chunks (or the vmlinux).\n"
	"A damaged trace is rendered up to the damage; the error names its offset and the\n"
	"exit status is 1.\n";

using trace::Renderer;

static Renderer pick_renderer(const std::string &format)
{
	if (format == "graph")
		return trace::write_graph;
	if (format == "folded")
		return trace::write_folded;
	if (format == "perfetto")
		return trace::write_perfetto;
	return nullptr;
}

// The rendering goes out as it is made: into the output file (renamed into
// place at the end) or standard output.
class FileSink final : public trace::TextSink {
public:
	explicit FileSink(std::FILE *file) : file_(file) {}
	void write(std::string_view text) override
	{
		if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
			failed_ = true;
	}
	bool failed() const { return failed_; }

private:
	std::FILE *file_;
	bool failed_ = false;
};

struct ReportInputs {
	trace::TraceData data;
	trace::SymbolTable embedded;
	ExternalSymbols external;
};

static Symbolizer choose_symbolizer(const ReportInputs &in)
{
	if (!in.external.symbolize)
		return in.embedded.symbolizer();
	// The external file knows more names; the trace's own table fills its gaps.
	return [&in](std::uint64_t address) {
		auto hit = in.external.symbolize(address);
		return hit ? hit : in.embedded.lookup(address);
	};
}

static int render_report(ReportInputs &in, Renderer render, const std::optional<std::string> &output)
{
	std::optional<OutputFile> file;
	if (output) {
		auto opened = OutputFile::open(*output);
		if (!opened) {
			eprintf("vtice report: %s\n", opened.error().to_string().c_str());
			return kExitFailure;
		}
		file.emplace(std::move(*opened));
	}
	FileSink sink(file ? file->stream() : stdout);
	(void)trace::render_trace_to(in.data, in.external.code.get(), choose_symbolizer(in), render, sink);
	if (file) {
		if (auto written = file->commit(); !written) {
			eprintf("vtice report: %s\n", written.error().to_string().c_str());
			return kExitFailure;
		}
		return kExitOk;
	}
	if (sink.failed() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
		eprintf("vtice report: writing to standard output failed\n");
		return kExitFailure;
	}
	return kExitOk;
}

int cmd_report(int argc, char **argv)
{
	std::vector<char *> expanded = expand_output_option(argc, argv);
	auto args = parse_args(argc, expanded.data(), {{"--format", true}, {"--symbols", true}, {"--output", true}});
	if (!args) {
		eprintf("vtice report: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kReportHelp, stdout);
		return kExitOk;
	}
	if (args->positional.size() != 1) {
		eprintf("vtice report: expected one TRACE file (see vtice report --help)\n");
		return kExitUsage;
	}
	std::string format = args->get("--format").value_or("graph");
	Renderer render = pick_renderer(format);
	if (!render) {
		eprintf("vtice report: unknown --format '%s' (graph, folded or perfetto)\n", format.c_str());
		return kExitUsage;
	}
	const std::string &path = args->positional[0];
	// Never render over an input: the trace, or the symbols that name it.
	RunInputs::get().note_path(path);
	if (auto symbols = args->get("--symbols"))
		RunInputs::get().note_path(*symbols);
	if (auto output = args->get("--output"))
		if (auto ok = check_output_path(*output); !ok) {
			eprintf("vtice report: --output: %s\n", ok.error().to_string().c_str());
			return kExitUsage;
		}
	auto data = trace::read_trace_file(path);
	if (!data) {
		eprintf("vtice report: %s\n", data.error().to_string().c_str());
		return kExitFailure;
	}
	ReportInputs in{std::move(*data), {}, {}};
	in.embedded = trace::SymbolTable(in.data.symbols);
	if (auto symbols = args->get("--symbols")) {
		auto external = load_external_symbols(*symbols, in.data.header.kaslr_slide);
		if (!external) {
			eprintf("vtice report: --symbols: %s\n", external.error().to_string().c_str());
			return kExitFailure;
		}
		in.external = std::move(*external);
	}
	int status = render_report(in, render, args->get("--output"));
	if (in.data.error) {
		eprintf("vtice report: %s: %s; rendered the %zu records before it\n", path.c_str(),
			     in.data.error->to_string().c_str(), in.data.records.size());
		return kExitFailure;
	}
	return status;
}

}  // namespace vtice::console
