#include "report.hpp"

#include <cstdio>

#include "vtice/json_string.hpp"

namespace vtice::console::doctor {

namespace {

constexpr int kNameWidth = 18;

std::string padded(const std::string &text, std::size_t width)
{
	return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

}  // namespace

std::string format_check(const CheckResult &r)
{
	char seconds[32];
	std::snprintf(seconds, sizeof(seconds), "%6.1f s  ", r.seconds);
	return padded(r.name, kNameWidth) + padded(verdict_name(r.verdict), 5) + seconds + r.details + "\n";
}

std::string format_facts(const MachineFacts &facts)
{
	std::string out;
	for (const auto &[label, value] : facts.rows())
		out += padded(label + ":", kNameWidth) + value + "\n";
	return out;
}

std::string format_summary(const std::vector<CheckResult> &results)
{
	int counts[3] = {};
	std::string first_failure;
	for (const CheckResult &r : results) {
		counts[static_cast<int>(r.verdict)]++;
		if (r.verdict == Verdict::Fail && first_failure.empty())
			first_failure = r.name;
	}
	std::string out = std::to_string(counts[0]) + " passed, " + std::to_string(counts[1]) + " failed, " +
			  std::to_string(counts[2]) + " not applicable";
	if (!first_failure.empty())
		out += "; stopped at " + first_failure;
	return out + "\n";
}

std::string to_json(const MachineFacts &facts, const std::vector<CheckResult> &results, const std::string &version)
{
	std::string out = "{\n  \"vtice_version\": " + json_string(version) + ",\n  \"machine\": {";
	const char *sep = "\n";
	for (const auto &[label, value] : facts.rows()) {
		out += sep + std::string("    ") + json_string(label) + ": " + json_string(value);
		sep = ",\n";
	}
	out += "\n  },\n  \"checks\": [";
	sep = "\n";
	for (const CheckResult &r : results) {
		char seconds[32];
		std::snprintf(seconds, sizeof(seconds), "%.3f", r.seconds);
		out += sep + std::string("    {\"name\": ") + json_string(r.name) +
		       ", \"result\": " + json_string(verdict_name(r.verdict)) + ", \"seconds\": " + seconds +
		       ", \"details\": " + json_string(r.details) + "}";
		sep = ",\n";
	}
	return out + "\n  ]\n}\n";
}

}  // namespace vtice::console::doctor
