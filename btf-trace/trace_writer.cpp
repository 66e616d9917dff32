// Writes the layout that trace_reader.cpp reads; docs/trace-format.md has
// the byte-level description.
#include <algorithm>
#include <cstring>
#include <memory>

#include "byte_io.hpp"
#include "crc32.hpp"
#include "trace_file.hpp"
#include "vtice/write_output.hpp"

namespace vtice::trace {

namespace {

std::vector<std::uint8_t> encode_header(const TraceHeader &header)
{
	std::vector<std::uint8_t> out(kHeaderSize, 0);
	std::copy(std::begin(kTraceMagic), std::end(kTraceMagic), out.begin());
	store_le<std::uint16_t>(&out[8], header.format_version);
	store_le<std::uint16_t>(&out[10], kHeaderSize);
	store_le<std::uint16_t>(&out[12], header.record_version);
	store_le<std::uint16_t>(&out[14], sizeof(vtice_record));
	store_le<std::uint64_t>(&out[16], header.kaslr_slide);
	store_le<std::uint64_t>(&out[24], header.tsc_khz);
	std::size_t id_len = std::min(header.build_id.size(), kMaxBuildId);
	out[32] = static_cast<std::uint8_t>(id_len);
	out[33] = static_cast<std::uint8_t>(header.clock);
	std::copy_n(header.build_id.begin(), id_len, &out[40]);
	// One byte short of the field so the string stays NUL terminated.
	std::size_t release_len = std::min(header.kernel_release.size(), kMaxRelease - 1);
	std::copy_n(header.kernel_release.begin(), release_len, &out[72]);
	store_le<std::uint32_t>(&out[124], crc32(std::span(out.data(), 124)));
	return out;
}

}  // namespace

TraceWriter::TraceWriter(TraceHeader header) : out_(encode_header(header)) {}

void TraceWriter::add_chunk(ChunkType type, std::span<const std::uint8_t> payload)
{
	std::uint8_t head[kChunkHeaderSize];
	store_le<std::uint32_t>(head, static_cast<std::uint32_t>(type));
	store_le<std::uint64_t>(head + 8, payload.size());
	// The CRC covers type and length too, so a flipped type or length is caught.
	std::uint32_t crc = crc32(std::span(head, 4));
	crc = crc32(std::span(head + 8, 8), crc);
	crc = crc32(payload, crc);
	store_le<std::uint32_t>(head + 4, crc);
	out_.insert(out_.end(), head, head + kChunkHeaderSize);
	out_.insert(out_.end(), payload.begin(), payload.end());
}

void TraceWriter::add_records(std::span<const vtice_record> records)
{
	while (!records.empty()) {
		std::size_t n = std::min(records.size(), kRecordsPerChunk);
		auto bytes = std::as_bytes(records.first(n));
		add_chunk(ChunkType::Records,
			  std::span(reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size()));
		record_count_ += n;
		records = records.subspan(n);
	}
}

void TraceWriter::add_code(std::uint64_t address, std::span<const std::uint8_t> bytes)
{
	std::vector<std::uint8_t> payload;
	payload.reserve(8 + bytes.size());
	append_le<std::uint64_t>(payload, address);
	payload.insert(payload.end(), bytes.begin(), bytes.end());
	add_chunk(ChunkType::Code, payload);
}

void TraceWriter::add_symbols(std::span<const TraceSymbol> symbols)
{
	std::vector<std::uint8_t> payload;
	for (const TraceSymbol &symbol : symbols) {
		std::size_t len = std::min<std::size_t>(symbol.name.size(), UINT16_MAX);
		append_le<std::uint64_t>(payload, symbol.address);
		append_le<std::uint32_t>(payload, symbol.size);
		append_le<std::uint16_t>(payload, static_cast<std::uint16_t>(len));
		payload.insert(payload.end(), symbol.name.begin(), symbol.name.begin() + len);
	}
	add_chunk(ChunkType::Symbols, payload);
}

void TraceWriter::add_replay(ChunkType type, std::span<const std::uint8_t> payload)
{
	if (load_le<std::uint16_t>(&out_[8]) != kReplayFormatVersion) {
		store_le<std::uint16_t>(&out_[8], kReplayFormatVersion);
		store_le<std::uint32_t>(&out_[124], crc32(std::span(out_.data(), 124)));
	}
	add_chunk(type, payload);
}

std::vector<std::uint8_t> TraceWriter::finish()
{
	std::vector<std::uint8_t> payload;
	append_le<std::uint64_t>(payload, record_count_);
	add_chunk(ChunkType::End, payload);
	return std::move(out_);
}

// The project's rule for outputs (vtice/write_output.hpp): never an input
// of the run, renamed into place, every write checked.
Result<void> write_file(const std::string &path, std::span<const std::uint8_t> bytes)
{
	return write_output_file(path, bytes);
}

}  // namespace vtice::trace
