// The order of vtice doctor's checks and what each asks of the machine.
// Measurements live in measure.cpp, the traces in trace_checks.cpp.
#include "checks.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <optional>

#include "device.hpp"
#include "ftrace_oracle.hpp"
#include "hv_format.hpp"
#include "measure.hpp"
#include "module_loader.hpp"
#include "trace_checks.hpp"
#include "trace_common.hpp"

namespace vtice::console::doctor {

const char *verdict_name(Verdict v)
{
	switch (v) {
	case Verdict::Pass: return "pass";
	case Verdict::Fail: return "FAIL";
	default: return "n/a";
	}
}

namespace {

constexpr const char *kOracleFile = "/proc/version";
constexpr const char *kStubOnly =
	"through the debug stub only: load with debug_port= (a 16550 UART) and run vtice attach from a second "
	"machine on that line; make demo shows it in Bochs";

CheckResult pass(std::string details) { return {"", Verdict::Pass, std::move(details)}; }
CheckResult fail(std::string details) { return {"", Verdict::Fail, std::move(details)}; }
CheckResult not_applicable(std::string details) { return {"", Verdict::NotApplicable, std::move(details)}; }

// "70/71": one figure per CPU.
std::string join_cycles(const std::vector<double> &cycles)
{
	std::string out;
	for (double c : cycles)
		out += (out.empty() ? "" : "/") + std::to_string(static_cast<long long>(c));
	return out;
}

class Run {
public:
	Run(const DoctorOptions &options, const MachineFacts &facts,
	    const std::function<void(const std::string &)> &progress,
	    const std::function<void(const CheckResult &)> &done)
		: o_(options), facts_(facts), progress_(progress), done_(done)
	{
	}

	std::vector<CheckResult> run();

private:
	// Runs one check unless an earlier one failed or Ctrl-C came; times
	// it; reports it.
	void check(const std::string &name, const std::string &doing, const std::function<CheckResult()> &body);

	std::string stop(const std::string &why);
	void take_references();
	CheckResult vmx();
	CheckResult load();
	CheckResult exits_idle();
	CheckResult exits_armed();
	CheckResult syscall_trap();
	CheckResult trace(const char *mode, unsigned expected);
	Result<TraceOutcome> trace_openat_until_lossless();
	CheckResult lbr();
	CheckResult unload();

	// Loaded with these parameters now (reloading if needed); false if the
	// module was there before doctor, which never reloads someone's module.
	Result<bool> ensure_loaded(const std::string &params);

