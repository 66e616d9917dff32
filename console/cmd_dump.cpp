// vtice dump: attach to a stopped or crashed kernel over RSP, write it to
// an ELF vmcore for crash and drgn, detach.
#include <cstdio>

#include "args.hpp"
#include "attach_session.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "vmcore/vmcore_dump.hpp"
#include "vtice/interrupts.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: vtice dump TARGET -o FILE [--filter zero,free] [attach options]\n"
	"\n"
	"Attaches to a GDB Remote Serial Protocol stub (QEMU -gdb, the vtice\n"
	"hypervisor's stub, kgdb), writes the stopped kernel to FILE as an ELF\n"
	"vmcore in kdump's layout, and detaches (the target runs on: a panicked\n"
	"kernel stays in its panic loop). crash and drgn open the file with the\n"
	"kernel's debug vmlinux (Debian: linux-image-VERSION-dbg):\n"
	"  crash /usr/lib/debug/boot/vmlinux-VERSION FILE\n"
	"  drgn -c FILE -s /usr/lib/debug/boot/vmlinux-VERSION\n"
	"\n"
	"The file holds one PRSTATUS note per CPU (its registers and the pid it\n"
	"runs), the kernel's own VMCOREINFO, and every range of System RAM of the\n"
	"kernel's iomem tree (read through its BTF). Memory is read physically\n"
	"where the stub can (QEMU), else through the kernel's direct map. It is\n"
	"written as FILE.part and renamed when complete.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE  where to write (required); an existing regular file\n"
	"                     is replaced, anything else (or an input of the run,\n"
	"                     such as the --symbols image) is refused\n"
	"  --filter zero      all-zero pages take no room in the file (ELF zero\n"
	"                     fill, as makedumpfile -d 1); readers see zeros\n"
	"  --filter free      leave out the buddy allocator's free pages, found in\n"
	"                     the kernel's own struct pages with the layout its\n"
	"                     VMCOREINFO gives (makedumpfile -d 16); readers report\n"
	"                     them missing. zero,free does both\n"
	"  --symbols, --btf, --no-image-search, --no-cache, --baud\n"
	"                     as for vtice attach (see vtice attach --help); the\n"
	"                     ORC tables are never read (--no-orc is implied)\n"
	"\n"
	"Progress (MiB, rate, time left) goes to standard error; Ctrl-C stops the\n"
	"dump, removes the partial file and detaches. Exit status: 0 when the\n"
	"file was written, 1 otherwise, 2 for a usage error.\n";

int fail(const Error &error, int status) { return fail_command("vtice dump", error, status); }

}  // namespace

int cmd_dump(int argc, char **argv)
{
	auto expanded = expand_output_option(argc, argv);
	int status = kExitOk;
	auto args = parse_target_command("vtice dump", static_cast<int>(expanded.size()), expanded.data(),
					 {{"--output", true}, {"--filter", true}}, kHelp, status);
	if (!args)
		return status;
	if (args->has("--timeout"))
		return fail(make_error("--timeout: a dump has no time limit; Ctrl-C stops it"), kExitUsage);
	dbg::vmcore::DumpOptions dump;
	dump.path = args->get("--output").value_or("");
	if (dump.path.empty())
		return fail(make_error("-o FILE is required (see --help)"), kExitUsage);
	if (auto f = args->get("--filter"))
		if (auto r = dbg::vmcore::parse_filter(*f, dump); !r)
			return fail(r.error(), kExitUsage);
	interrupts::install();
	auto options = check_attach_options(*args, -1);
	if (!options)
		return fail(options.error(), kExitUsage);
	// The dump unwinds nothing: no ORC tables over what may be a slow line.
	options->setup.load_orc = false;
	// After the options: --symbols and --btf are inputs it must not be.
	if (auto r = dbg::vmcore::check_dump_output(dump.path); !r)
		return fail(make_error("--output: " + r.error().message), kExitUsage);
	StdOutput out;
	interrupts::begin_command(-1);
	auto attached = attach_target(args->positional[0], *options, out);
	if (!attached)
		return fail(attached.error(), kExitFailure);
	dbg::Session &session = *attached->session;
	print_attached("vtice dump", session, attached->info, out);
	auto written = dbg::vmcore::dump_vmcore(session, dump, out);
	if (written)
		dbg::vmcore::print_dump_summary(out, dump, *written);
	else
		eprintf("vtice dump: %s\n", written.error().to_string().c_str());
	return end_session("vtice dump", session, out, written ? kExitOk : kExitFailure);
}

}  // namespace vtice::console
