// Reading a whole input file, bounded: the one way the tools read a file
// the user names. A directory or socket is refused before anything is read;
// a regular file is read at its size; a stream (FIFO, device, /proc file)
// in chunks up to max_stream bytes, so /dev/zero cannot eat the memory.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "vtice/result.hpp"

namespace vtice {

inline Result<void> check_input_kind(const std::string &path, int fd)
{
	struct stat info;
	if (fstat(fd, &info) != 0)
		return make_error(path + ": " + std::strerror(errno));
	if (S_ISDIR(info.st_mode))
		return make_error(path + ": is a directory, not a file");
	if (S_ISSOCK(info.st_mode))
		return make_error(path + ": is a socket, not a file");
	return {};
}

inline Result<std::vector<std::uint8_t>> read_open_input(FILE *file, const std::string &path, std::size_t max_stream)
{
	if (auto kind = check_input_kind(path, fileno(file)); !kind)
		return kind.error();
	std::vector<std::uint8_t> bytes;
	struct stat info;
	bool regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
	if (regular && info.st_size > 0) {
		bytes.resize(static_cast<std::size_t>(info.st_size));
		bytes.resize(std::fread(bytes.data(), 1, bytes.size(), file));
	}
	std::uint8_t chunk[1 << 16];
	for (;;) {
		std::size_t got = std::fread(chunk, 1, sizeof(chunk), file);
		bytes.insert(bytes.end(), chunk, chunk + got);
		if (got < sizeof(chunk))
			break;
		if (!regular && bytes.size() > max_stream)
			return make_error(path + ": more than " + std::to_string(max_stream >> 20) +
					  " MiB and still going: not an input this tool reads");
	}
	if (std::ferror(file))
		return make_error(path + ": read error: " + std::strerror(errno), bytes.size());
	return bytes;
}

inline Result<std::vector<std::uint8_t>> read_input(const std::string &path, std::size_t max_stream)
{
	std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), std::fclose);
	if (!file)
		return make_error(path + ": " + std::strerror(errno));
	return read_open_input(file.get(), path, max_stream);
}

}  // namespace vtice
