// tf_ layer: the vtice trace file (docs/trace-format.md). A versioned header,
// then checksummed chunks: RECORDS, CODE, SYMBOLS, END. Every reader has a
// writer (CONVENTIONS.md §9); the tests round-trip one through the other.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtice/records.h"
#include "vtice/result.hpp"

namespace vtice::trace {

inline constexpr std::uint8_t kTraceMagic[8] = {'V', 'T', 'I', 'C', 'E', 'T', 'R', 'C'};
// Version 1: branch records, code, symbols. Version 2 adds the REPLAY_*
// chunks of a step recording; a plain trace is still written as version 1,
// so readers older than replay keep reading it.
inline constexpr std::uint16_t kTraceFormatVersion = 1;
inline constexpr std::uint16_t kReplayFormatVersion = 2;
inline constexpr std::size_t kHeaderSize = 128;       // of format versions 1 and 2
inline constexpr std::size_t kChunkHeaderSize = 16;   // type, crc, length
inline constexpr std::size_t kMaxRelease = 52;        // release string field, NUL padded
inline constexpr std::size_t kMaxBuildId = 32;

enum class ChunkType : std::uint32_t {
	Records = 1,  // vtice_record[], in time order per CPU
	Code = 2,     // u64 address, then the bytes of kernel text found there
	Symbols = 3,  // entries: u64 address, u32 size, u16 name length, name
	End = 4,      // u64 number of records in the file; nothing may follow
	// Version 2: a step recording (replay/recording.hpp has the payloads).
	ReplayRegisters = 5,  // the register layout and the values at step 0
	ReplaySteps = 6,      // per step: the registers it changed, the memory it read and wrote
	ReplayMemory = 7,     // u64 address, then memory as it was at step 0
};


const char *chunk_type_name(std::uint32_t type);

// What a record's `tsc` counts. A hypervisor trace stamps the TSC; a trace
// made by stepping a remote target counts instructions retired since it began.
enum class TraceClock : std::uint8_t {
	Tsc = 0,           // TSC ticks (microseconds when tsc_khz is known)
	Instructions = 1,  // instructions retired
};

struct TraceHeader {
	std::uint16_t format_version = kTraceFormatVersion;
	std::uint16_t record_version = VTICE_RECORD_VERSION;
	std::uint64_t kaslr_slide = 0;
	std::uint64_t tsc_khz = 0;         // 0: unknown, durations are shown in TSC ticks
	TraceClock clock = TraceClock::Tsc;
	std::string kernel_release;        // "6.1.0-27-amd64"
	std::vector<std::uint8_t> build_id;  // GNU build-id of vmlinux, when known
};

struct CodeBlob {
	std::uint64_t address = 0;
	std::vector<std::uint8_t> bytes;
};

struct TraceSymbol {
	std::uint64_t address = 0;
	std::uint32_t size = 0;  // 0: up to the next symbol
	std::string name;
};

// A REPLAY_* chunk as stored; replay/recording.cpp parses the payload.
struct ReplayChunk {
	ChunkType type = ChunkType::ReplaySteps;
	std::size_t offset = 0;  // of the payload in the file, for error messages
	std::vector<std::uint8_t> payload;
};

// What a reader recovered. A damaged file still yields every good chunk
// before the damage; error says what was wrong and at which offset.
struct TraceData {
	TraceHeader header;
	std::vector<vtice_record> records;
	std::vector<CodeBlob> code;
	std::vector<TraceSymbol> symbols;
	std::vector<ReplayChunk> replay;  // in file order (version 2)
	std::size_t chunks = 0;          // good chunks read, END included
	std::size_t skipped_chunks = 0;  // unknown types from newer writers
	bool complete = false;           // END seen and consistent
	std::optional<Error> error;
};

// Fails only when the header itself is unusable; later damage lands in
// TraceData::error with the prefix kept.
Result<TraceData> read_trace(std::span<const std::uint8_t> file);
Result<TraceData> read_trace_file(const std::string &path);

class TraceWriter {
public:
	explicit TraceWriter(TraceHeader header);

	void add_records(std::span<const vtice_record> records);
	void add_code(std::uint64_t address, std::span<const std::uint8_t> bytes);
	void add_symbols(std::span<const TraceSymbol> symbols);
	// A REPLAY_* chunk; the file becomes format version 2.
	void add_replay(ChunkType type, std::span<const std::uint8_t> payload);
	// Appends END and returns the whole file; the writer is spent afterwards.
	std::vector<std::uint8_t> finish();

	static constexpr std::size_t kRecordsPerChunk = 65536;

private:
	void add_chunk(ChunkType type, std::span<const std::uint8_t> payload);

	std::vector<std::uint8_t> out_;
	std::uint64_t record_count_ = 0;
};

Result<void> write_file(const std::string &path, std::span<const std::uint8_t> bytes);

}  // namespace vtice::trace
