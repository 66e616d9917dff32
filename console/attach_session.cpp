#include "attach_session.hpp"

#include <cstdio>
#include <iostream>

#include <sys/stat.h>
#include <unistd.h>

#include "btf/btf_source.hpp"
#include "kernel_cache.hpp"
#include "messages.hpp"
#include "rsp/rsp_target.hpp"
#include "stub_modules.hpp"
#include "subcommands.hpp"
#include "vtice/escape.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {

std::vector<OptionSpec> attach_option_specs()
{
	return {{"--symbols", true}, {"--btf", true}, {"--no-orc", false}, {"--no-image-search", false},
		{"--no-cache", false}, {"--timeout", true}, {"--baud", true}};
}

std::optional<ParsedArgs> parse_target_command(const char *who, int argc, char **argv,
					       const std::vector<OptionSpec> &extra, const char *help, int &status)
{
	auto specs = attach_option_specs();
	specs.insert(specs.end(), extra.begin(), extra.end());
	auto args = parse_args(argc, argv, specs);
	status = kExitUsage;
	if (!args) {
		fail_command(who, args.error(), kExitUsage);
		return std::nullopt;
	}
	if (args->help) {
		std::fputs(help, stdout);
		status = kExitOk;
		return std::nullopt;
	}
	if (args->positional.size() != 1) {
		fail_command(who, make_error("give exactly one TARGET (see --help)"), kExitUsage);
		return std::nullopt;
	}
	return std::move(*args);
}

int fail_command(const char *who, const Error &error, int status)
{
	eprintf("%s: %s\n", who, error.to_string().c_str());
	return interrupts::end_signal() ? 128 + interrupts::end_signal() : status;
}

StdOutput::StdOutput() : terminal_(isatty(STDERR_FILENO)), last_(std::chrono::steady_clock::now()) {}

// Everything the debugger prints may quote the target: escaped.
void StdOutput::write(std::string_view text)
{
	end_progress();
	write_escaped(stdout, text);
	std::fflush(stdout);
}

// On a terminal the line is redrawn in place; into a file or a pipe, a
// line a second at most, so a log keeps the story without the flood.
void StdOutput::progress(std::string_view text)
{
	std::string line = escape_text(text, Layout::Field);
	if (terminal_) {
		std::fprintf(stderr, "\r\033[K%s", line.c_str());
		pending_newline_ = true;
		return;
	}
	auto now = std::chrono::steady_clock::now();
	if (now - last_ < std::chrono::seconds(1))
		return;
	last_ = now;
	std::fprintf(stderr, "%s\n", line.c_str());
}

StdOutput::~StdOutput() { end_progress(); }

void StdOutput::end_progress()
{
	if (pending_newline_)
		std::fputc('\n', stderr);
	pending_newline_ = false;
}

// After SIGTERM or SIGHUP the cleanup has a budget: a stub that does not
// answer is given up, never waited for.
int end_session(const char *who, dbg::Session &session, dbg::Output &out, int status)
{
	if (interrupts::end_signal())
		interrupts::begin_cleanup();
	else
		interrupts::end_command();
	if (session.state() != dbg::SessionState::Detached) {
		if (auto r = session.detach(); !r) {
			eprintf("%s: could not detach: %s\n", who, r.error().to_string().c_str());
			status = kExitFailure;
		} else {
			out.print("%s\n", session.detached_line().c_str());
		}
	}
	return interrupts::end_signal() ? 128 + interrupts::end_signal() : status;
}

Result<AttachOptions> check_attach_options(const ParsedArgs &args, int default_timeout_ms)
{
	AttachOptions o;
	o.timeout_ms = default_timeout_ms;
	if (auto t = args.get("--timeout")) {
		auto ms = parse_timeout_ms("--timeout", *t);
		if (!ms)
			return ms.error();
		o.timeout_ms = *ms;
	}
	if (auto b = args.get("--baud")) {
		auto baud = parse_count("--baud", *b, 1, 4000000);
		if (!baud || !dbg::rsp::supported_baud(static_cast<unsigned>(*baud)))
			return make_error("--baud '" + *b + "': a serial speed such as 9600, 115200 or 921600");
		o.transport.baud = static_cast<unsigned>(*baud);
	}
	if (auto spec = dbg::rsp::parse_target_spec(args.positional[0]); !spec)
		return spec.error();
	o.setup.symbols_file = args.get("--symbols").value_or("");
	if (!o.setup.symbols_file.empty()) {
		// Read more than once (names, then ORC and BTF on demand).
		struct stat info;
		if (::stat(o.setup.symbols_file.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
			return make_error("--symbols: " + o.setup.symbols_file +
					  " is not a regular file (attach reads it more than once)");
		auto symbols = dbg::default_symbol_file_loader()(o.setup.symbols_file);
		if (!symbols)
			return make_error("--symbols: " + symbols.error().to_string());
		o.setup.symbols_loaded = std::move(*symbols);
	}
	o.btf_file = args.get("--btf").value_or("");
	if (!o.btf_file.empty()) {
		auto types = dbg::btf::load_file(o.btf_file);
		if (!types)
			return make_error("--btf: " + types.error().to_string());
		o.btf.emplace(std::move(*types));
	}
	o.setup.load_orc = !args.has("--no-orc");
	o.image_search = !args.has("--no-image-search");
	if (!args.has("--no-cache"))
		o.setup.cache_dir = dbg::default_cache_dir();
	return o;
}

Result<Attached> attach_target(const std::string &target, AttachOptions &options, dbg::Output &out)
{
	auto rsp = dbg::rsp::RspTarget::connect(target, {}, options.transport);
	if (!rsp)
		return rsp.error();
	Attached a;
	a.session = std::make_unique<dbg::Session>(std::move(*rsp));
	dbg::Session &session = *a.session;
	session.kernel_types().set_sources(options.btf_file, options.setup.symbols_file);
	if (options.btf)
		session.kernel_types().adopt(std::move(*options.btf));
	options.btf.reset();
	auto stop = session.attach();
	if (!stop)
		return stop.error();
	a.stop = *stop;
	// QEMU's gdbstub is a fast local socket: memory beats inflating images.
	if (options.setup.symbols_file.empty() && options.image_search && !session.target().features().physical_memory)
		options.setup.image_candidates = dbg::installed_kernel_images();
	a.info = dbg::setup_kernel(session, options.setup, out);
	use_modules_through(session, out);
	return a;
}

void print_attached(const char *who, dbg::Session &session, const Result<dbg::KernelInfo> &info, dbg::Output &out)
{
	for (const auto &warning : session.target().features().warnings)
		eprintf("%s: warning: %s\n", who, warning.c_str());
	out.print("Attached to %s (%zu registers, thread %d)\n", session.target().describe().c_str(),
		  session.target().layout().registers.size(), session.target().selected_thread());
	if (!info)
		return;
	if (info->slide)
		out.print("KASLR slide 0x%llx (IDT vector 0 -> 0x%llx)\n", static_cast<unsigned long long>(*info->slide),
			  static_cast<unsigned long long>(*info->divide_error_handler));
	out.print("%s\n%s\n", info->symbols.c_str(), info->orc.c_str());
	if (!info->cache.empty())
		out.print("kernel cache: %s\n", info->cache.c_str());
}

}  // namespace vtice::console
