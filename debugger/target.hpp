// What the debugger engine needs from a stopped-or-running machine.
//
// A Target is one connection to one machine: the GDB Remote Serial Protocol
// client (debugger/rsp/) today, the local /dev/vtice device or a trace file
// later. It speaks in raw registers, bytes and stop events; breakpoints with
// conditions, stepping over calls, symbols and unwinding live in Session.
//
// Threading: a Target is used from one thread, except interrupt(), which may be
// called from another thread (a TUI key or SIGINT handler) while wait_stop()
// blocks.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtice/ioctl.h"
#include "vtice/records.h"
#include "vtice/result.hpp"

namespace vtice::dbg {

// One register as the target describes it (qXfer:features target.xml).
struct RegisterInfo {
	std::string name;      // "rip", "eflags", "cr3", "xmm0"
	unsigned number = 0;   // the stub's register number (p/P)
	unsigned bits = 0;     // width in bits
	unsigned offset = 0;   // byte offset in the 'g' block
	std::string group;     // "general", "system", "float", "vector", ... ("" when unknown)
	std::string type;      // "int64", "code_ptr", "i387_ext", "vec128", "i386_eflags", ...
};

struct RegisterLayout {
	std::vector<RegisterInfo> registers;  // in 'g' block order
	unsigned g_size = 0;                  // bytes of the 'g' block
	std::string architecture;             // "i386:x86-64"

	const RegisterInfo *find(const std::string &name) const;
	const RegisterInfo *find_number(unsigned number) const;
};

// Register contents for one thread, laid out like the 'g' block.
struct RegisterValues {
	std::vector<std::uint8_t> raw;

	// The low 64 bits of a register (little endian); nothing if out of range.
	std::optional<std::uint64_t> get(const RegisterInfo &reg) const;
	void set(const RegisterInfo &reg, std::uint64_t value);
};

enum class BreakKind : std::uint8_t {
	Software = 0,     // Z0: int3 written by the stub
	Hardware = 1,     // Z1: debug register, execute
	WriteWatch = 2,   // Z2
	ReadWatch = 3,    // Z3
	AccessWatch = 4,  // Z4
};

const char *break_kind_name(BreakKind kind);

enum class StopReason : std::uint8_t {
	Signal,       // a plain S/T reply (single-step done, interrupted, ...)
	Breakpoint,   // swbreak/hwbreak, or SIGTRAP at an inserted breakpoint
	Watchpoint,   // watch/rwatch/awatch
	Exited,       // W: the process (machine) exited
	Terminated,   // X: killed by a signal
};

struct StopEvent {
	StopReason reason = StopReason::Signal;
	int signal = 0;                        // 5 = SIGTRAP, 2 = SIGINT
	std::optional<int> thread;             // thread that stopped (QEMU: vCPU index + 1)
	std::optional<BreakKind> watch_kind;   // for Watchpoint
	std::optional<std::uint64_t> watch_address;
	bool swbreak = false, hwbreak = false; // the stub said so
	std::string replay_log;                // "begin" / "end": a replay ran off its history (replaylog)
	std::string raw;                       // the stop reply as received
};

// The reverse actions need a stub that runs backwards (ReverseStep+ and
// ReverseContinue+ in qSupported: vtice serve-replay, gdb's own record).
enum class ResumeAction : std::uint8_t { Continue, Step, ReverseContinue, ReverseStep };

// Options a target may offer; Session adapts to what is missing.
struct TargetFeatures {
	bool no_ack = false;            // QStartNoAckMode in effect
	bool vcont = false;             // vCont;c;s
	bool binary_write = false;      // X packets accepted
	bool binary_read = false;       // x packets accepted
	bool physical_memory = false;   // set_physical_mode() available (QEMU Qqemu.PhyMemMode)
	bool multiprocess = false;      // detach needs D;pid
	bool hw_breakpoints = false;    // Z1 accepted (learnt on first use)
	unsigned max_packet = 0;        // PacketSize from qSupported
	bool target_description = false;  // target.xml read; else gdb's default amd64 core layout
	bool pipelined_reads = false;   // several memory reads in flight (QEMU's gdbstub)
	bool branch_trace = false;      // the stub records branches itself (Qbtrace, qXfer:vtice-trace)
	bool probes = false;            // the stub arms vtice's probes and drains their rings (QVtice:probes)
	bool reverse = false;           // bs and bc (ReverseStep+, ReverseContinue+)
	std::string stub;               // "QEMU gdbstub", "vtice hypervisor stub", "vtice serve-replay", "kgdb", "" unknown
	std::vector<std::string> warnings;  // what connecting found wrong and repaired
};

struct BreakpointChange {
	bool insert = true;  // false: remove
	BreakKind type = BreakKind::Software;
	std::uint64_t address = 0;
	unsigned kind = 1;
};

// The vtice stub's syscall trap: CPUs armed now; SYSCALL/SYSRET executed
// for the kernel while armed, and those recorded, since the module loaded.
struct SyscallTrapCounts {
	std::uint64_t armed = 0, seen = 0, recorded = 0;
};

// The vtice stub's profiler: CPUs sampling now; samples recorded since the
// module loaded.
struct ProfilerCounts {
	std::uint64_t armed = 0, samples = 0;
};

class Target {
public:
	virtual ~Target() = default;

