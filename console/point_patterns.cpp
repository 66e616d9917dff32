// Probe point patterns (point_patterns.hpp).
#include "point_patterns.hpp"

#include <fnmatch.h>

#include <cctype>
#include <map>

#include "diagnostic.hpp"
#include "parser.hpp"
#include "syscall_events.hpp"

namespace vtice::console {
namespace {

constexpr std::uint64_t kMaxSyscallNumber = 1024;
constexpr std::string_view kReturn = ":return";

bool is_pattern(std::string_view text)
{
	return text.find_first_of("*?[") != std::string_view::npos;
}

std::string_view trim(std::string_view text)
{
	while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
		text.remove_prefix(1);
	while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
		text.remove_suffix(1);
	return text;
}

// fn:MODULE:PATTERN's MODULE; empty for fn:PATTERN.
std::string_view module_part(std::string_view pattern)
{
	auto colon = pattern.find(':');
	return colon == std::string_view::npos ? std::string_view() : pattern.substr(0, colon);
}

// fn:[MODULE:]PATTERN's matches among functions ("msr:msr_read", "vfs_read").
std::vector<std::string> function_matches(std::string_view pattern, const std::vector<std::string> &functions)
{
	auto colon = pattern.find(':');
	std::string_view module = module_part(pattern);
	std::string_view name = colon == std::string_view::npos ? pattern : pattern.substr(colon + 1);
	std::vector<std::string> out;
	for (const std::string &f : functions) {
		auto at = f.find(':');
		std::string_view own = at == std::string::npos ? std::string_view() : std::string_view(f).substr(0, at);
		std::string_view bare = at == std::string::npos ? std::string_view(f) : std::string_view(f).substr(at + 1);
		if (matches_pattern(name, bare) && (colon == std::string_view::npos || matches_pattern(module, own)))
			out.push_back(f);
	}
	return out;
}

std::vector<std::string> syscall_matches(std::string_view pattern)
{
	std::vector<std::string> out;
	for (std::uint64_t nr = 0; nr < kMaxSyscallNumber; nr++)
		if (auto name = trace::syscall_name(nr); name.rfind("syscall_", 0) != 0 && matches_pattern(pattern, name))
			out.push_back(name);
	return out;
}

// The functions asked for so far, by the module pattern they were asked
// with ("": every function).
using AskedFunctions = std::map<std::string, std::vector<std::string>, std::less<>>;

// The functions a fn: pattern of that module part needs: those asked for
// already (every function, or that module's), else asked for now.
Result<const std::vector<std::string> *> functions_for(std::string_view module, const FunctionNames &functions,
						       AskedFunctions &asked)
{
	if (auto every = asked.find(""); every != asked.end())
		return &every->second;
	if (auto known = asked.find(module); known != asked.end())
		return &known->second;
	auto listed = functions(module);
	if (!listed)
		return listed.error();
	return &(asked[std::string(module)] = std::move(*listed));
}

// What one point becomes: itself, or the points its pattern matches
// (asked: the functions, read on the first fn: pattern that needs them);
// an error for a pattern that matches nothing. every: "syscall:*" is a
// pattern too.
Result<std::vector<std::string>> point_matches(std::string_view item, const FunctionNames &functions,
					       AskedFunctions &asked, bool every)
{
	bool ret = item.size() > kReturn.size() && item.substr(item.size() - kReturn.size()) == kReturn;
	std::string_view kind = item.substr(0, item.find(':') + 1);
	std::string_view pattern = item.substr(kind.size(), item.size() - kind.size() - (ret ? kReturn.size() : 0));
	bool every_syscall = kind == "syscall:" && pattern == "*";
	if ((kind != "fn:" && kind != "syscall:") || !is_pattern(pattern) || (every_syscall && !every))
		return std::vector<std::string>{std::string(item)};
	std::vector<std::string> matched;
	if (kind == "fn:") {
		if (!functions)
			return make_error(std::string(item) + " is a pattern, and there is no list of the kernel's functions "
							      "here to match it against: name the functions");
		auto names = functions_for(module_part(pattern), functions, asked);
		if (!names)
			return names.error();
		matched = function_matches(pattern, **names);
	} else {
		matched = syscall_matches(pattern);
	}
	std::vector<std::string> found;
	for (const std::string &m : matched)
		found.push_back(std::string(kind) + m + (ret ? std::string(kReturn) : ""));
	if (found.empty())
		return make_error("no " + std::string(kind == "fn:" ? "function" : "syscall") + " matches " +
				  std::string(item));
	return found;
}

}  // namespace

bool matches_pattern(std::string_view pattern, std::string_view name)
{
	return fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), 0) == 0;
}

// "fn:a, syscall:b" as "fn:a" and "syscall:b", empty ones left out.
std::vector<std::string_view> split_points(std::string_view points)
{
	std::vector<std::string_view> out;
	while (!points.empty()) {
		auto comma = points.find(',');
		if (std::string_view item = trim(points.substr(0, comma)); !item.empty())
			out.push_back(item);
		points.remove_prefix(comma == std::string_view::npos ? points.size() : comma + 1);
	}
	return out;
}

Result<std::string> expand_point_patterns(std::string_view points, const FunctionNames &functions)
{
	AskedFunctions asked;
	std::string out;
	std::size_t count = 0;
	for (std::string_view item : split_points(points)) {
		auto found = point_matches(item, functions, asked, true);
		if (!found)
			return found.error();
		count += found->size();
		if (count > kMaxListedPoints)
			return make_error("the patterns match more than " + std::to_string(kMaxListedPoints) +
					  " points: narrow them");
		for (const std::string &point : *found)
			out += (out.empty() ? "" : ", ") + point;
	}
	return out;
}

Result<void> expand_program_patterns(probes::Program &program, const FunctionNames &functions)
{
	AskedFunctions asked;
	for (probes::Probe &probe : program.probes) {
		std::vector<probes::ProbePoint> points;
		for (const probes::ProbePoint &p : probe.points) {
			auto found = point_matches(p.text, functions, asked, false);
			if (!found)
				return probes::error_at(p.pos, found.error().message);
			for (const std::string &text : *found) {
				if (points.size() == probes::kMaxPointsPerProbe)
					return probes::error_at(
						p.pos, p.text + " makes this probe more than " +
							       std::to_string(probes::kMaxPointsPerProbe) +
							       " points, the most root arms: narrow it (vtice probe --list '" +
							       p.text + "' lists what it matches)");
				probes::ProbePoint expanded = p;
				expanded.text = text;
				points.push_back(std::move(expanded));
			}
		}
		probe.points = std::move(points);
	}
	return {};
}

}  // namespace vtice::console
