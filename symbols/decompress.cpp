#include "symbols/decompress.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

namespace vtice::symbols {

namespace {

// A kernel is < 100 MiB inflated. The limit keeps the peak while growing
// (the old buffer and the new, 256 + 512 MiB) under 1 GiB.
constexpr std::size_t kMaxInflated = std::size_t{512} << 20;

// An output buffer that grows by doubling up to kMaxInflated, refusing as it
// goes (never after allocating past the limit). The hint comes from the
// file, so it is trusted only as far as compression can reach.
class Output {
public:
	Output(std::size_t input_size, std::size_t hint)
		: first_(std::clamp<std::size_t>(std::min<std::size_t>(hint ? hint : input_size * 4, input_size * 64 + 4096),
						 4096, kMaxInflated))
	{
	}

	// Room for at least want more bytes; false at the limit, or when the
	// memory cannot be had (out_of_memory() then says so).
	bool reserve(std::size_t want)
	{
		try {
			if (bytes_.empty())
				bytes_.resize(first_);
			while (bytes_.size() - used_ < want) {
				if (bytes_.size() >= kMaxInflated)
					return false;
				bytes_.resize(std::min(bytes_.size() * 2, kMaxInflated));
			}
		} catch (const std::bad_alloc &) {
			out_of_memory_ = true;
			return false;
		}
		return true;
	}
	bool out_of_memory() const { return out_of_memory_; }
	std::uint8_t *tail() { return bytes_.data() + used_; }
	std::size_t room() const { return bytes_.size() - used_; }
	std::size_t used() const { return used_; }
	void advance(std::size_t count) { used_ += count; }
	Bytes take() &&
	{
		bytes_.resize(used_);
		return std::move(bytes_);
	}

private:
	std::size_t first_;
	Bytes bytes_;
	std::size_t used_ = 0;
	bool out_of_memory_ = false;
};

Error too_large(const Output &out, std::uint64_t at)
{
	if (out.out_of_memory())
		return make_error("not enough memory to inflate the payload past " + std::to_string(out.used() >> 20) +
					  " MiB",
				  at);
	return make_error("payload inflates to more than " + std::to_string(kMaxInflated >> 20) + " MiB", at);
}

Error truncated(const char *kind, std::size_t produced, std::uint64_t at)
{
	return make_error(std::string(kind) + " stream truncated after " + std::to_string(produced) +
				  " output bytes",
			  at);
}

}  // namespace

std::string compression_of(ByteSpan payload)
{
	struct Magic {
		const char *name;
		const char *bytes;
		std::size_t size;
	};
	static const Magic magics[] = {
		{"xz", "\xfd" "7zXZ\0", 6}, {"gzip", "\x1f\x8b", 2}, {"bzip2", "BZh", 3},
		{"lzma", "\x5d\x00\x00", 3}, {"lzo", "\x89LZO", 4}, {"lz4", "\x02\x21\x4c\x18", 4},
		{"zstd", "\x28\xb5\x2f\xfd", 4},
	};
	for (const Magic &magic : magics)
		if (payload.size() >= magic.size && std::memcmp(payload.data(), magic.bytes, magic.size) == 0)
			return magic.name;
	return "unknown";
}

Result<Bytes> decompress(const std::string &kind, ByteSpan input, std::size_t size_hint)
{
	if (kind == "xz")
		return xz_decompress(input, size_hint);
	if (kind == "gzip")
		return gzip_decompress(input, size_hint);
	if (kind == "lz4")
		return lz4_legacy_decompress(input, size_hint);
	if (kind == "zstd")
		return zstd_decompress(input, size_hint);
	return make_error("payload is compressed with " + kind + ", which vtice cannot inflate "
			  "(supported: xz, gzip, lz4, zstd)", 0);
}

Result<Bytes> xz_decompress(ByteSpan input, std::size_t size_hint)
{
	lzma_stream stream = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK)
		return make_error("liblzma: cannot start the xz decoder");
	std::unique_ptr<lzma_stream, void (*)(lzma_stream *)> guard(&stream, lzma_end);
	Output out(input.size(), size_hint);
	stream.next_in = input.data();
	stream.avail_in = input.size();
	for (;;) {
		if (!out.reserve(1))
			return too_large(out, stream.total_in);
		stream.next_out = out.tail();
		stream.avail_out = out.room();
		std::size_t before = stream.total_out;
		lzma_ret ret = lzma_code(&stream, LZMA_FINISH);
		out.advance(stream.total_out - before);
		if (ret == LZMA_STREAM_END)
			return std::move(out).take();
		if (ret == LZMA_OK && stream.avail_out == 0)
			continue;
		if (ret == LZMA_BUF_ERROR || ret == LZMA_OK)
			return truncated("xz", stream.total_out, stream.total_in);
		return make_error("xz stream corrupt (liblzma error " + std::to_string(ret) + ")", stream.total_in);
	}
}

