// tf_ layer: writer/reader round trip, CRC, and damaged input: truncation at
// every offset and every single-bit flip of a small file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "byte_io.hpp"
#include "crc32.hpp"
#include "record_builders.hpp"
#include "trace_file.hpp"

namespace vtice::trace {
namespace {

using test::branch_record;

vtice_record branch(std::uint16_t cpu, std::uint64_t tsc, std::uint64_t from, std::uint64_t to)
{
	return branch_record(cpu, tsc, from, to);
}

TraceHeader sample_header()
{
	TraceHeader header;
	header.kaslr_slide = 0x1e000000;
	header.tsc_khz = 2995200;
	header.kernel_release = "6.1.0-27-amd64";
	header.build_id = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02};
	return header;
}

// A small file: two record chunks, a code chunk, a symbols chunk, END.
std::vector<std::uint8_t> small_file()
{
	TraceWriter writer(sample_header());
	std::vector<vtice_record> first = {branch(0, 10, 0x1000, 0x2000), branch(1, 11, 0x2005, 0x1005)};
	writer.add_records(first);
	const std::uint8_t code[] = {0xe8, 0xfb, 0x0f, 0x00, 0x00, 0xc3};
	writer.add_code(0x1000, code);
	std::vector<TraceSymbol> symbols = {{0x1000, 6, "caller"}, {0x2000, 0, "callee"}};
	writer.add_symbols(symbols);
	std::vector<vtice_record> second = {branch(0, 12, 0x2000, 0x1005)};
	writer.add_records(second);
	return writer.finish();
}

TEST(Crc32, MatchesTheCatalogueCheckValue)
{
	// CRC-32/ISO-HDLC check value from the CRC catalogue: crc("123456789").
	const char *check = "123456789";
	EXPECT_EQ(crc32(std::span(reinterpret_cast<const std::uint8_t *>(check), 9)), 0xCBF43926u);
	// Incremental use gives the same value.
	auto all = std::span(reinterpret_cast<const std::uint8_t *>(check), 9);
	EXPECT_EQ(crc32(all.subspan(4), crc32(all.first(4))), 0xCBF43926u);
}

TEST(TraceFile, RoundTripsEverythingTheWriterWrites)
{
	auto bytes = small_file();
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok()) << data.error().to_string();
	EXPECT_FALSE(data->error);
	EXPECT_TRUE(data->complete);
	EXPECT_EQ(data->chunks, 5u);
	TraceHeader want = sample_header();
	EXPECT_EQ(data->header.kaslr_slide, want.kaslr_slide);
	EXPECT_EQ(data->header.tsc_khz, want.tsc_khz);
	EXPECT_EQ(data->header.kernel_release, want.kernel_release);
	EXPECT_EQ(data->header.build_id, want.build_id);
	EXPECT_EQ(data->header.record_version, VTICE_RECORD_VERSION);
	ASSERT_EQ(data->records.size(), 3u);
	EXPECT_EQ(data->records[1].cpu, 1);
	EXPECT_EQ(data->records[1].u.branch.from, 0x2005u);
	EXPECT_EQ(data->records[2].tsc, 12u);
	ASSERT_EQ(data->code.size(), 1u);
	EXPECT_EQ(data->code[0].address, 0x1000u);
	EXPECT_EQ(data->code[0].bytes.size(), 6u);
	ASSERT_EQ(data->symbols.size(), 2u);
	EXPECT_EQ(data->symbols[0].name, "caller");
	EXPECT_EQ(data->symbols[0].size, 6u);
	EXPECT_EQ(data->symbols[1].address, 0x2000u);
}

TEST(TraceFile, SplitsLargeRecordRunsIntoChunks)
{
	std::vector<vtice_record> records;
	for (std::uint64_t i = 0; i < TraceWriter::kRecordsPerChunk + 10; i++)
		records.push_back(branch(0, i, i, i + 1));
	TraceWriter writer(TraceHeader{});
	writer.add_records(records);
	auto bytes = writer.finish();
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok());
	EXPECT_TRUE(data->complete);
	EXPECT_EQ(data->chunks, 3u);  // two RECORDS chunks and END
	ASSERT_EQ(data->records.size(), records.size());
	EXPECT_EQ(std::memcmp(data->records.data(), records.data(), records.size() * sizeof(vtice_record)), 0);
}

