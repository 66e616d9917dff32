// Little-endian field access for the trace file: memcpy keeps unaligned
// reads defined, and x86-64 is the only host vtice runs on.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace vtice::trace {

template <class T>
T load_le(const std::uint8_t *p)
{
	T value;
	std::memcpy(&value, p, sizeof(T));
	return value;
}

template <class T>
void store_le(std::uint8_t *p, T value)
{
	std::memcpy(p, &value, sizeof(T));
}

template <class T>
void append_le(std::vector<std::uint8_t> &out, T value)
{
	std::uint8_t bytes[sizeof(T)];
	store_le(bytes, value);
	out.insert(out.end(), bytes, bytes + sizeof(T));
}

}  // namespace vtice::trace
