// Reading a whole input file, bounded: the one way the tools read a file
// the user names. A directory or socket is refused before anything is read;
// a regular file is read (or mapped) at its size, refused past kMaxFile; a
// stream (FIFO, device, /proc file) is read in chunks up to max_stream
// bytes, so /dev/zero cannot eat the memory. Memory that cannot be had is
// an error, never an abort.
//
// Every file read this way is remembered as an input of the run (by device
// and inode): no output of the same run may be written over it
// (vtice/write_output.hpp).
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <algorithm>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vtice/result.hpp"

namespace vtice {

// No input of any vtice tool comes near this (a vmlinux with DWARF is
// under 1 GiB); a larger regular file is a mistake or a sparse file.
constexpr std::uint64_t kMaxFile = 3ull << 30;

// The files this run reads, by device and inode: regular files and FIFOs.
// Devices are not (/dev/null, a terminal are fine as outputs).
class RunInputs {
public:
	static RunInputs &get()
	{
		static RunInputs inputs;
		return inputs;
	}
	void note(const struct stat &info, const std::string &path)
	{
		std::lock_guard<std::mutex> lock(mutex_);
		for (const auto &known : known_)
			if (known.device == info.st_dev && known.inode == info.st_ino)
				return;
		known_.push_back({info.st_dev, info.st_ino, path});
	}
	void note_fd(int fd, const std::string &path)
	{
		struct stat info;
		if (fstat(fd, &info) == 0 && (S_ISREG(info.st_mode) || S_ISFIFO(info.st_mode)))
			note(info, path);
	}
	// A path the run will read, noted before it is opened (so an output
	// can be refused before any work); a path that does not exist is not.
	void note_path(const std::string &path)
	{
		struct stat info;
		if (::stat(path.c_str(), &info) == 0 && (S_ISREG(info.st_mode) || S_ISFIFO(info.st_mode)))
			note(info, path);
	}
	// The input that path names (through links of any kind), or nothing.
	std::optional<std::string> named_by(const std::string &path) const
	{
		struct stat info;
		if (::stat(path.c_str(), &info) != 0)
			return std::nullopt;
		std::lock_guard<std::mutex> lock(mutex_);
		for (const auto &known : known_)
			if (known.device == info.st_dev && known.inode == info.st_ino)
				return known.path;
		return std::nullopt;
	}
	// A file of vtice's own that it reads and then replaces (a cache).
	void forget(const std::string &path)
	{
		struct stat info;
		if (::stat(path.c_str(), &info) != 0)
			return;
		std::lock_guard<std::mutex> lock(mutex_);
		std::erase_if(known_, [&](const Known &k) { return k.device == info.st_dev && k.inode == info.st_ino; });
	}

private:
	struct Known {
		dev_t device;
		ino_t inode;
		std::string path;
	};
	mutable std::mutex mutex_;
	std::vector<Known> known_;
};

inline Result<void> check_input_kind(const std::string &path, int fd)
{
	struct stat info;
	if (fstat(fd, &info) != 0)
		return make_error(path + ": " + std::strerror(errno));
	if (S_ISDIR(info.st_mode))
		return make_error(path + ": is a directory, not a file");
	if (S_ISSOCK(info.st_mode))
		return make_error(path + ": is a socket, not a file");
	if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > kMaxFile)
		return make_error(path + ": " + std::to_string(static_cast<std::uint64_t>(info.st_size) >> 20) +
				  " MiB, larger than any input vtice reads (" + std::to_string(kMaxFile >> 20) +
				  " MiB at most)");
	RunInputs::get().note_fd(fd, path);
	return {};
}

inline Error out_of_memory(const std::string &path, std::size_t bytes)
{
	return make_error(path + ": not enough memory to read it (" + std::to_string(bytes >> 20) + " MiB)");
}

inline Result<std::vector<std::uint8_t>> read_open_input(FILE *file, const std::string &path, std::size_t max_stream)
{
	if (auto kind = check_input_kind(path, fileno(file)); !kind)
		return kind.error();
	std::vector<std::uint8_t> bytes;
	struct stat info;
	bool regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
	try {
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
			if (bytes.size() > (regular ? kMaxFile : max_stream))
				return make_error(path + ": more than " + std::to_string(max_stream >> 20) +
						  " MiB and still going: not an input this tool reads");
		}
	} catch (const std::bad_alloc &) {
		return out_of_memory(path, regular ? static_cast<std::size_t>(info.st_size) : bytes.size());
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

// An input's bytes, mapped (a regular file) or read (a stream), valid for
// as long as someone holds the object.
class InputBytes {
public:
	virtual ~InputBytes() = default;
	virtual std::span<const std::uint8_t> bytes() const = 0;
};

namespace detail {
class MappedInput final : public InputBytes {
public:
	MappedInput(void *address, std::size_t size) : address_(address), size_(size) {}
	~MappedInput() override { munmap(address_, size_); }
	MappedInput(const MappedInput &) = delete;
	MappedInput &operator=(const MappedInput &) = delete;
	std::span<const std::uint8_t> bytes() const override
	{
		return {static_cast<const std::uint8_t *>(address_), size_};
	}

private:
	void *address_;
	std::size_t size_;
};

class ReadInput final : public InputBytes {
public:
	explicit ReadInput(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)) {}
	std::span<const std::uint8_t> bytes() const override { return bytes_; }

private:
	std::vector<std::uint8_t> bytes_;
};
}  // namespace detail

// A regular file is mapped, not copied (a 66 MB vmlinux); a stream is read
// from the one descriptor opened (a FIFO's writer is gone by a second open),
// and so is a file that cannot be mapped: sysfs's /sys/kernel/btf/vmlinux
// refuses mmap with ENODEV before Linux 6.16.
inline Result<std::shared_ptr<const InputBytes>> map_input(const std::string &path, std::size_t max_stream)
{
	std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), std::fclose);
	if (!file)
		return make_error(path + ": " + std::strerror(errno));
	int fd = fileno(file.get());
	if (auto kind = check_input_kind(path, fd); !kind)
		return kind.error();
	struct stat info;
	if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
		auto size = static_cast<std::size_t>(info.st_size);
		void *mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (mapped != MAP_FAILED)
			return std::shared_ptr<const InputBytes>(std::make_shared<detail::MappedInput>(mapped, size));
		if (errno != ENODEV)
			return make_error(path + ": cannot map its " + std::to_string(size >> 20) +
					  " MiB: " + std::strerror(errno));
	}
	auto bytes = read_open_input(file.get(), path, max_stream);
	if (!bytes)
		return bytes.error();
	return std::shared_ptr<const InputBytes>(std::make_shared<detail::ReadInput>(std::move(*bytes)));
}

}  // namespace vtice
