// The compressors a bzImage payload may use, behind one call. Each decoder
// bounds its output (1 GiB) and reports a truncated or corrupt stream with
// the input offset where it stopped.
#pragma once

#include <string>

#include "symbols/bytes.hpp"

namespace vtice::symbols {

// "xz", "gzip", "lz4", "zstd", ... or "unknown", from the stream's magic.
std::string compression_of(ByteSpan payload);

// Inflates a payload of a supported kind (xz, gzip, lz4 legacy, zstd);
// size_hint reserves the output when it is plausible.
Result<Bytes> decompress(const std::string &kind, ByteSpan input, std::size_t size_hint);

Result<Bytes> xz_decompress(ByteSpan input, std::size_t size_hint);
Result<Bytes> gzip_decompress(ByteSpan input, std::size_t size_hint);
Result<Bytes> lz4_legacy_decompress(ByteSpan input, std::size_t size_hint);
Result<Bytes> zstd_decompress(ByteSpan input, std::size_t size_hint);

}  // namespace vtice::symbols
