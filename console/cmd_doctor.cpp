// vtice doctor: what works on this machine, proven on this machine. Each
// mechanism of the hypervisor runs once, judged by the kernel's own
// facilities; the checks live in doctor/, this file is the command.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "args.hpp"
#include "doctor/checks.hpp"
#include "doctor/machine_facts.hpp"
#include "doctor/module_loader.hpp"
#include "doctor/report.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "trace_common.hpp"
#include "vtice/write_output.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: sudo vtice doctor [--module KO] [--json FILE] [--work-dir DIR]\n"
	"                         [--timeout SECONDS] [--device PATH]\n"
	"\n"
	"Runs each mechanism of the vtice hypervisor once on this machine and\n"
	"judges it by the kernel's own facilities, then prints a table: pass,\n"
	"FAIL, or n/a with the reason. Nothing here has been proven on your CPU\n"
	"until this says so.\n"
	"  vmx               VT-x present (and the hypervisor below, if nested)\n"
	"  load              vtice.ko loads and virtualizes every online CPU\n"
	"  exits-idle        VM exits and TSC cycles per getpid, nothing armed\n"
	"                    (and the cycles before the load)\n"
	"  syscall-trap      vtice trace syscalls streams a child's 5 getppid\n"
	"                    calls, with the kernel's answers\n"
	"  exits-armed       the same cost while the syscall trap is armed\n"
	"  trace             vtice trace syscall openat on a child, at the\n"
	"                    module's defaults: the graph must hold the calls of\n"
	"                    the kernel's ftrace function_graph of the same openat\n"
	"                    (>= 97 %, in order) and lose no record\n"
	"  trace-mtf         the same, reloaded with trace_mode=mtf (monitor trap\n"
	"  trace-tf          flag) and trace_mode=tf (TF steps, with BTF where the\n"
	"                    CPU honours it), where they differ from the default\n"
	"  lbr               whether the CPU's LBR is recorded\n"
	"  hidden-breakpoint, ept-watch  n/a here: they work through the debug\n"
	"                    stub on a serial line (make demo shows them)\n"
	"  unload            rmmod, and every CPU's CPUID costs at most half what it did\n"
	"                    loaded (each CPUID exits to a hypervisor)\n"
	"Takes about a minute on a real machine. If the module is loaded already\n"
	"it is used as found and left loaded. At the first failure, or at\n"
	"Ctrl-C, doctor unloads what it loaded, stops and still prints (and\n"
	"writes) its report: the machine is left as it was.\n"
	"\n"
	"options:\n"
	"  --module KO       the module file (default: the installed one under\n"
	"                    /lib/modules/RELEASE, else ../hypervisor/vtice.ko\n"
	"                    beside this binary)\n"
	"  --json FILE       also write the report as JSON, to attach to a bug\n"
	"  --work-dir DIR    where the traces go (default: a new directory in\n"
	"                    /tmp, named at the end)\n"
	"  --timeout S       the longest one openat trace may take (default 300)\n"
	"  --device PATH     the vtice device (default /dev/vtice)\n"
	"\n"
	"Exit status: 0 if nothing failed, 1 if a check failed, 2 on bad usage.\n";

int usage_error(const Error &e)
{
	eprintf("vtice doctor: %s\n", e.to_string().c_str());
	return kExitUsage;
}

Result<std::string> make_work_dir(const std::optional<std::string> &given)
{
	if (given) {
		if (mkdir(given->c_str(), 0700) != 0 && errno != EEXIST)
			return Error{*given + ": " + std::strerror(errno)};
		struct stat st{};
		if (stat(given->c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
			return Error{*given + ": not a directory"};
		return *given;
	}
	char templ[] = "/tmp/vtice-doctor-XXXXXX";
	if (!mkdtemp(templ))
		return Error{std::string("mkdtemp /tmp: ") + std::strerror(errno)};
	return std::string(templ);
}

}  // namespace

int cmd_doctor(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--module", true}, {"--json", true}, {"--work-dir", true},
					    {"--timeout", true}, {"--device", true}});
	if (!args)
		return usage_error(args.error());
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (!args->positional.empty())
		return usage_error(Error{"unexpected argument '" + args->positional[0] + "' (see --help)"});
	doctor::DoctorOptions options;
	if (auto module = args->get("--module")) {
		auto found = doctor::find_module(*module);
		if (!found)
			return usage_error(found.error());
		options.module = *found;
	}
	options.device = args->get("--device").value_or(options.device);
	if (auto timeout = args->get("--timeout")) {
		auto seconds = parse_count("--timeout", *timeout, 10, 86400);
		if (!seconds)
			return usage_error(seconds.error());
		options.trace_timeout_s = static_cast<int>(*seconds);
	}
	auto json = args->get("--json");
	if (json) {
		if (auto ok = check_output_path(*json); !ok)
			return usage_error(ok.error());
	}
	if (geteuid() != 0)
		return usage_error(Error{"root only: doctor loads the module and drives ftrace (sudo vtice doctor)"});
	auto work = make_work_dir(args->get("--work-dir"));
	if (!work)
		return usage_error(work.error());
	options.work_dir = *work;

	catch_stop_signals();  // Ctrl-C: the running check ends, the module goes, the report is written
	doctor::MachineFacts facts = doctor::read_machine_facts();
	std::printf("vtice doctor %s\n%s\n", VTICE_VERSION, doctor::format_facts(facts).c_str());
	std::fflush(stdout);
	auto results = doctor::run_checks(
		options, facts, [](const std::string &doing) { eprintf("vtice doctor: %s ...\n", doing.c_str()); },
		[](const doctor::CheckResult &r) {
			std::fputs(doctor::format_check(r).c_str(), stdout);
			std::fflush(stdout);
		});
	std::printf("\n%s", doctor::format_summary(results).c_str());
	std::printf("traces and their output: %s\n", options.work_dir.c_str());
	if (json) {
		std::string text = doctor::to_json(facts, results, VTICE_VERSION);
		auto written = write_output_file(*json, std::span(reinterpret_cast<const std::uint8_t *>(text.data()),
								  text.size()));
		if (!written) {
			eprintf("vtice doctor: %s\n", written.error().to_string().c_str());
			return kExitFailure;
		}
		std::printf("report: %s\n", json->c_str());
	}
	for (const auto &r : results)
		if (r.verdict == doctor::Verdict::Fail)
			return exit_status(kExitFailure);
	return exit_status(kExitOk);
}

}  // namespace vtice::console
