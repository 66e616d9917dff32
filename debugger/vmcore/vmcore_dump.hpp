// Writes a stopped kernel's memory and CPU state to an ELF vmcore that
// crash and drgn open as they open kdump's: RAM from the kernel's own map,
// VMCOREINFO from the kernel's own note, one PRSTATUS per CPU (per stub
// thread). Works through any stub: physical reads where the stub offers
// them (QEMU), else the kernel's direct map.
#pragma once

#include <cstdint>
#include <string>

#include "../output.hpp"
#include "../session.hpp"
#include "elf_core.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg::vmcore {

struct DumpOptions {
	std::string path;
	bool skip_zero_pages = false;  // --filter zero
	bool skip_free_pages = false;  // --filter free
};

// Where the file may go: never an input of this run (the --symbols image,
// say: docs/hardening.md), a directory, a device or a FIFO (the writer
// seeks); its directory exists and is writable.
Result<void> check_dump_output(const std::string &path);

// "--filter zero", "free" or "zero,free" into options; an error names the
// word it does not know.
Result<void> parse_filter(const std::string &text, DumpOptions &options);

struct DumpSummary {
	CoreStats core;                     // what writing the file found
	std::uint64_t free_pages = 0;       // left out (--filter free)
	std::uint64_t free_pages_kept = 0;  // free, but in the kernel image or past the header budget
	unsigned cpus = 0;
	std::string osrelease;
	double seconds = 0;
};

// The file is written as PATH.part and renamed when complete: an
// interrupted dump never leaves a file that looks whole.
Result<DumpSummary> dump_vmcore(Session &session, const DumpOptions &options, Output &out);

// "Wrote FILE: Linux ..., N CPUs, ..." and what was left out or refused.
void print_dump_summary(Output &out, const DumpOptions &options, const DumpSummary &summary);

}  // namespace vtice::dbg::vmcore
