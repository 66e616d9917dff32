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
