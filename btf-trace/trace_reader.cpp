// Reads what trace_writer.cpp writes. Every check names the offset of the
// damage; chunks before it are kept (CONVENTIONS.md §12).
#include <cstdio>

#include "byte_io.hpp"
#include "crc32.hpp"
#include "trace_file.hpp"
#include "vtice/kaslr.hpp"
#include "vtice/read_input.hpp"

namespace vtice::trace {

namespace {

std::string hex32(std::uint32_t value)
{
	char text[16];
	std::snprintf(text, sizeof(text), "0x%08x", value);
	return text;
}

std::string hex64(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

Result<TraceHeader> parse_header(std::span<const std::uint8_t> file)
{
	if (file.size() < 16 || !std::equal(std::begin(kTraceMagic), std::end(kTraceMagic), file.begin()))
		return make_error("not a vtice trace file: bad magic", 0);
	TraceHeader header;
	header.format_version = load_le<std::uint16_t>(&file[8]);
	std::uint16_t header_size = load_le<std::uint16_t>(&file[10]);
	header.record_version = load_le<std::uint16_t>(&file[12]);
	std::uint16_t record_size = load_le<std::uint16_t>(&file[14]);
	if (header.format_version != kTraceFormatVersion && header.format_version != kReplayFormatVersion)
		return make_error("unsupported trace format version " + std::to_string(header.format_version) +
				  " (this vtice reads versions 1 and 2)", 8);
	if (header_size < kHeaderSize)
		return make_error("header size " + std::to_string(header_size) + " is below 128", 10);
	if (file.size() < header_size)
		return make_error("truncated header: file has " + std::to_string(file.size()) +
				  " bytes, header needs " + std::to_string(header_size), file.size());
	if (header.record_version != VTICE_RECORD_VERSION || record_size != sizeof(vtice_record))
		return make_error("unsupported record format version " + std::to_string(header.record_version) +
				  " / size " + std::to_string(record_size), 12);
	std::uint32_t stored = load_le<std::uint32_t>(&file[124]);
	std::uint32_t computed = crc32(file.first(124));
	if (stored != computed)
		return make_error("header CRC mismatch: stored " + hex32(stored) + ", computed " + hex32(computed), 124);
	header.kaslr_slide = load_le<std::uint64_t>(&file[16]);
	if (!plausible_kaslr_slide(static_cast<std::int64_t>(header.kaslr_slide)))
		return make_error("KASLR slide " + hex64(header.kaslr_slide) +
				  " is beyond the 1 GiB a kernel can move: a damaged header", 16);
	header.tsc_khz = load_le<std::uint64_t>(&file[24]);
	// Byte 33 was reserved (0) before it named the clock: older files read as TSC.
	if (file[33] > static_cast<std::uint8_t>(TraceClock::Instructions))
		return make_error("unknown clock kind " + std::to_string(file[33]) + " (0 TSC, 1 instructions)", 33);
	header.clock = static_cast<TraceClock>(file[33]);
	std::size_t id_len = std::min<std::size_t>(file[32], kMaxBuildId);
	header.build_id.assign(&file[40], &file[40] + id_len);
	const char *release = reinterpret_cast<const char *>(&file[72]);
	header.kernel_release.assign(release, strnlen(release, kMaxRelease));
	return header;
}

// Returns an error message for a payload that does not parse, or "".
std::string parse_symbols(std::span<const std::uint8_t> payload, std::vector<TraceSymbol> &out,
			  std::size_t &bad_at)
{
	std::size_t at = 0;
	while (at < payload.size()) {
		bad_at = at;
		if (payload.size() - at < 14)
			return "symbol entry truncated";
		TraceSymbol symbol;
		symbol.address = load_le<std::uint64_t>(&payload[at]);
		symbol.size = load_le<std::uint32_t>(&payload[at + 8]);
		std::uint16_t len = load_le<std::uint16_t>(&payload[at + 12]);
		if (payload.size() - at - 14 < len)
			return "symbol name runs past the chunk";
		symbol.name.assign(reinterpret_cast<const char *>(&payload[at + 14]), len);
		out.push_back(std::move(symbol));
		at += 14 + len;
	}
	return "";
}

class ChunkReader {
public:
	ChunkReader(std::span<const std::uint8_t> file, TraceData &data) : file_(file), data_(data) {}
	void run(std::size_t offset);

private:
	bool read_one(std::size_t &offset);
	bool apply(std::uint32_t type, std::span<const std::uint8_t> payload, std::size_t payload_at);
	void fail(std::string message, std::size_t offset) { data_.error = make_error(std::move(message), offset); }

	std::span<const std::uint8_t> file_;
	TraceData &data_;
};

void ChunkReader::run(std::size_t offset)
{
	while (!data_.complete && !data_.error) {
		if (offset == file_.size()) {
			fail("trace ends without an END chunk (truncated file?)", offset);
			return;
		}
		if (!read_one(offset))
			return;
	}
	if (data_.complete && offset != file_.size())
		fail(std::to_string(file_.size() - offset) + " byte(s) of trailing data after the END chunk", offset);
}

bool ChunkReader::read_one(std::size_t &offset)
{
	std::size_t left = file_.size() - offset;
	if (left < kChunkHeaderSize) {
		fail("truncated chunk header (" + std::to_string(left) + " of 16 bytes)", offset);
		return false;
	}
	const std::uint8_t *head = &file_[offset];
	std::uint32_t type = load_le<std::uint32_t>(head);
	std::uint32_t stored = load_le<std::uint32_t>(head + 4);
	std::uint64_t length = load_le<std::uint64_t>(head + 8);
	if (length > left - kChunkHeaderSize) {
		fail(std::string(chunk_type_name(type)) + " chunk length " + std::to_string(length) +
		     " runs past the end of the file (" + std::to_string(left - kChunkHeaderSize) +
		     " bytes left)", offset);
		return false;
	}
	auto payload = file_.subspan(offset + kChunkHeaderSize, length);
	std::uint32_t computed = crc32(payload, crc32(std::span(head + 8, 8), crc32(std::span(head, 4))));
	if (computed != stored) {
		fail(std::string(chunk_type_name(type)) + " chunk CRC mismatch: stored " + hex32(stored) +
		     ", computed " + hex32(computed), offset);
		return false;
	}
	if (!apply(type, payload, offset + kChunkHeaderSize))
		return false;
	data_.chunks++;
	offset += kChunkHeaderSize + length;
	return true;
}

bool ChunkReader::apply(std::uint32_t type, std::span<const std::uint8_t> payload, std::size_t payload_at)
{
	switch (static_cast<ChunkType>(type)) {
	case ChunkType::Records: {
		if (payload.size() % sizeof(vtice_record) != 0) {
			fail("RECORDS chunk length " + std::to_string(payload.size()) + " is not a multiple of 32",
			     payload_at - kChunkHeaderSize);
			return false;
		}
		std::size_t n = payload.size() / sizeof(vtice_record);
		std::size_t first = data_.records.size();
		data_.records.resize(first + n);
		std::memcpy(data_.records.data() + first, payload.data(), payload.size());
		return true;
	}
	case ChunkType::Code:
		if (payload.size() < 8) {
			fail("CODE chunk shorter than its 8-byte address", payload_at - kChunkHeaderSize);
			return false;
		}
		data_.code.push_back({load_le<std::uint64_t>(payload.data()),
				      std::vector<std::uint8_t>(payload.begin() + 8, payload.end())});
		return true;
	case ChunkType::Symbols: {
		std::size_t bad_at = 0;
		std::vector<TraceSymbol> symbols;
		std::string problem = parse_symbols(payload, symbols, bad_at);
		if (!problem.empty()) {
			fail("SYMBOLS chunk: " + problem, payload_at + bad_at);
			return false;
		}
		data_.symbols.insert(data_.symbols.end(), symbols.begin(), symbols.end());
		return true;
	}
	case ChunkType::ReplayRegisters:
	case ChunkType::ReplaySteps:
	case ChunkType::ReplayMemory:
		if (data_.header.format_version < kReplayFormatVersion) {
			fail(std::string(chunk_type_name(type)) + " chunk in a version 1 file",
			     payload_at - kChunkHeaderSize);
			return false;
		}
		data_.replay.push_back({static_cast<ChunkType>(type), payload_at,
					std::vector<std::uint8_t>(payload.begin(), payload.end())});
		return true;
	case ChunkType::End:
		if (payload.size() != 8 || load_le<std::uint64_t>(payload.data()) != data_.records.size()) {
			fail("END chunk does not match the " + std::to_string(data_.records.size()) +
			     " records read", payload_at - kChunkHeaderSize);
			return false;
		}
		data_.complete = true;
		return true;
	}
	data_.skipped_chunks++;  // a newer writer's chunk: its CRC was good, so skip it whole
	return true;
}

}  // namespace

const char *chunk_type_name(std::uint32_t type)
{
	switch (static_cast<ChunkType>(type)) {
	case ChunkType::Records: return "RECORDS";
	case ChunkType::Code: return "CODE";
	case ChunkType::Symbols: return "SYMBOLS";
	case ChunkType::End: return "END";
	case ChunkType::ReplayRegisters: return "REPLAY_REGISTERS";
	case ChunkType::ReplaySteps: return "REPLAY_STEPS";
	case ChunkType::ReplayMemory: return "REPLAY_MEMORY";
	}
	return "unknown";
}

Result<TraceData> read_trace(std::span<const std::uint8_t> file)
{
	auto header = parse_header(file);
	if (!header)
		return header.error();
	TraceData data;
	data.header = std::move(*header);
	ChunkReader(file, data).run(load_le<std::uint16_t>(&file[10]));
	return data;
}

Result<TraceData> read_trace_file(const std::string &path)
{
	// A trace streamed through a pipe is bounded like any other stream.
	auto bytes = read_input(path, std::size_t(256) << 20);
	if (!bytes)
		return bytes.error();
	auto data = read_trace(*bytes);
	if (!data)
		return make_error(path + ": " + data.error().message, data.error().offset);
	return data;
}

}  // namespace vtice::trace
