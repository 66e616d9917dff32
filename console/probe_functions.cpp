#include "probe_functions.hpp"

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "diagnostic.hpp"
#include "symbol_source.hpp"
#include "trace/kcore.hpp"
#include "trace_common.hpp"

namespace vtice::console {
namespace {

bool starts_with_endbr(const std::vector<std::uint8_t> &b)
{
	static const std::uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const std::uint8_t sealed[4] = {0x0f, 0x1f, 0x40, 0xd6};	// IBT's poison NOP
	return b.size() >= 4 && (std::memcmp(b.data(), endbr64, 4) == 0 || std::memcmp(b.data(), sealed, 4) == 0);
}

}  // namespace

Result<void> resolve_function_points(probes::CheckedProgram &program, const std::string &kallsyms,
				     const std::string &kcore_path)
{
	if (!program.has_fn_probes)
		return {};
	auto symbols = read_running_kallsyms(kallsyms, "_text");
	if (!symbols)
		return symbols.error();
	auto kcore = dbg::Kcore::open(kcore_path);
	if (!kcore)
		return kcore.error();
	for (auto &probe : program.program.probes)
		for (auto &point : probe.points) {
			if (point.kind != probes::PointKind::FnEntry)
				continue;
			auto address = (*symbols)->lookup(point.function);
			if (!address || !*address)
				return probes::error_at(point.pos, "no kernel function '" + point.function + "' in " + kallsyms);
			auto head = kcore->read(*address, 4);
			if (!head)
				return probes::error_at(point.pos, "cannot read " + point.function + " in " + kcore_path +
									   ": " + head.error().message);
			point.address = *address + (starts_with_endbr(*head) ? 4 : 0);
		}
	return {};
}

Result<std::uint32_t> FunctionProbes::arm(const probes::CheckedProgram &program, std::uint32_t stack_bytes)
{
	auto req = request<vtice_probes>();
	req.op = VTICE_PROBES_ARM;
	req.stack_bytes = stack_bytes;
	req.pid = program.root_filter.pid;
	std::memcpy(req.comm, program.root_filter.comm.data(),
		    std::min(program.root_filter.comm.size(), sizeof(req.comm) - 1));
	for (const auto &probe : program.program.probes)
		for (const auto &point : probe.points) {
			if (point.kind != probes::PointKind::FnEntry)
				continue;
			auto *seen = std::find(req.addrs, req.addrs + req.count, point.address);
			if (seen != req.addrs + req.count) {
				if (probe.str_arg >= 0)	// the checker made them agree
					req.str_arg[seen - req.addrs] = static_cast<std::uint8_t>(probe.str_arg + 1);
				continue;
			}
			if (req.count == VTICE_PROBES_MAX)
				return probes::error_at(point.pos, "more than " + std::to_string(VTICE_PROBES_MAX) +
									   " kernel functions probed at once");
			req.str_arg[req.count] = static_cast<std::uint8_t>(probe.str_arg + 1);	// 0: none
			req.addrs[req.count++] = point.address;
		}
	if (ioctl(dev_.get(), VTICE_IOC_PROBES, &req) < 0) {
		int err = errno;
		if (err == EBUSY)
			return make_error("another 'vtice probe' owns the function probes");
		if (err == EOPNOTSUPP)
			return make_error(path_ + ": this CPU cannot hide breakpoints (no execute-only EPT): fn: probes "
						  "need it");
		if (err == EINVAL)
			return make_error(path_ + ": the module refused a probe address (dmesg names it): only the "
						  "kernel's own text, at a function's start");
		return ioctl_error(path_, "VTICE_IOC_PROBES", err);
	}
	return req.armed;
}

// QUERY or DISARM: the hits the hypervisor recorded since load.
Result<std::uint64_t> FunctionProbes::hits_after(std::uint32_t op)
{
	auto req = request<vtice_probes>();
	req.op = op;
	if (ioctl(dev_.get(), VTICE_IOC_PROBES, &req) < 0)
		return ioctl_error(path_, "VTICE_IOC_PROBES", errno);
	return req.hits;
}

Result<std::uint64_t> FunctionProbes::hits_so_far() { return hits_after(VTICE_PROBES_QUERY); }

Result<std::uint64_t> FunctionProbes::disarm() { return hits_after(VTICE_PROBES_DISARM); }

}  // namespace vtice::console
