// Bounded little-endian reads over untrusted bytes.
//
// Every parser in symbols/ reads kernel images, memory dumps and text that
// may be truncated or corrupt; these helpers make an out-of-range read an
// answer (nothing) rather than undefined behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vtice/read_input.hpp"
#include "vtice/result.hpp"

namespace vtice::symbols {

using Bytes = std::vector<std::uint8_t>;
using ByteSpan = std::span<const std::uint8_t>;

template <class T>
inline std::optional<T> read_le(ByteSpan bytes, std::size_t offset)
{
	if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
		return std::nullopt;
	T value;
	std::memcpy(&value, bytes.data() + offset, sizeof(T));
	return value;  // x86-64 and the kernels we read are little-endian
}

// Unchecked variant for loops whose bounds were validated up front.
template <class T>
inline T load_le(const std::uint8_t *at)
{
	T value;
	std::memcpy(&value, at, sizeof(T));
	return value;
}

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment)
{
	return (value + alignment - 1) & ~(alignment - 1);
}

// Reads a whole file; the error names the path and the reason.
Result<Bytes> read_file(const std::string &path);

// Bytes that stay valid as long as someone holds the buffer: a vector, or a
// read-only mapping of a file (a 66 MB vmlinux is mapped, not copied).
class Buffer {
public:
	virtual ~Buffer() = default;
	virtual ByteSpan bytes() const = 0;
};
using SharedBuffer = std::shared_ptr<const Buffer>;

SharedBuffer share_bytes(Bytes bytes);
// An input file already read or mapped (vtice/read_input.hpp), as a Buffer.
SharedBuffer share_input(std::shared_ptr<const InputBytes> input);
SharedBuffer share_bytes(std::shared_ptr<const Bytes> bytes);
// Maps a regular file read-only; reads files that cannot be mapped (/proc,
// pipes, empty files). A mapped file must not shrink while it is in use.
Result<SharedBuffer> open_file(const std::string &path);

}  // namespace vtice::symbols
