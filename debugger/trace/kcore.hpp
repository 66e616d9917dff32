// The running kernel's memory through /proc/kcore (root only): an ELF core
// file whose PT_LOAD segments map kernel virtual addresses to file offsets.
// The local tracer reads the text its records ran through from here, as
// the stub tracer reads it over RSP. The file is read with pread on demand:
// it is as large as the address space it describes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "symbols/memory_reader.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg {

class Kcore {
public:
	// Checks the ELF header and reads the program headers; errors name
	// the file and what was wrong with it.
	static Result<Kcore> open(const std::string &path);
	Kcore(Kcore &&other) noexcept;
	Kcore &operator=(Kcore &&) = delete;
	Kcore(const Kcore &) = delete;
	~Kcore();

	// len bytes at a kernel virtual address; an error when any of them is
	// outside every segment or the read comes back short.
	Result<std::vector<std::uint8_t>> read(std::uint64_t address, std::size_t len) const;
	// read() as the symbols/ readers take it (a whole read or none); this
	// Kcore must outlive it.
	symbols::MemoryReader reader() const;

	struct Segment {
		std::uint64_t address, offset, size;
	};
	const std::vector<Segment> &segments() const { return segments_; }

private:
	Kcore(int fd, std::string path, std::vector<Segment> segments);

	int fd_;
	std::string path_;
	std::vector<Segment> segments_;
};

// Parses an ELF64 little-endian core file's header and program headers
// (the bytes from offset 0 up to the end of the program header table):
// its PT_LOAD segments. Exposed for tests and the fuzzer.
Result<std::vector<Kcore::Segment>> parse_kcore_segments(const std::vector<std::uint8_t> &head);

}  // namespace vtice::dbg