TEST(TraceFile, LongReleaseStringsAreCutNotOverflowed)
{
	TraceHeader header;
	header.kernel_release = std::string(200, 'x');
	header.build_id.assign(40, 0xab);
	TraceWriter writer(header);
	auto bytes = writer.finish();
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok());
	EXPECT_EQ(data->header.kernel_release, std::string(kMaxRelease - 1, 'x'));
	EXPECT_EQ(data->header.build_id.size(), kMaxBuildId);
}

// Every prefix of the file is either rejected at the header or yields the
// chunks that fit entirely, with an error naming where the damage starts.
TEST(TraceFile, TruncationAtEveryOffsetKeepsTheValidPrefix)
{
	auto bytes = small_file();
	auto full = read_trace(bytes);
	ASSERT_TRUE(full.ok());
	for (std::size_t n = 0; n < bytes.size(); n++) {
		SCOPED_TRACE(n);
		auto data = read_trace(std::span(bytes).first(n));
		if (n < kHeaderSize) {
			ASSERT_FALSE(data.ok());
			continue;
		}
		ASSERT_TRUE(data.ok());
		ASSERT_TRUE(data->error.has_value());
		EXPECT_FALSE(data->complete);
		ASSERT_TRUE(data->error->offset.has_value());
		EXPECT_LE(*data->error->offset, n);
		EXPECT_GE(*data->error->offset, kHeaderSize);
		EXPECT_LE(data->records.size(), full->records.size());
	}
	// Cut right after the first RECORDS chunk: exactly its records survive.
	std::size_t after_first = kHeaderSize + kChunkHeaderSize + 2 * sizeof(vtice_record);
	auto prefix = read_trace(std::span(bytes).first(after_first));
	ASSERT_TRUE(prefix.ok());
	EXPECT_EQ(prefix->records.size(), 2u);
	EXPECT_EQ(prefix->error->offset, after_first);
	EXPECT_NE(prefix->error->message.find("without an END chunk"), std::string::npos);
}

TEST(TraceFile, EveryBitFlipIsDetected)
{
	auto bytes = small_file();
	for (std::size_t byte = 0; byte < bytes.size(); byte++) {
		for (int bit = 0; bit < 8; bit++) {
			auto damaged = bytes;
			damaged[byte] ^= static_cast<std::uint8_t>(1u << bit);
			auto data = read_trace(damaged);
			bool detected = !data.ok() || data->error.has_value();
			ASSERT_TRUE(detected) << "flip of bit " << bit << " in byte " << byte << " went unnoticed";
		}
	}
}

TEST(TraceFile, CrcErrorNamesTheChunkAndOffset)
{
	auto bytes = small_file();
	std::size_t second_chunk = kHeaderSize + kChunkHeaderSize + 2 * sizeof(vtice_record);
	bytes[second_chunk + kChunkHeaderSize + 9] ^= 0x40;  // inside the CODE payload
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok());
	ASSERT_TRUE(data->error);
	EXPECT_EQ(data->error->offset, second_chunk);
	EXPECT_NE(data->error->message.find("CODE chunk CRC mismatch"), std::string::npos) << data->error->message;
	EXPECT_EQ(data->records.size(), 2u);  // the RECORDS chunk before it
	EXPECT_TRUE(data->code.empty());
}

TEST(TraceFile, HeaderErrors)
{
	auto bytes = small_file();
	auto bad_magic = bytes;
	bad_magic[0] = 'X';
	auto data = read_trace(bad_magic);
	ASSERT_FALSE(data.ok());
	EXPECT_EQ(data.error().offset, 0u);
	EXPECT_NE(data.error().message.find("bad magic"), std::string::npos);

	// Version 2 carries step recordings (replay); 3 is a version to come.
	auto future = bytes;
	future[8] = 3;
	data = read_trace(future);
	ASSERT_FALSE(data.ok());
	EXPECT_NE(data.error().message.find("unsupported trace format version 3"), std::string::npos);

	auto bad_crc = bytes;
	bad_crc[20] ^= 1;  // inside kaslr_slide
	data = read_trace(bad_crc);
	ASSERT_FALSE(data.ok());
	EXPECT_EQ(data.error().offset, 124u);

	EXPECT_FALSE(read_trace_file("/nonexistent/trace.vtrace").ok());
}

