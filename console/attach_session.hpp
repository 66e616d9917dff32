// What `vtice attach` and `vtice dump` share: the connection options,
// connecting and learning the kernel, and ending the session cleanly.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "btf/btf_types.hpp"
#include "kernel_setup.hpp"
#include "output.hpp"
#include "rsp/transport.hpp"
#include "session.hpp"

namespace vtice::console {

// The options every attaching command takes (see vtice attach --help).
std::vector<OptionSpec> attach_option_specs();

// A command line of one TARGET with the attach options and `extra`. With
// --help (help printed) or a usage error (said on stderr, prefixed by
// `who`), nothing, and `status` says what to exit with.
std::optional<ParsedArgs> parse_target_command(const char *who, int argc, char **argv,
					       const std::vector<OptionSpec> &extra, const char *help, int &status);

// "WHO: message" on stderr; the status, or 128+N after SIGTERM/SIGHUP.
int fail_command(const char *who, const Error &error, int status);

struct AttachOptions {
	int timeout_ms = -1;
	dbg::rsp::TransportOptions transport;
	dbg::KernelSetupOptions setup;
	std::string btf_file;
	std::optional<dbg::btf::Types> btf;
	bool image_search = true;
};

// Every option checked, and every file the user named read, before vtice
// connects: a bad one is a usage error that costs the target nothing.
// default_timeout_ms applies without --timeout.
Result<AttachOptions> check_attach_options(const ParsedArgs &args, int default_timeout_ms);

// Standard output, escaped; progress on standard error.
class StdOutput final : public dbg::Output {
public:
	void write(std::string_view text) override;
	void progress(std::string_view text) override;
	~StdOutput() override;

private:
	void end_progress();
	bool terminal_;
	bool pending_newline_ = false;
	std::chrono::steady_clock::time_point last_;

public:
	StdOutput();
};

struct Attached {
	std::unique_ptr<dbg::Session> session;
	dbg::StopInfo stop;
	Result<dbg::KernelInfo> info = make_error("not set up");
};

// Connects to TARGET, stops it and learns the kernel (symbols, KASLR, ORC).
// Ctrl-C during it skips what is left of the setup.
Result<Attached> attach_target(const std::string &target, AttachOptions &options, dbg::Output &out);

// "Attached to ...", the slide, where symbols came from; warnings on stderr
// prefixed by `who` ("vtice attach").
void print_attached(const char *who, dbg::Session &session, const Result<dbg::KernelInfo> &info, dbg::Output &out);

// The end of every session that did not detach or disconnect itself:
// breakpoints out, the target running (docs/hardening.md).
int end_session(const char *who, dbg::Session &session, dbg::Output &out, int status);

}  // namespace vtice::console
