#include "code_source.hpp"

#include <algorithm>

#include "byte_io.hpp"

namespace vtice::trace {

CodeMap::CodeMap(std::vector<CodeBlob> blobs) : blobs_(std::move(blobs))
{
	std::stable_sort(blobs_.begin(), blobs_.end(),
			 [](const CodeBlob &a, const CodeBlob &b) { return a.address < b.address; });
	for (const CodeBlob &blob : blobs_)
		longest_ = std::max(longest_, blob.bytes.size());
}

std::span<const std::uint8_t> CodeMap::read(std::uint64_t address, std::size_t wanted) const
{
	auto it = std::upper_bound(blobs_.begin(), blobs_.end(), address,
				   [](std::uint64_t a, const CodeBlob &blob) { return a < blob.address; });
	// Walk back past blobs that end before the address (overlaps are rare,
	// short), no further than the longest blob reaches: a trace read from
	// the stub has thousands of small blobs, and an address in none of
	// them (user code) would otherwise walk them all.
	while (it != blobs_.begin()) {
		--it;
		std::uint64_t offset = address - it->address;
		if (offset < it->bytes.size())
			return std::span(it->bytes).subspan(offset, std::min(wanted, it->bytes.size() - offset));
		if (offset >= longest_)
			break;
	}
	return {};
}

Result<ElfCodeSource> ElfCodeSource::open(const std::string &path, std::uint64_t slide)
{
	// A stream is not a vmlinux: no image comes near this.
	constexpr std::size_t kMaxStream = 256u << 20;
	auto input = map_input(path, kMaxStream);
	if (!input)
		return input.error();
	return from_image(std::move(*input), path, slide);
}

Result<ElfCodeSource> ElfCodeSource::from_image(std::shared_ptr<const InputBytes> input, const std::string &path,
						std::uint64_t slide)
{
	ElfCodeSource source;
	source.image_ = std::move(input);
	std::span<const std::uint8_t> image = source.image_->bytes();
	if (image.size() < 64 || image[0] != 0x7f || image[1] != 'E' || image[2] != 'L' || image[3] != 'F')
		return make_error(path + ": not an ELF file", 0);
	if (image[4] != 2 || image[5] != 1 || load_le<std::uint16_t>(&image[18]) != 62)
		return make_error(path + ": not a little-endian ELF64 x86-64 file", 4);
	std::uint64_t phoff = load_le<std::uint64_t>(&image[32]);
	std::uint16_t phentsize = load_le<std::uint16_t>(&image[54]);
	std::uint16_t phnum = load_le<std::uint16_t>(&image[56]);
	if (phentsize < 56 || phoff > image.size() || (image.size() - phoff) / phentsize < phnum)
		return make_error(path + ": program headers run past the end of the file", 32);
	for (std::uint16_t i = 0; i < phnum; i++) {
		const std::uint8_t *ph = &image[phoff + std::size_t(i) * phentsize];
		std::uint64_t offset = load_le<std::uint64_t>(ph + 8), filesz = load_le<std::uint64_t>(ph + 32);
		if (load_le<std::uint32_t>(ph) != 1 /* PT_LOAD */ || filesz == 0)
			continue;
		if (offset > image.size() || image.size() - offset < filesz)
			return make_error(path + ": segment " + std::to_string(i) + " runs past the end of the file",
					  phoff + std::size_t(i) * phentsize);
		source.segments_.push_back({load_le<std::uint64_t>(ph + 16) + slide, offset, filesz});
	}
	if (source.segments_.empty())
		return make_error(path + ": no loadable segments");
	return source;
}

std::span<const std::uint8_t> ElfCodeSource::read(std::uint64_t address, std::size_t wanted) const
{
	for (const Segment &s : segments_) {
		if (address < s.address || address - s.address >= s.size)
			continue;
		std::size_t offset = address - s.address;
		return image_->bytes().subspan(s.file_offset + offset, std::min(wanted, s.size - offset));
	}
	return {};
}

std::span<const std::uint8_t> ChainedCodeSource::read(std::uint64_t address, std::size_t wanted) const
{
	for (const CodeSource *source : sources_) {
		auto bytes = source->read(address, wanted);
		if (!bytes.empty())
			return bytes;
	}
	return {};
}

}  // namespace vtice::trace