	const DoctorOptions &o_;
	const MachineFacts &facts_;
	const std::function<void(const std::string &)> &progress_;
	const std::function<void(const CheckResult &)> &done_;
	std::vector<CheckResult> results_;
	std::string stopped_;			// why no more checks run, "" while they do
	bool ours_ = false;			// doctor loaded the module
	bool found_loaded_ = false;		// it was loaded before doctor
	std::string module_path_, params_;
	std::optional<GetpidCost> bare_;	// measured before the load
	std::optional<std::string> oracle_;	// ftrace's graph of one openat
	std::string oracle_missing_;		// why there is none
	std::vector<unsigned> mechanisms_;	// VTICE_TRACE_* traced so far
};

void Run::check(const std::string &name, const std::string &doing, const std::function<CheckResult()> &body)
{
	CheckResult r;
	auto start = std::chrono::steady_clock::now();
	if (stopped_.empty() && stop_requested())
		stop("doctor was interrupted");
	if (!stopped_.empty()) {
		r = not_applicable("not run: " + stopped_);
	} else {
		if (!doing.empty())
			progress_(doing);
		r = body();
	}
	r.name = name;
	r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	if (r.verdict == Verdict::Fail && stopped_.empty())
		r.details += stop("doctor stopped after " + name + " failed");
	done_(r);
	results_.push_back(r);
}

// No check runs after this; the module goes if doctor loaded it. Returns
// what became of it, for the row that stopped the run.
std::string Run::stop(const std::string &why)
{
	stopped_ = why;
	if (!ours_ || !module_loaded())
		return "";
	progress_("unloading vtice: " + why);
	auto unloaded = unload_module();
	ours_ = !unloaded;
	return unloaded ? "; vtice unloaded" : "; and unloading it failed: " + unloaded.error().to_string();
}

CheckResult Run::vmx()
{
	if (facts_.vendor != "GenuineIntel")
		return fail("vtice needs Intel VT-x; this CPU is " + facts_.vendor);
	if (!facts_.vmx_at_boot)
		return fail("the kernel saw no VMX at boot: VT-x off in the firmware, or a parent hypervisor "
			    "without nested VMX (KVM: kvm_intel nested=1 and a host-passthrough CPU)");
	// Refused here rather than at the load: the oracle would take minutes
	// first (ftrace patches every function) for a load that cannot succeed.
	std::vector<std::string> missing = missing_vmx_features(facts_.vmx_flags);
	if (!missing.empty()) {
		std::string names;
		for (const std::string &m : missing)
			names += (names.empty() ? "" : ", ") + m;
		return fail("this CPU's VT-x lacks " + names + ", which vtice needs (the kernel's \"vmx flags\" in "
			    "/proc/cpuinfo); the module refuses to load here");
	}
	return pass(facts_.parent == "none (bare metal)" ? "VT-x present, bare metal"
							 : "VT-x present, nested under " + facts_.parent);
}

Result<bool> Run::ensure_loaded(const std::string &params)
{
	if (found_loaded_)
		return false;
	if (module_loaded() && params == params_)
		return true;
	if (module_loaded()) {
		auto unloaded = unload_module();
		if (!unloaded)
			return unloaded.error();
	}
	auto loaded = load_module(module_path_, params);
	if (!loaded)
		return loaded.error();
	ours_ = true;
	params_ = params;
	return true;
}

// At the module's defaults, or as it was found loaded.
CheckResult Run::load()
{
	found_loaded_ = module_loaded();
	if (!found_loaded_) {
		auto path = find_module(o_.module);
		if (!path)
			return fail(path.error().to_string());
		module_path_ = *path;
		auto loaded = ensure_loaded("");
		if (!loaded)
			return fail(loaded.error().to_string());
	}
	auto dev = open_device(o_.device, O_RDONLY);
	if (!dev)
		return fail(dev.error().to_string());
	auto status = read_status(*dev, o_.device);
	if (!status)
		return fail(status.error().to_string());
	std::string where = found_loaded_ ? "already loaded, used as found" : "loaded from " + module_path_;
	std::string counts = std::to_string(status->nr_virtualized) + " of " + std::to_string(facts_.online_cpus) +
			     " online CPUs virtualized";
	if (status->nr_virtualized != facts_.online_cpus)
		return fail(counts + " (" + where + "; dmesg says why)");
	return pass(counts + " (" + where + ")");
}

CheckResult Run::exits_idle()
{
	auto cost = measure_getpid(o_.device, std::nullopt);
	if (!cost)
		return fail(cost.error().to_string());
	std::string details = describe_cost(*cost) + (bare_ ? "; before the load " + describe_cycles(*bare_) : "");
	if (cost->exits_per_call > 0.01)
		return fail(details + ": a getpid should not leave the guest while nothing is armed");
	return pass(details);
}

CheckResult Run::exits_armed()
{
	auto cost = measure_getpid(o_.device, std::string("vtdr-nobody"));
	if (!cost)
		return fail(cost.error().to_string());
	std::string details = describe_cost(*cost) + " of an untraced task while the syscall trap is armed";
	if (cost->exits_per_call > 2.5)
		return fail(details + ": two are expected (its SYSCALL and its SYSRET)");
	return pass(details);
}

CheckResult Run::syscall_trap()
{
	auto trapped = check_syscall_trap(o_);
	return trapped ? pass(*trapped) : fail(trapped.error().to_string());
}

// mode "" is the module's default; expected is the mechanism mode gives
// here (0: unknown), so a mode already covered is not traced again.
CheckResult Run::trace(const char *mode, unsigned expected)
{
	if (!oracle_)
		return not_applicable("no oracle: " + oracle_missing_);
	for (unsigned m : mechanisms_)
		if (m == expected)
			return not_applicable(std::string("trace_mode=") + mode + " steps with " +
					      describe_mechanism(m) + " here: checked above");
	auto loaded = ensure_loaded(mode[0] ? std::string("trace_mode=") + mode : "");
	if (!loaded)
		return fail(loaded.error().to_string());
	if (!*loaded && mode[0])
		return not_applicable(std::string("the module was loaded before doctor, which does not reload it "
						  "with trace_mode=") + mode);
	auto traced = trace_openat_until_lossless();
	if (!traced)
		return fail(traced.error().to_string());
	mechanisms_.push_back(traced->mechanism);
	return traced->ok ? pass(traced->details) : fail(traced->details);
}

// A trace that lost records says nothing of the path it stepped: it met
// the known wait-for-the-reader bug (docs/tracing.md), which a long call
// (an interrupt's work stepped with it) can meet at the defaults. So a
// lossy trace is taken again, up to kTracesOnLoss times, and the verdict
// is the last trace's, naming the lossy ones before it. A lossless trace
// that differs from ftrace fails at once: that is the tracer's bug.
Result<TraceOutcome> Run::trace_openat_until_lossless()
{
	constexpr int kTracesOnLoss = 3;
	std::string lossy;
	for (int n = 1;; n++) {
		auto traced = trace_one_openat(o_, *oracle_, kOracleFile);
		if (!traced || !traced->lost_records || n == kTracesOnLoss) {
			if (traced && n > 1)
				traced->details += "; traced " + std::to_string(n) +
						   " times, the ones before lost records (" + lossy + ")";
			return traced;
		}
		lossy += (n > 1 ? "; " : "") + traced->size;
		progress_("the trace lost records (" + traced->size + "); tracing openat again, " +
			  std::to_string(n + 1) + " of " + std::to_string(kTracesOnLoss));
	}
}

CheckResult Run::lbr()
{
	auto dev = open_device(o_.device, O_RDONLY);
	if (!dev)
		return fail(dev.error().to_string());
	auto lbr = read_lbr(*dev, o_.device, static_cast<unsigned>(sched_getcpu()));
	if (!lbr)
		return fail(lbr.error().to_string());
	if (lbr->status != VTICE_LBR_OK)
		return not_applicable(lbr_status_text(*lbr));
	return pass("LBR recording (" + std::to_string(lbr->entries) + " entries, format " +
		    std::to_string(lbr->format) + "); its snapshots come at a crash stop (vtice hv lbr)");
}

CheckResult Run::unload()
{
	if (found_loaded_)
		return not_applicable("left loaded, as doctor found it");
	auto loaded = cpuid_cycles_per_cpu();
	auto unloaded = unload_module();
	if (!unloaded)
		return fail(unloaded.error().to_string());
	ours_ = false;
	auto now = cpuid_cycles_per_cpu();
	std::string details = "CPUID costs " + join_cycles(now) + " TSC cycles per CPU (" +
			      join_cycles(loaded) + " while loaded)";
	if (!cpuid_back_to_bare(loaded, now))
		return fail(details + ": a CPU still runs under the hypervisor");
	if (access(o_.device.c_str(), F_OK) == 0)
		return fail(o_.device + " is still there after the unload");
	return pass(details + "; " + o_.device + " gone");
}

// Before the load: getpid's cost on the bare kernel, and the oracle.
void Run::take_references()
{
	if (!module_loaded()) {
		progress_("measuring getpid before the load");
		auto bare = measure_getpid("", std::nullopt);
		if (bare)
			bare_ = *bare;
	}
	progress_("recording openat calls with the kernel's ftrace function_graph (the oracle)");
	auto oracle = ftrace_openats(kOracleFile);
	if (oracle)
		oracle_ = *oracle;
	else
		oracle_missing_ = oracle.error().to_string();
}

std::vector<CheckResult> Run::run()
{
	check("vmx", "looking for VT-x", [&] { return vmx(); });
	if (stopped_.empty())
		take_references();
	check("load", "loading vtice", [&] { return load(); });
	check("exits-idle", "counting VM exits per getpid, nothing armed", [&] { return exits_idle(); });
	check("syscall-trap", "vtice trace syscalls on a child's known syscalls", [&] { return syscall_trap(); });
	check("exits-armed", "counting VM exits per getpid, syscall trap armed", [&] { return exits_armed(); });
	check("trace", "vtice trace syscall openat, at the module's defaults", [&] { return trace("", 0); });
	// The default picks TF + BTF where the CPU honours BTF, else MTF; tf
	// steps with BTF where honoured.
	bool btf = !mechanisms_.empty() && mechanisms_[0] == VTICE_TRACE_BTF;
	check("trace-mtf", "the same trace with trace_mode=mtf", [&] { return trace("mtf", VTICE_TRACE_MTF); });
	check("trace-tf", "the same trace with trace_mode=tf",
	      [&] { return trace("tf", btf ? VTICE_TRACE_BTF : VTICE_TRACE_TF); });
	check("lbr", "asking for the LBR state", [&] { return lbr(); });
	check("hidden-breakpoint", "", [&] { return not_applicable(kStubOnly); });
	check("ept-watch", "", [&] { return not_applicable(kStubOnly); });
	check("unload", "unloading vtice", [&] { return unload(); });
	return results_;
}

}  // namespace

std::vector<CheckResult> run_checks(const DoctorOptions &options, const MachineFacts &facts,
				    const std::function<void(const std::string &)> &progress,
				    const std::function<void(const CheckResult &)> &done)
{
	return Run(options, facts, progress, done).run();
}

}  // namespace vtice::console::doctor
