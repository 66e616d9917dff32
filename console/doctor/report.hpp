// vtice doctor's results as a table for the terminal and as the JSON
// report a user attaches to a bug.
#pragma once

#include <string>
#include <vector>

#include "checks.hpp"
#include "machine_facts.hpp"

namespace vtice::console::doctor {

// "name  verdict  details" for one check, as printed while the run goes.
std::string format_check(const CheckResult &r);
// The machine's facts, one "label: value" per line.
std::string format_facts(const MachineFacts &facts);
// The closing line: counts, and the first failure.
std::string format_summary(const std::vector<CheckResult> &results);

std::string to_json(const MachineFacts &facts, const std::vector<CheckResult> &results, const std::string &version);

}  // namespace vtice::console::doctor
