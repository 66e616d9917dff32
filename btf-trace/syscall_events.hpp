// Syscall events as the hypervisor records them (include/uapi/vtice/records.h:
// an ENTER or EXIT record, then the SYSCALL_DATA records its flags count;
// probe hits come in the same shape, as a PROBE_HIT record and its DATA),
// decoded, paired into calls, and written one line per call like strace -f.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <vtice/records.h>
}

namespace vtice::trace {

struct SyscallEvent {
	bool enter = false;
	bool probe_hit = false;			// a PROBE_HIT group: nr is the probe's address
	uint16_t cpu = 0;
	uint64_t tsc = 0;
	uint64_t nr = VTICE_SYSCALL_NR_UNKNOWN;	// exits do not know it
	std::array<uint64_t, 6> args{};		// enter only
	uint64_t ret = 0;			// exit only
	bool has_task = false;
	uint32_t pid = 0, tgid = 0;
	uint64_t task = 0;			// task_struct address: pairs exit with entry
	std::string comm;
	// A probe hit armed with a stack: RSP and RBP at the entry, and the
	// stack from RSP up as copied (empty otherwise).
	uint64_t rsp = 0, rbp = 0;
	std::vector<uint8_t> stack;
	// A probe hit or syscall entry armed to copy a string: its bytes as
	// root copied them, to the NUL (at most VTICE_PROBE_STR_MAX).
	std::string str;
	// A probe hit armed for them (GPRS): RBX, RSP, RBP, R10-R15, RFLAGS.
	std::array<uint64_t, 2 * VTICE_GPRS_RECORDS> more_regs{};
	uint32_t more_regs_seen = 0;	// GPRS records read
	// A watch probe's hit (records.h): nr is RIP after the access.
	uint32_t watch_access = 0;	// VTICE_PROBE_HIT_READ/WRITE; 0: not a watch hit
	bool watch_seen = false;	// its WATCH record was read
	uint64_t watch_ip = 0;		// the accessing instruction
	uint64_t watch_addr = 0;	// the first watched byte it touched
	// A probe hit armed with a fetch program: its VALUE records by slot.
	std::array<uint64_t, VTICE_PROBE_VALUES_MAX> values{};
	uint32_t values_seen = 0;	// bit N: slot N's record was read
	uint32_t values_unreadable = 0;	// bit N: slot N's read faulted (its value is 0)
};

struct SyscallDecodeStats {
	uint64_t events = 0;
	uint64_t lost = 0;	// records the rings dropped (LOST records)
	uint64_t malformed = 0;	// groups cut short or with unknown DATA kinds
};

// One CPU's records in order (a ring never splits a group). Records of other
// types are skipped; a group whose DATA records are missing or unknown is
// counted as malformed and dropped.
std::vector<SyscallEvent> decode_syscall_records(std::span<const vtice_record> recs,
						 SyscallDecodeStats &stats);

// One call as a line prints it.
struct SyscallCall {
	std::optional<SyscallEvent> enter;	// empty: entered before the trace began
	std::optional<SyscallEvent> exit;	// empty: still running when the trace ended
};

// Pairs each exit with the last entry of the same task. Tasks make one
// syscall at a time, so an entry that meets another entry of its task was
// left without an exit (it returned through IRET: execve, rt_sigreturn, a
// signal); it is reported on its own then.
class SyscallPairer {
public:
	// The calls this event completes, oldest first.
	std::vector<SyscallCall> add(const SyscallEvent &ev);
	// Entries still waiting for their exit.
	std::vector<SyscallCall> unfinished();

private:
	std::map<uint64_t, SyscallEvent> open_;	// by task (or a per-CPU key without one)
};

std::string syscall_name(uint64_t nr);	// "openat", or "syscall_512"
// The number of a syscall by its name ("openat" -> 257); nothing for a name
// this kernel's uapi header does not have.
std::optional<uint64_t> syscall_number(std::string_view name);
unsigned syscall_arity(uint64_t nr);	// arguments a line shows (6 when unknown)
// "vtsys(4242) openat(-100, 0x7ffd1000, 0x80000, 0x1a4) = 3",
// "= -1 ENOENT (No such file or directory)", "= ? <unfinished>".
std::string format_syscall_call(const SyscallCall &call);

}  // namespace vtice::trace
