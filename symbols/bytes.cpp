#include "symbols/bytes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace vtice::symbols {

Result<Bytes> read_file(const std::string &path)
{
	std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), std::fclose);
	if (!file)
		return make_error(path + ": " + std::strerror(errno));
	Bytes bytes;
	// Regular files are read in one go; /proc files report size 0 and are
	// read in chunks.
	if (std::fseek(file.get(), 0, SEEK_END) == 0) {
		long size = std::ftell(file.get());
		std::rewind(file.get());
		if (size > 0) {
			bytes.resize(static_cast<std::size_t>(size));
			bytes.resize(std::fread(bytes.data(), 1, bytes.size(), file.get()));
		}
	}
	std::uint8_t chunk[1 << 16];
	for (;;) {
		std::size_t got = std::fread(chunk, 1, sizeof(chunk), file.get());
		bytes.insert(bytes.end(), chunk, chunk + got);
		if (got < sizeof(chunk))
			break;
	}
	if (std::ferror(file.get()))
		return make_error(path + ": read error: " + std::strerror(errno), bytes.size());
	return bytes;
}

}  // namespace vtice::symbols
