// Command-line parsing shared by every vtice subcommand.
//
// Each subcommand declares its options and gets back the values and the
// positional arguments, or an error naming the bad argument. "--help" and "-h"
// are always understood.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::console {

struct OptionSpec {
	std::string name;       // "--format"
	bool takes_value;       // "--format graph" / "--format=graph"
};

struct ParsedArgs {
	bool help = false;
	std::map<std::string, std::string> values;  // option name -> value ("" for flags)
	std::vector<std::string> positional;

	bool has(const std::string &name) const { return values.count(name) != 0; }
	std::optional<std::string> get(const std::string &name) const;
};

Result<ParsedArgs> parse_args(int argc, char **argv, const std::vector<OptionSpec> &specs);

// parse_args knows long options only; "-o" is the one short form, spelled
// "--output" in the returned copy of argv (for commands that write a file).
std::vector<char *> expand_output_option(int argc, char **argv);

// The one number parser of every option. Each refuses what is not plainly
// a number of its kind (NaN, infinities, signs where none belong, trailing
// text, values outside the range) with an error naming the option.

// Parses "0x1234", "1234" (hex), "-0x10"; an error names the text.
Result<long long> parse_hex(const std::string &text);
// A decimal whole number in [min, max].
Result<std::uint64_t> parse_count(const std::string &option, const std::string &text, std::uint64_t min,
				  std::uint64_t max);
// A finite decimal number of seconds, above 0 and at most max_seconds.
Result<double> parse_seconds(const std::string &option, const std::string &text, double max_seconds);
// An option's value through parse_count / parse_seconds, or fallback when
// the option is absent.
Result<std::uint64_t> count_option(const ParsedArgs &args, const std::string &option, std::uint64_t fallback,
				   std::uint64_t min, std::uint64_t max);
Result<double> seconds_option(const ParsedArgs &args, const std::string &option, double fallback,
			      double max_seconds);
// Seconds as whole milliseconds (what waits take), with the same checks.
Result<int> parse_timeout_ms(const std::string &option, const std::string &text);

}  // namespace vtice::console
