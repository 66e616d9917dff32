// Writes the layout that trace_reader.cpp reads; docs/trace-format.md has
// the byte-level description.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

#include "byte_io.hpp"
#include "crc32.hpp"
#include "trace_file.hpp"

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

std::vector<std::uint8_t> TraceWriter::finish()
{
	std::vector<std::uint8_t> payload;
	append_le<std::uint64_t>(payload, record_count_);
	add_chunk(ChunkType::End, payload);
	return std::move(out_);
}

namespace {

Result<void> write_to(const std::string &path, std::span<const std::uint8_t> bytes)
{
	FILE *file = std::fopen(path.c_str(), "wb");
	if (!file)
		return make_error("cannot create " + path + ": " + std::strerror(errno));
	bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
	ok = std::fflush(file) == 0 && ok;
	ok = std::fclose(file) == 0 && ok;
	if (!ok)
		return make_error("cannot write " + path + ": " + std::strerror(errno));
	return {};
}

}  // namespace

// A regular file (or a new one) is written beside itself and renamed into
// place, so a failed or interrupted write never leaves half an output where
// a good file was; a device or FIFO (-o /dev/stdout) is written directly.
Result<void> write_file(const std::string &path, std::span<const std::uint8_t> bytes)
{
	struct stat info;
	if (::stat(path.c_str(), &info) == 0) {
		if (S_ISDIR(info.st_mode))
			return make_error(path + " is a directory");
		if (!S_ISREG(info.st_mode))
			return write_to(path, bytes);
	}
	std::string temp = path + ".vtice-tmp." + std::to_string(::getpid());
	if (auto r = write_to(temp, bytes); !r) {
		std::remove(temp.c_str());
		return r;
	}
	if (std::rename(temp.c_str(), path.c_str()) != 0) {
		std::string why = std::strerror(errno);
		std::remove(temp.c_str());
		return make_error("cannot replace " + path + ": " + why);
	}
	return {};
}

}  // namespace vtice::trace
