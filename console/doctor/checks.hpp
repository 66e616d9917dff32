// vtice doctor's checks: each mechanism of the hypervisor run once on this
// machine, judged by the kernel's own facilities (ftrace, CPUID, the
// kernel's syscalls as the workload makes them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "machine_facts.hpp"

namespace vtice::console::doctor {

enum class Verdict { Pass, Fail, NotApplicable };

struct CheckResult {
	std::string name;
	Verdict verdict = Verdict::NotApplicable;
	std::string details;
	double seconds = 0;
};

const char *verdict_name(Verdict v);  // "pass", "FAIL", "n/a"

struct DoctorOptions {
	std::string module;		// --module; "" = look for it
	std::string device = "/dev/vtice";
	std::string work_dir;		// the traces' output files
	int trace_timeout_s = 300;	// one openat's trace, armed to its end
};

// Runs the checks in order. progress gets a line as each starts; done gets
// each result as it is known. At the first failure, or after SIGINT, SIGTERM
// or SIGHUP (trace_common's catch_stop_signals), the module is unloaded (if
// doctor loaded it) and the checks left are reported as not run.
std::vector<CheckResult> run_checks(const DoctorOptions &options, const MachineFacts &facts,
				    const std::function<void(const std::string &)> &progress,
				    const std::function<void(const CheckResult &)> &done);

}  // namespace vtice::console::doctor
