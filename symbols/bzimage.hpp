// x86 bzImage (vmlinuz): recognising the boot header and inflating the
// kernel payload in-process (Debian: xz; Ubuntu and the lz4 rigs: lz4;
// Arch/Fedora: zstd; older: gzip).
#pragma once

#include <string>

#include "symbols/bytes.hpp"
#include "symbols/decompress.hpp"

namespace vtice::symbols {

struct BzImageInfo {
	std::uint16_t protocol = 0;        // boot protocol version, e.g. 0x020f
	std::size_t payload_offset = 0;    // into the file
	std::size_t payload_length = 0;
	std::string compression;           // "xz", "gzip", "lz4", "zstd", ... or "unknown"
};

bool looks_like_bzimage(ByteSpan bytes);
Result<BzImageInfo> parse_bzimage(ByteSpan bytes);
// The decompressed payload: the vmlinux ELF the boot code would run.
Result<Bytes> extract_bzimage(ByteSpan bytes);

}  // namespace vtice::symbols