Result<Bytes> gzip_decompress(ByteSpan input, std::size_t size_hint)
{
	z_stream stream{};
	if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)  // 16: gzip header
		return make_error("zlib: cannot start the gzip decoder");
	std::unique_ptr<z_stream, int (*)(z_stream *)> guard(&stream, inflateEnd);
	Output out(input.size(), size_hint);
	std::size_t consumed = 0;
	for (;;) {
		if (!out.reserve(1))
			return too_large(out, consumed);
		// zlib counts in uInt: feed and drain at most 1 GiB per call.
		stream.next_in = const_cast<Bytef *>(input.data() + consumed);
		stream.avail_in = static_cast<uInt>(std::min<std::size_t>(input.size() - consumed, kMaxInflated));
		stream.next_out = out.tail();
		stream.avail_out = static_cast<uInt>(std::min(out.room(), kMaxInflated));
		uInt in_before = stream.avail_in, out_before = stream.avail_out;
		int ret = inflate(&stream, Z_NO_FLUSH);
		consumed += in_before - stream.avail_in;
		out.advance(out_before - stream.avail_out);
		if (ret == Z_STREAM_END)
			return std::move(out).take();
		if (ret == Z_OK && (stream.avail_out == 0 || consumed < input.size()))
			continue;
		if (ret == Z_OK || ret == Z_BUF_ERROR)
			return truncated("gzip", out.used(), consumed);
		return make_error(std::string("gzip stream corrupt: ") + (stream.msg ? stream.msg : "zlib error"), consumed);
	}
}

// The kernel's lz4 payload is the legacy frame: magic, then blocks of
// {u32 compressed size, data} each inflating to at most 8 MiB; the build
// appends the inflated size as a u32, which is not a block.
Result<Bytes> lz4_legacy_decompress(ByteSpan input, std::size_t size_hint)
{
	constexpr std::uint32_t kMagic = 0x184c2102;
	constexpr std::size_t kBlock = 8u << 20;
	if (read_le<std::uint32_t>(input, 0) != kMagic)
		return make_error("not an lz4 legacy stream", 0);
	Output out(input.size(), size_hint);
	std::size_t at = 4;
	while (input.size() - at > 4) {
		std::uint32_t size = *read_le<std::uint32_t>(input, at);
		if (size == kMagic) {  // concatenated frames
			at += 4;
			continue;
		}
		if (size > static_cast<std::uint32_t>(LZ4_compressBound(kBlock)) || size > input.size() - at - 4)
			return truncated("lz4", out.used(), at);
		if (!out.reserve(kBlock))
			return too_large(out, at);
		int got = LZ4_decompress_safe(reinterpret_cast<const char *>(input.data() + at + 4),
					      reinterpret_cast<char *>(out.tail()), static_cast<int>(size),
					      static_cast<int>(kBlock));
		if (got < 0)
			return make_error("lz4 block corrupt", at);
		out.advance(static_cast<std::size_t>(got));
		at += 4 + size;
	}
	return std::move(out).take();
}

Result<Bytes> zstd_decompress(ByteSpan input, std::size_t size_hint)
{
	std::unique_ptr<ZSTD_DStream, std::size_t (*)(ZSTD_DStream *)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
	if (!stream || ZSTD_isError(ZSTD_initDStream(stream.get())))
		return make_error("libzstd: cannot start the zstd decoder");
	Output out(input.size(), size_hint);
	ZSTD_inBuffer in{input.data(), input.size(), 0};
	for (;;) {
		if (!out.reserve(1))
			return too_large(out, in.pos);
		ZSTD_outBuffer buffer{out.tail(), out.room(), 0};
		std::size_t ret = ZSTD_decompressStream(stream.get(), &buffer, &in);
		out.advance(buffer.pos);
		if (ZSTD_isError(ret))
			return make_error(std::string("zstd stream corrupt: ") + ZSTD_getErrorName(ret), in.pos);
		if (ret == 0)
			return std::move(out).take();
		if (in.pos == in.size && buffer.pos < buffer.size)
			return truncated("zstd", out.used(), in.pos);
	}
}

}  // namespace vtice::symbols
