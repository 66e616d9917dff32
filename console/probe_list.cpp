// vtice probe --list (probe_list.hpp).
#include "probe_list.hpp"

#include <fnmatch.h>

#include <cctype>
#include <optional>

#include "syscall_events.hpp"

namespace vtice::console {
namespace {

// "const char *" and "filename" as C declares them: "const char *filename".
std::string declaration(const probes::Param &p)
{
	std::string type = p.type.empty() ? "(type unknown)" : p.type;
	return type + (type.back() == '*' ? "" : " ") + p.name;
}

std::string arguments(const Result<std::vector<probes::Param>> &params, bool &complete)
{
	complete &= params.ok();
	if (!params)
		return "    (none by name: " + params.error().message + ")\n";
	if (params->empty())
		return "    (it takes none)\n";
	std::string out;
	for (std::size_t i = 0; i < params->size(); i++) {
		const probes::Param &p = (*params)[i];
		if (i >= 6)
			out += "          " + declaration(p) + "  (past the sixth, on the stack: not readable)\n";
		else if (p.bytes == 0)
			out += "          " + declaration(p) + "  (passed by value: not readable)\n";
		else
			out += "    arg" + std::to_string(i) + "  " + declaration(p) + "\n";
	}
	return out;
}

std::string point_args(const probes::ProbePoint &p, const probes::ParamLookup &params,
		       const probes::SyscallParamLookup &syscall_params, bool &complete)
{
	using probes::PointKind;
	switch (p.kind) {
	case PointKind::FnEntry:
		return p.text + " (its BTF)\n" +
		       (params ? arguments(params(probes::qualified_function(p)), complete)
			       : arguments(make_error("no kernel BTF here"), complete));
	case PointKind::FnReturn:
		return p.text + "\n    (none: at a return, retval; the arguments are gone)\n";
	case PointKind::SyscallEnter:
	case PointKind::SyscallReturn: {
		if (p.any_syscall)
			return p.text + "\n    (none by name in syscall:*: read arg0..arg5)\n";
		return p.text + " (the kernel's declaration)\n" +
		       (syscall_params ? arguments(syscall_params(p.syscall_nr, probes::syscall_point_name(p)), complete)
				       : arguments(make_error("no kernel here"), complete));
	}
	default:
		return p.text + "\n    (none by name at this kind of point)\n";
	}
}

constexpr std::uint64_t kMaxSyscallNumber = 1024;
constexpr std::string_view kReturn = ":return";

bool is_pattern(std::string_view text)
{
	return text.find_first_of("*?[") != std::string_view::npos;
}

bool matches(std::string_view pattern, std::string_view name)
{
	return fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), 0) == 0;
}

std::string_view trim(std::string_view text)
{
	while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
		text.remove_prefix(1);
	while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
		text.remove_suffix(1);
	return text;
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

// fn:[MODULE:]PATTERN's matches among functions ("msr:msr_read", "vfs_read").
std::vector<std::string> function_matches(std::string_view pattern, const std::vector<std::string> &functions)
{
	auto colon = pattern.find(':');
	std::string_view module = colon == std::string_view::npos ? std::string_view() : pattern.substr(0, colon);
	std::string_view name = colon == std::string_view::npos ? pattern : pattern.substr(colon + 1);
	std::vector<std::string> out;
	for (const std::string &f : functions) {
		auto at = f.find(':');
		std::string_view own = at == std::string::npos ? std::string_view() : std::string_view(f).substr(0, at);
		std::string_view bare = at == std::string::npos ? std::string_view(f) : std::string_view(f).substr(at + 1);
		if (matches(name, bare) && (colon == std::string_view::npos || matches(module, own)))
			out.push_back(f);
	}
	return out;
}

std::vector<std::string> syscall_matches(std::string_view pattern)
{
	std::vector<std::string> out;
	for (std::uint64_t nr = 0; nr < kMaxSyscallNumber; nr++)
		if (auto name = trace::syscall_name(nr); name.rfind("syscall_", 0) != 0 && matches(pattern, name))
			out.push_back(name);
	return out;
}

}  // namespace

Result<std::string> expand_point_patterns(std::string_view points, const FunctionNames &functions)
{
	std::optional<std::vector<std::string>> names;	// read on the first fn: pattern
	std::string out;
	std::size_t count = 0;
	for (std::string_view item : split_points(points)) {
		bool ret = item.size() > kReturn.size() && item.substr(item.size() - kReturn.size()) == kReturn;
		std::string_view kind = item.substr(0, item.find(':') + 1);
		std::string_view pattern = item.substr(kind.size(), item.size() - kind.size() - (ret ? kReturn.size() : 0));
		std::vector<std::string> found;
		if ((kind != "fn:" && kind != "syscall:") || !is_pattern(pattern)) {
			found.emplace_back(item);
		} else {
			if (kind == "fn:" && !names) {
				auto listed = functions();
				if (!listed)
					return listed.error();
				names = std::move(*listed);
			}
			for (const std::string &m : kind == "fn:" ? function_matches(pattern, *names) : syscall_matches(pattern))
				found.push_back(std::string(kind) + m + (ret ? std::string(kReturn) : ""));
			if (found.empty())
				return make_error("no " + std::string(kind == "fn:" ? "function" : "syscall") + " matches " +
						  std::string(item));
		}
		count += found.size();
		if (count > kMaxListedPoints)
			return make_error("the patterns match more than " + std::to_string(kMaxListedPoints) +
					  " points: narrow them");
		for (const std::string &point : found)
			out += (out.empty() ? "" : ", ") + point;
	}
	return out;
}

Result<PointListing> list_point_args(std::string_view points, const probes::SyscallLookup &syscalls,
				     const probes::ParamLookup &params, const probes::SyscallParamLookup &syscall_params,
				     const ListProgress &progress)
{
	std::vector<std::string_view> items = split_points(points);
	if (items.empty())
		return make_error("no probe point to list: give points, as in --list 'fn:vfs_read, syscall:openat'");
	PointListing out;
	out.points = items.size();
	// A point a program (a probe holds at most 64: a pattern's may be thousands).
	for (std::size_t i = 0; i < items.size(); i++, out.listed++) {
		if (progress && !progress(i + 1, items.size(), items[i]))
			break;
		auto program = probes::compile_program(std::string(items[i]) + " { exit(); }", syscalls);
		if (!program)
			return make_error(std::string(items[i]) + ": " + program.error().message);
		for (const probes::Probe &probe : program->program.probes)
			for (const probes::ProbePoint &p : probe.points)
				out.text += point_args(p, params, syscall_params, out.complete);
	}
	return out;
}

}  // namespace vtice::console
