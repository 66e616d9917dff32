#include "symbols/bytes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

class VectorBuffer : public Buffer {
public:
	explicit VectorBuffer(std::shared_ptr<const Bytes> bytes) : bytes_(std::move(bytes)) {}
	ByteSpan bytes() const override { return *bytes_; }

private:
	std::shared_ptr<const Bytes> bytes_;
};

class MappedFile : public Buffer {
public:
	MappedFile(void *address, std::size_t size) : address_(address), size_(size) {}
	~MappedFile() override { munmap(address_, size_); }
	MappedFile(const MappedFile &) = delete;
	MappedFile &operator=(const MappedFile &) = delete;
	ByteSpan bytes() const override { return {static_cast<const std::uint8_t *>(address_), size_}; }

private:
	void *address_;
	std::size_t size_;
};

}  // namespace

SharedBuffer share_bytes(Bytes bytes)
{
	return std::make_shared<VectorBuffer>(std::make_shared<const Bytes>(std::move(bytes)));
}

SharedBuffer share_bytes(std::shared_ptr<const Bytes> bytes)
{
	return std::make_shared<VectorBuffer>(std::move(bytes));
}

Result<SharedBuffer> open_file(const std::string &path)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return make_error(path + ": " + std::strerror(errno));
	struct stat info;
	void *mapped = MAP_FAILED;
	if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0)
		mapped = mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
	::close(fd);
	if (mapped != MAP_FAILED)
		return SharedBuffer(std::make_shared<MappedFile>(mapped, static_cast<std::size_t>(info.st_size)));
	auto bytes = read_file(path);
	if (!bytes)
		return bytes.error();
	return share_bytes(std::move(*bytes));
}

}  // namespace vtice::symbols
