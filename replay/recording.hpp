// A step recording: the machine state a replay needs to show any point of a
// traced kernel path without running it again. Registers at step 0, then
// per step the registers it changed and the memory it read and wrote, with
// the bytes before and after (docs/replay.md; chunks REPLAY_REGISTERS,
// REPLAY_STEPS, REPLAY_MEMORY of trace format version 2).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace_file.hpp"
#include "vtice/result.hpp"

namespace vtice::replay {

struct RegisterSpec {
	std::string name;   // "rax", "eflags", "fs_base", "xmm0"
	unsigned bits = 0;  // a multiple of 8
	std::string type;   // the target description's type ("int64", "code_ptr", "i387_ext")
	std::string group;  // "general", "system", "float", "vector" or ""
	unsigned bytes() const { return bits / 8; }
};

struct RegisterChange {
	std::uint16_t index = 0;           // into Recording::registers
	std::vector<std::uint8_t> value;   // the register's new contents, little endian
};

enum class AccessKind : std::uint8_t {
	Read = 1,             // before: the bytes read
	Write = 2,            // before and after
	WriteUnknownOld = 3,  // after only: the recorder could not read them before (an exception frame)
	ReadWrite = 4,        // before and after: an operand read and then written (add [m], 1; xchg)
	// Neither: a store the recorder did not see (the part of a wide store
	// past a root recording's 8-byte windows), its bytes unknown from then on.
	Unseen = 5,
	// before: bytes the recorder saw that the instruction neither read nor
	// wrote (the rest of a root window): what was there, for the replay
	// only; no watchpoint stops on them.
	Seen = 6,
};

struct MemoryEvent {
	AccessKind kind = AccessKind::Read;
	std::uint64_t address = 0;
	std::vector<std::uint8_t> before;  // Read, Write, ReadWrite, Seen
	std::vector<std::uint8_t> after;   // Write, WriteUnknownOld
	std::uint32_t unseen = 0;          // Unseen: how many bytes
	// Unseen: a store that may not have happened (an XSAVE's area, which
	// its form, XCR0 and the CPU's optimizations decide); not in files.
	bool maybe = false;
	std::size_t length() const
	{
		return kind == AccessKind::Unseen ? unseen : kind == AccessKind::WriteUnknownOld ? after.size() : before.size();
	}
	bool writes() const { return kind != AccessKind::Read && kind != AccessKind::Seen; }
	// Which of the byte lists the kind carries (in the file too).
	bool has_before() const { return kind != AccessKind::WriteUnknownOld && kind != AccessKind::Unseen; }
	bool has_after() const { return writes() && kind != AccessKind::Unseen; }
	bool reads() const { return kind == AccessKind::Read || kind == AccessKind::ReadWrite; }
};

// One stop of the stepped target: the instruction at the state's rip ran
// (a REP string instruction one iteration).
struct Step {
	std::vector<RegisterChange> registers;
	std::vector<MemoryEvent> memory;
};

struct MemoryBlob {
	std::uint64_t address = 0;
	std::vector<std::uint8_t> bytes;
};

struct Recording {
	std::vector<RegisterSpec> registers;   // in the stub's 'g' order
	std::vector<std::uint8_t> initial;     // every register back to back, at step 0
	std::vector<Step> steps;
	std::vector<MemoryBlob> memory;        // as it was at step 0 (the task's stack)
	std::vector<MemoryBlob> code;          // kernel text the steps ran
};

// Limits that keep a damaged or hostile file from asking for absurd memory.
inline constexpr std::size_t kMaxRegisters = 1024;
inline constexpr unsigned kMaxRegisterBits = 1024;
inline constexpr std::size_t kMaxAccessBytes = std::size_t(1) << 20;
// The replay indexes memory per byte; past this many recorded bytes a file
// is refused rather than filling the machine's memory.
inline constexpr std::size_t kMaxMemoryBytes = std::size_t(256) << 20;

// A block of registers laid out like Recording::initial: where each one
// starts, which one has a name (-1: none), and a register's low 64 bits.
std::vector<std::size_t> register_offsets(const std::vector<RegisterSpec> &registers);
int register_index(const std::vector<RegisterSpec> &registers, std::string_view name);
std::uint64_t register_low64(const std::vector<RegisterSpec> &registers, const std::vector<std::size_t> &offsets,
			     const std::vector<std::uint8_t> &block, std::size_t index);

// Adds the recording's chunks (code included) to a trace file being written.
void add_recording(trace::TraceWriter &writer, const Recording &recording);
// The recording a trace file carries; an error names the chunk and its
// offset when a payload does not parse, or says the file has none.
Result<Recording> load_recording(const trace::TraceData &data);

// Bytes a step takes in the file (for the size-per-instruction figure).
std::size_t encoded_size(const Step &step);

}  // namespace vtice::replay
