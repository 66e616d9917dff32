// Where the decoder finds the instruction bytes at a branch's `from`: the
// trace's own CODE chunks, or the text of a vmlinux ELF. Small on purpose so
// a live-memory source can join later.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "trace_file.hpp"
#include "vtice/read_input.hpp"
#include "vtice/result.hpp"

namespace vtice::trace {

class CodeSource {
public:
	virtual ~CodeSource() = default;
	// The bytes known from address on (possibly fewer than wanted, or none).
	virtual std::span<const std::uint8_t> read(std::uint64_t address, std::size_t wanted) const = 0;
};

// Code ranges from CODE chunks, looked up by binary search. Overlapping
// blobs are allowed; the one starting last before the address wins.
class CodeMap : public CodeSource {
public:
	CodeMap() = default;
	explicit CodeMap(std::vector<CodeBlob> blobs);
	std::span<const std::uint8_t> read(std::uint64_t address, std::size_t wanted) const override;
	bool empty() const { return blobs_.empty(); }

private:
	std::vector<CodeBlob> blobs_;  // sorted by address
	std::size_t longest_ = 0;      // bytes of the longest blob
};

// The loadable segments of an ELF64 x86-64 image (vmlinux), at their
// link addresses plus a KASLR slide. Reads program headers only; symbols
// are symbols/'s business.
class ElfCodeSource : public CodeSource {
public:
	static Result<ElfCodeSource> open(const std::string &path, std::uint64_t slide);
	// The same from an input already read (name: where it came from).
	static Result<ElfCodeSource> from_image(std::shared_ptr<const InputBytes> image, const std::string &name,
						std::uint64_t slide);
	std::span<const std::uint8_t> read(std::uint64_t address, std::size_t wanted) const override;

private:
	struct Segment {
		std::uint64_t address;
		std::size_t file_offset, size;
	};
	std::shared_ptr<const InputBytes> image_;	// mapped, not copied
	std::vector<Segment> segments_;
};

// The first source that has bytes at the address answers.
class ChainedCodeSource : public CodeSource {
public:
	void add(const CodeSource *source) { sources_.push_back(source); }
	std::span<const std::uint8_t> read(std::uint64_t address, std::size_t wanted) const override;

private:
	std::vector<const CodeSource *> sources_;
};

}  // namespace vtice::trace
