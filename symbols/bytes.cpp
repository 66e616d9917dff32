#include "symbols/bytes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vtice/read_input.hpp"

namespace vtice::symbols {

namespace {

// A stream (a FIFO, a device, /proc) is read up to this much: no kernel
// symbol source comes near it.
constexpr std::size_t kMaxStream = 256u << 20;

}  // namespace

Result<Bytes> read_file(const std::string &path)
{
	return read_input(path, kMaxStream);
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
	if (auto kind = check_input_kind(path, fd); !kind) {
		::close(fd);
		return kind.error();
	}
	struct stat info;
	void *mapped = MAP_FAILED;
	if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0)
		mapped = mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
	if (mapped != MAP_FAILED) {
		::close(fd);
		return SharedBuffer(std::make_shared<MappedFile>(mapped, static_cast<std::size_t>(info.st_size)));
	}
	// The same open file: a FIFO's writer would be gone by a second open.
	std::unique_ptr<FILE, int (*)(FILE *)> file(fdopen(fd, "rb"), std::fclose);
	if (!file) {
		::close(fd);
		return make_error(path + ": " + std::strerror(errno));
	}
	auto bytes = read_open_input(file.get(), path, kMaxStream);
	if (!bytes)
		return bytes.error();
	return share_bytes(std::move(*bytes));
}

}  // namespace vtice::symbols
