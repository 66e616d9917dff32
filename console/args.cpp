#include "args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace vtice::console {

std::optional<std::string> ParsedArgs::get(const std::string &name) const
{
	auto it = values.find(name);
	if (it == values.end())
		return std::nullopt;
	return it->second;
}

static const OptionSpec *find_spec(const std::vector<OptionSpec> &specs, const std::string &name)
{
	for (const auto &spec : specs)
		if (spec.name == name)
			return &spec;
	return nullptr;
}

Result<ParsedArgs> parse_args(int argc, char **argv, const std::vector<OptionSpec> &specs)
{
	ParsedArgs out;
	bool options_done = false;
	for (int i = 1; i < argc; i++) {
		std::string arg = argv[i];
		if (options_done || arg.size() < 2 || arg[0] != '-' || (arg[1] != '-' && arg != "-h")) {
			out.positional.push_back(arg);
			continue;
		}
		if (arg == "--") {
			options_done = true;
			continue;
		}
		if (arg == "--help" || arg == "-h") {
			out.help = true;
			continue;
		}
		std::string name = arg, value;
		bool inline_value = false;
		if (auto eq = arg.find('='); eq != std::string::npos) {
			name = arg.substr(0, eq);
			value = arg.substr(eq + 1);
			inline_value = true;
		}
		const OptionSpec *spec = find_spec(specs, name);
		if (!spec)
			return make_error("unknown option '" + name + "'");
		if (spec->takes_value && !inline_value) {
			if (i + 1 >= argc)
				return make_error("option '" + name + "' needs a value");
			value = argv[++i];
		} else if (!spec->takes_value && inline_value) {
			return make_error("option '" + name + "' takes no value");
		}
		out.values[name] = value;
	}
	return out;
}

std::vector<char *> expand_output_option(int argc, char **argv)
{
	static char output[] = "--output";
	std::vector<char *> out(argv, argv + argc);
	for (char *&arg : out)
		if (std::strcmp(arg, "-o") == 0)
			arg = output;
	return out;
}

Result<long long> parse_hex(const std::string &text)
{
	std::string digits = text;
	bool negative = !digits.empty() && digits[0] == '-';
	if (negative)
		digits.erase(0, 1);
	if (digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0)
		digits.erase(0, 2);
	if (digits.empty())
		return make_error("'" + text + "' is not a hexadecimal number");
	char *end = nullptr;
	errno = 0;
	unsigned long long magnitude = std::strtoull(digits.c_str(), &end, 16);
	if (*end != '\0' || errno == ERANGE)
		return make_error("'" + text + "' is not a hexadecimal number");
	long long value = static_cast<long long>(magnitude);
	return negative ? -value : value;
}

static bool all_digits(const std::string &text)
{
	if (text.empty())
		return false;
	for (char c : text)
		if (c < '0' || c > '9')
			return false;
	return true;
}

Result<std::uint64_t> parse_count(const std::string &option, const std::string &text, std::uint64_t min,
				  std::uint64_t max)
{
	auto range = [&] {
		return make_error(option + " '" + text + "': a whole number from " + std::to_string(min) + " to " +
				  std::to_string(max));
	};
	if (!all_digits(text))
		return range();
	errno = 0;
	unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
	if (errno == ERANGE || value < min || value > max)
		return range();
	return static_cast<std::uint64_t>(value);
}

Result<double> parse_seconds(const std::string &option, const std::string &text, double max_seconds)
{
	auto bad = [&] {
		char limit[32];
		std::snprintf(limit, sizeof(limit), "%g", max_seconds);
		return make_error(option + " '" + text + "': a number of seconds above 0 and at most " + limit);
	};
	// Digits with at most one point: no sign, exponent, "nan" or "inf".
	if (text.empty() || text.find_first_not_of("0123456789.") != std::string::npos ||
	    text.find('.') != text.rfind('.') || text == ".")
		return bad();
	double value = std::strtod(text.c_str(), nullptr);
	if (!std::isfinite(value) || !(value > 0) || value > max_seconds)
		return bad();
	return value;
}

Result<std::uint64_t> count_option(const ParsedArgs &args, const std::string &option, std::uint64_t fallback,
				   std::uint64_t min, std::uint64_t max)
{
	auto text = args.get(option);
	return text ? parse_count(option, *text, min, max) : Result<std::uint64_t>(fallback);
}

Result<double> seconds_option(const ParsedArgs &args, const std::string &option, double fallback,
			      double max_seconds)
{
	auto text = args.get(option);
	return text ? parse_seconds(option, *text, max_seconds) : Result<double>(fallback);
}

Result<int> parse_timeout_ms(const std::string &option, const std::string &text)
{
	// A week: any longer is a typo, and it keeps milliseconds inside an int.
	constexpr double kMaxSeconds = 7 * 24 * 3600;
	auto seconds = parse_seconds(option, text, kMaxSeconds);
	if (!seconds)
		return seconds.error();
	return std::max(1, static_cast<int>(std::lround(*seconds * 1000)));
}

}  // namespace vtice::console