// Byte 33 names the records' clock. Files from before it have 0 there and
// read as TSC; a value this reader does not know is refused, not guessed.
TEST(TraceFile, ClockRoundTripsAndUnknownClocksAreRefused)
{
	TraceHeader header = sample_header();
	header.clock = TraceClock::Instructions;
	TraceWriter writer(header);
	auto bytes = writer.finish();
	EXPECT_EQ(bytes[33], 1u);
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok()) << data.error().to_string();
	EXPECT_EQ(data->header.clock, TraceClock::Instructions);

	auto old = small_file();
	EXPECT_EQ(old[33], 0u);
	EXPECT_EQ(read_trace(old)->header.clock, TraceClock::Tsc);

	bytes[33] = 7;
	store_le<std::uint32_t>(&bytes[124], crc32(std::span(bytes.data(), 124)));
	data = read_trace(bytes);
	ASSERT_FALSE(data.ok());
	EXPECT_EQ(data.error().offset, 33u);
	EXPECT_NE(data.error().message.find("unknown clock kind 7"), std::string::npos);
}

TEST(TraceFile, ASlideNoKernelCanHaveIsRefused)
{
	TraceHeader header = sample_header();
	header.kaslr_slide = 0x7fff00000000ull;
	auto data = read_trace(TraceWriter(header).finish());
	ASSERT_FALSE(data.ok());
	EXPECT_EQ(data.error().offset, 16u);
	EXPECT_NE(data.error().message.find("beyond the 1 GiB"), std::string::npos) << data.error().message;
	header.kaslr_slide = static_cast<std::uint64_t>(-0x200000ll);  // a slide down is allowed
	EXPECT_TRUE(read_trace(TraceWriter(header).finish()).ok());
}

TEST(TraceFile, TrailingDataAfterEndIsReported)
{
	auto bytes = small_file();
	std::size_t end = bytes.size();
	bytes.push_back(0);
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok());
	EXPECT_TRUE(data->complete);
	ASSERT_TRUE(data->error);
	EXPECT_EQ(data->error->offset, end);
	EXPECT_EQ(data->records.size(), 3u);
}

// A chunk type this reader does not know, with a good CRC, is skipped whole.
TEST(TraceFile, UnknownChunksFromNewerWritersAreSkipped)
{
	auto bytes = small_file();
	std::vector<std::uint8_t> chunk(kChunkHeaderSize + 3, 0);
	std::uint32_t type = 99;
	std::uint64_t length = 3;
	std::memcpy(&chunk[0], &type, 4);
	std::memcpy(&chunk[8], &length, 8);
	chunk[16] = 'a', chunk[17] = 'b', chunk[18] = 'c';
	std::uint32_t crc = crc32(std::span(&chunk[16], 3), crc32(std::span(&chunk[8], 8), crc32(std::span(&chunk[0], 4))));
	std::memcpy(&chunk[4], &crc, 4);
	bytes.insert(bytes.begin() + kHeaderSize, chunk.begin(), chunk.end());
	auto data = read_trace(bytes);
	ASSERT_TRUE(data.ok());
	EXPECT_FALSE(data->error) << data->error->to_string();
	EXPECT_EQ(data->skipped_chunks, 1u);
	EXPECT_EQ(data->records.size(), 3u);
}

TEST(TraceFile, WritesAndReadsFiles)
{
	std::string path = testing::TempDir() + "/roundtrip.vtrace";
	auto bytes = small_file();
	ASSERT_TRUE(write_file(path, bytes).ok());
	auto data = read_trace_file(path);
	ASSERT_TRUE(data.ok());
	EXPECT_EQ(data->records.size(), 3u);
	EXPECT_FALSE(write_file("/nonexistent/dir/x.vtrace", bytes).ok());
	std::remove(path.c_str());
}

}  // namespace
}  // namespace vtice::trace
