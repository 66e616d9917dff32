// fn:NAME and fn:NAME:return probe points found in the running kernel: the function's address
// from /proc/kallsyms, moved 4 bytes in past an ENDBR64 read from
// /proc/kcore (on a kernel with IBT an int3 in place of the ENDBR64 would
// raise #CP at the next indirect call, so kprobes move past it too), and
// armed as hidden breakpoints through /dev/vtice (VTICE_IOC_PROBES); and
// watch: ranges, armed through the same request.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checker.hpp"
#include "device.hpp"
#include "symbol_source.hpp"
#include "vtice/result.hpp"

namespace vtice::console {

// Fills in every fn:NAME point's address, every fn:NAME:return point's
// return sites (return_sites.hpp) and every watch: point's address; an error carries the point's position
// (probes::format_diagnostic shows it). Returns notes for the user: what a
// probe will not see (a function's tail calls).
Result<std::vector<std::string>> resolve_function_points(probes::CheckedProgram &program,
							 const std::string &kallsyms, const std::string &kcore);

// The kernel's live text, length bytes at address.
using KernelTextReader = std::function<Result<std::vector<std::uint8_t>>(std::uint64_t address, std::size_t length)>;
// fn:MODULE:NAME's function: NAME in that module's symbols (MODULE
// vmlinux: the kernel's own), or why not.
using ModuleFunctionLookup =
	std::function<Result<std::uint64_t>(std::string_view module, std::string_view function)>;
// The same with the kernel's symbols and text from elsewhere (a debug
// stub's target); symbols_name names the symbols in errors. symbols must
// hold the named modules' symbols too (where their functions end).
Result<std::vector<std::string>> resolve_function_points(probes::CheckedProgram &program,
							 const dbg::SymbolList &symbols, const std::string &symbols_name,
							 const KernelTextReader &read, const ModuleFunctionLookup &in_module);

// Kernel stack per sample or fn: hit for kstack: as much as the module
// copies. The kernel moves each syscall's frames down by up to 1 KiB
// (randomize_kstack_offset, on in Debian's kernels): with 1 KiB, 2 of the
// 20 vfs_read hits of hv.probe-kstack lost the syscall's entry frame. The
// copy ends at the stack's top anyway.
inline constexpr std::uint32_t kKstackBytes = VTICE_PROFILE_STACK_MAX;

// The ARM request for program's resolved points, without the ioctl: each
// address once with its fetch program, the watches. An error carries the
// point's position: too many addresses or programs, two probes at one
// address that read different memory.
Result<vtice_probes> arm_request(const probes::CheckedProgram &program, std::uint32_t stack_bytes);

// The probes of one run: armed by arm(), removed by disarm() or when the
// device closes.
class FunctionProbes {
public:
	FunctionProbes(const DeviceFd &dev, std::string path) : dev_(dev), path_(std::move(path)) {}
	// Arms an arm_request()'s probes (it takes the module's answer): how many.
	Result<std::uint32_t> arm(vtice_probes &req);
	// hits: recorded since load; counted: per address, what root's COUNT counted.
	Result<vtice_probes> disarm();
	Result<vtice_probes> query();
	// What the HIST op at armed address index (the request's order) counted
	// in each bucket (VTICE_IOC_PROBE_HIST); read before disarm().
	Result<std::vector<std::uint64_t>> hist(std::uint32_t index);
	// What the KEYED op there counted, slot by slot (VTICE_IOC_PROBE_KEYS);
	// read before disarm().
	Result<std::vector<vtice_probe_key>> keys(std::uint32_t index);

private:
	Result<vtice_probes> ask(std::uint32_t op);
	Result<void> per_address_ioctl(unsigned long cmd, const char *name, void *req);

	const DeviceFd &dev_;
	std::string path_;
};

}  // namespace vtice::console
