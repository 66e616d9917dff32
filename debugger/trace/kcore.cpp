#include "kcore.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "../hex.hpp"
#include "vtice/read_input.hpp"

namespace vtice::dbg {

namespace {

constexpr std::size_t kMaxPhdrs = 65535;
// The kernel writes the program headers right after the ELF header; a
// table further out is not a kcore, and reading up to it could be huge.
constexpr std::uint64_t kMaxPhoff = 1u << 20;

Result<Elf64_Ehdr> parse_header(const std::vector<std::uint8_t> &head)
{
	Elf64_Ehdr eh;
	if (head.size() < sizeof(eh))
		return make_error("shorter than an ELF header");
	std::memcpy(&eh, head.data(), sizeof(eh));
	if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return make_error("not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return make_error("not a little-endian ELF64 file");
	if (eh.e_type != ET_CORE)
		return make_error("not an ELF core file");
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > kMaxPhdrs)
		return make_error("bad program header table (" + std::to_string(eh.e_phnum) + " entries of " +
				  std::to_string(eh.e_phentsize) + " bytes)");
	if (eh.e_phoff < sizeof(eh) || eh.e_phoff > kMaxPhoff)
		return make_error("program header table at an implausible offset", eh.e_phoff);
	return eh;
}

Result<void> read_exactly(int fd, std::uint64_t offset, void *buf, std::size_t len)
{
	auto *p = static_cast<std::uint8_t *>(buf);
	while (len) {
		ssize_t n = pread(fd, p, len, static_cast<off_t>(offset));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return make_error(n < 0 ? std::strerror(errno) : "short read", offset);
		p += n;
		offset += static_cast<std::uint64_t>(n);
		len -= static_cast<std::size_t>(n);
	}
	return {};
}

}  // namespace

Result<std::vector<Kcore::Segment>> parse_kcore_segments(const std::vector<std::uint8_t> &head)
{
	auto eh = parse_header(head);
	if (!eh)
		return eh.error();
	std::uint64_t end = eh->e_phoff + std::uint64_t{eh->e_phnum} * sizeof(Elf64_Phdr);
	if (eh->e_phoff > head.size() || end > head.size())
		return make_error("program header table past the end of the header read", eh->e_phoff);
	std::vector<Kcore::Segment> segments;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		std::memcpy(&ph, head.data() + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		if (ph.p_vaddr + ph.p_filesz < ph.p_vaddr || ph.p_offset + ph.p_filesz < ph.p_offset)
			return make_error("segment " + std::to_string(i) + " wraps around", eh->e_phoff + i * sizeof(ph));
		segments.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
	}
	if (segments.empty())
		return make_error("no loadable segment");
	return segments;
}

// The header, then the header and the program header table it names.
static Result<std::vector<Kcore::Segment>> read_segments(int fd)
{
	std::vector<std::uint8_t> head(sizeof(Elf64_Ehdr));
	if (auto r = read_exactly(fd, 0, head.data(), head.size()); !r)
		return r.error();
	auto eh = parse_header(head);
	if (!eh)
		return eh.error();
	head.resize(eh->e_phoff + std::uint64_t{eh->e_phnum} * sizeof(Elf64_Phdr));
	if (auto r = read_exactly(fd, 0, head.data(), head.size()); !r)
		return r.error();
	return parse_kcore_segments(head);
}

Result<Kcore> Kcore::open(const std::string &path)
{
	// Without blocking: a FIFO named by mistake would wait for a writer.
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return make_error(path + ": " + std::strerror(errno) +
				  (errno == EACCES || errno == EPERM ? " (root only)" : ""));
	struct stat info;
	if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
		::close(fd);
		return make_error(path + ": not a kernel core file (/proc/kcore is a regular file)");
	}
	RunInputs::get().note_fd(fd, path);
	auto segments = read_segments(fd);
	if (!segments) {
		::close(fd);
		return make_error(path + ": " + segments.error().to_string());
	}
	return Kcore(fd, path, std::move(*segments));
}

Kcore::Kcore(int fd, std::string path, std::vector<Segment> segments)
	: fd_(fd), path_(std::move(path)), segments_(std::move(segments))
{
}

Kcore::Kcore(Kcore &&other) noexcept
	: fd_(other.fd_), path_(std::move(other.path_)), segments_(std::move(other.segments_))
{
	other.fd_ = -1;
}

Kcore::~Kcore()
{
	if (fd_ >= 0)
		::close(fd_);
}

Result<std::vector<std::uint8_t>> Kcore::read(std::uint64_t address, std::size_t len) const
{
	for (const Segment &s : segments_) {
		if (address < s.address || address - s.address > s.size || len > s.size - (address - s.address))
			continue;
		std::vector<std::uint8_t> out(len);
		auto r = read_exactly(fd_, s.offset + (address - s.address), out.data(), len);
		if (!r)
			return make_error(path_ + ": reading " + hex(address) + ": " + r.error().message);
		return out;
	}
	return make_error(path_ + ": " + hex(address) + " is in no segment");
}

symbols::MemoryReader Kcore::reader() const
{
	return [this](std::uint64_t address, std::span<std::uint8_t> out) {
		auto bytes = read(address, out.size());
		if (!bytes)
			return false;
		std::copy(bytes->begin(), bytes->end(), out.begin());
		return true;
	};
}

}  // namespace vtice::dbg
