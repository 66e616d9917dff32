// vtice probe --list (probe_list.hpp).
#include "probe_list.hpp"

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

}  // namespace

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