	virtual std::string describe() const = 0;  // "rsp tcp:127.0.0.1:1234"
	// False once the link to the stub is lost: every request after fails.
	virtual bool connected() const { return true; }
	virtual const RegisterLayout &layout() const = 0;
	virtual const TargetFeatures &features() const = 0;

	// Registers of the selected thread.
	virtual Result<RegisterValues> read_registers() = 0;
	// One register (p); cheaper than read_registers() for the tracer.
	virtual Result<std::uint64_t> read_register(const RegisterInfo &reg) = 0;
	virtual Result<void> write_register(const RegisterInfo &reg, std::uint64_t value) = 0;

	// Memory as the selected vCPU sees it (virtual), or physical when
	// set_physical_mode(true) succeeded. A short read is an error naming the address.
	virtual Result<std::vector<std::uint8_t>> read_memory(std::uint64_t address, std::size_t length) = 0;
	virtual Result<void> write_memory(std::uint64_t address, const std::vector<std::uint8_t> &bytes) = 0;
	virtual Result<void> set_physical_mode(bool physical) = 0;

	// kind: breakpoint length in bytes (1 for int3), or the watched length.
	virtual Result<void> insert_breakpoint(BreakKind type, std::uint64_t address, unsigned kind) = 0;
	virtual Result<void> remove_breakpoint(BreakKind type, std::uint64_t address, unsigned kind) = 0;

	// Starts the machine (Continue) or the selected thread for one
	// instruction (Step); wait_stop() collects the stop.
	virtual Result<void> resume(ResumeAction action) = 0;
	// Breakpoint changes, then resume: the same as making the calls one
	// after the other, which is what this does unless the stub can take
	// them in one exchange (RspTarget with QEMU). When a change fails after
	// the target was resumed, it is stopped again before the error returns.
	virtual Result<void> resume_with(std::span<const BreakpointChange> changes, ResumeAction action);
	// Nothing on timeout (timeout_ms < 0: wait forever).
	virtual Result<std::optional<StopEvent>> wait_stop(int timeout_ms) = 0;
	// Asks a running target to stop; safe from another thread.
	virtual Result<void> interrupt() = 0;
	// Why the target is stopped now ('?').
	virtual Result<StopEvent> query_stop() = 0;

	virtual Result<std::vector<int>> threads() = 0;
	virtual Result<void> select_thread(int thread) = 0;
	virtual int selected_thread() const = 0;

	// A monitor command (qRcmd); returns what the stub printed.
	virtual Result<std::string> monitor(const std::string &command) = 0;

	// The stub's own branch tracer (features().branch_trace): start a new
	// trace of one thread (a CPU) or stop it, and read its records, oldest
	// first, while the target is stopped.
	virtual Result<void> set_branch_trace(int thread, bool on);
	virtual Result<std::vector<vtice_record>> read_branch_trace(int thread);

	// The vtice stub's probes (features().probes), while the target is
	// stopped: armed from the request VTICE_IOC_PROBES takes (replacing
	// what this debugger armed before), removed (the hits recorded since
	// load come back), counted; a CPU's (thread - 1) unread records taken
	// from its ring, oldest first; the rate of the TSC the records carry.
	virtual Result<void> arm_probes(const vtice_probes &req);
	virtual Result<std::uint64_t> disarm_probes();
	virtual Result<std::uint64_t> probe_hits();
	// Hits root's filter or a predicate's test chose not to record, since load.
	virtual Result<std::uint64_t> probe_passed_over();
	// Times a module's going removed the probes, since load (the kernel
	// side's module notifier); an error where nothing tells.
	virtual Result<std::uint64_t> probes_removed();
	// Per armed address (the request's order): hits root counted there
	// (COUNT, SUM) or, with sums, what SUM added up there (two's complement).
	virtual Result<std::vector<std::uint64_t>> probe_counts(bool sums);
	// The values the hits root counted used that a read found unmapped
	// (they gave 0), all armed addresses together; 0 from an older stub.
	virtual Result<std::uint64_t> probe_unreadable();
	// What the HIST op at armed address index counted in each of its
	// VTICE_FETCH_HIST_BUCKETS buckets.
	virtual Result<std::vector<std::uint64_t>> probe_hist(std::uint32_t index);
	// What the KEYED op at armed address index counted, slot by slot
	// (VTICE_FETCH_KEYED_SLOTS; count 0: a free slot).
	virtual Result<std::vector<vtice_probe_key>> probe_keys(std::uint32_t index);
	// The stub's syscall trap (syscall: probes): armed with the filter and
	// string slots of a VTICE_IOC_SYSCALLS request, each CPU arming as it
	// leaves this stop; removed the same way; its counts.
	virtual Result<void> arm_syscalls(const vtice_syscalls &req);
	virtual Result<void> disarm_syscalls();
	virtual Result<SyscallTrapCounts> syscall_counts();
	// The stub's profiler (profile: probes): every CPU sampled req.hz times
	// a second with req.stack_bytes of its stack, req's task only (pid,
	// comm; its op and cpu are not used), each CPU starting as it leaves
	// this stop; stopped the same way; its counts.
	virtual Result<void> arm_profile(const vtice_profile &req);
	virtual Result<void> disarm_profile();
	virtual Result<ProfilerCounts> profiler_counts();
	virtual Result<std::vector<vtice_record>> take_ring(int thread);
	virtual Result<std::uint64_t> tsc_khz();
	virtual Result<void> detach() = 0;
};

}  // namespace vtice::dbg
