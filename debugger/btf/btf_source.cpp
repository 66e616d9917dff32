#include "btf_source.hpp"

#include "output.hpp"
#include "session.hpp"
#include "symbols/bzimage.hpp"
#include "symbols/elf_image.hpp"

namespace vtice::dbg::btf {

namespace {

// The kernel's BTF is a few MiB (Debian 6.1: 5.2 MiB); more is not BTF.
constexpr std::uint64_t kMaxGuestBtf = 64ull << 20;
constexpr std::size_t kGuestChunk = 256u << 10;

// The bytes of a BTF blob as Types: on the kernel's when base is given.
Result<Types> parse_blob(std::span<const std::uint8_t> bytes, const Types *base, std::string origin)
{
	return base ? Types::parse_split(bytes, *base, std::move(origin)) : Types::parse(bytes, std::move(origin));
}

Result<Types> from_elf(symbols::SharedBuffer bytes, const std::string &path, const Types *base)
{
	auto image = symbols::ElfImage::parse(std::move(bytes));
	if (!image)
		return image.error();
	const symbols::ElfSection *section = image->section(".BTF");
	if (!section || !section->has_bytes)
		return make_error(path + " has no .BTF section (" +
				  (base ? "a module built without CONFIG_DEBUG_INFO_BTF_MODULES"
					: "a kernel built without CONFIG_DEBUG_INFO_BTF") + ")");
	auto data = image->section_bytes(*section);
	return parse_blob({data.data(), data.size()}, base, "the .BTF of " + path);
}

Result<Types> load(const std::string &path, const Types *base)
{
	auto buffer = symbols::open_file(path);
	if (!buffer)
		return buffer.error();
	symbols::ByteSpan span = (*buffer)->bytes();
	if (symbols::ElfImage::looks_like_elf(span))
		return from_elf(*buffer, path, base);
	if (!base && symbols::looks_like_bzimage(span)) {
		auto payload = symbols::extract_bzimage(span);
		if (!payload)
			return payload.error();
		return from_elf(symbols::share_bytes(std::move(*payload)), path, base);
	}
	return parse_blob({span.data(), span.size()}, base, path);
}

}  // namespace

Result<Types> load_file(const std::string &path)
{
	return load(path, nullptr);
}

Result<Types> load_module_file(const std::string &path, const Types &kernel)
{
	return load(path, &kernel);
}

Result<Types> load_guest(Session &session, Output &log)
{
	const SymbolSource *symbols = session.symbols();
	if (!symbols)
		return make_error("no symbols to find the kernel's BTF in memory (__start_BTF)");
	auto start = symbols->lookup("__start_BTF"), stop = symbols->lookup("__stop_BTF");
	if (!start || !stop || *stop <= *start)
		return make_error("the kernel's symbols have no __start_BTF/__stop_BTF (no CONFIG_DEBUG_INFO_BTF)");
	std::uint64_t size = *stop - *start;
	if (size > kMaxGuestBtf)
		return make_error("__start_BTF..__stop_BTF spans " + std::to_string(size) + " bytes; not BTF");
	std::vector<std::uint8_t> blob;
	blob.reserve(size);
	while (blob.size() < size) {
		std::size_t chunk = std::min<std::uint64_t>(kGuestChunk, size - blob.size());
		auto part = session.read_memory(*start + blob.size(), chunk);
		if (!part)
			return make_error("reading the kernel's BTF: " + part.error().message);
		blob.insert(blob.end(), part->begin(), part->end());
		log.progress("BTF: " + std::to_string(blob.size() >> 10) + " of " + std::to_string(size >> 10) +
			     " KiB from guest memory");
	}
	return Types::parse(blob, "the kernel's BTF in guest memory");
}

void KernelTypes::set_sources(std::string btf_file, std::string image_file)
{
	btf_file_ = std::move(btf_file);
	image_file_ = std::move(image_file);
	types_.reset();
	failure_.reset();
}

Result<const Types *> KernelTypes::get(Session &session, Output &log)
{
	if (types_)
		return &*types_;
	if (failure_)
		return make_error(*failure_);
	std::string why;
	auto attempt = [&](Result<Types> loaded) {
		if (loaded)
			types_.emplace(std::move(*loaded));
		else
			why += (why.empty() ? "" : "; ") + loaded.error().message;
		return types_.has_value();
	};
	if (!btf_file_.empty() && attempt(load_file(btf_file_)))
		return &*types_;
	if (!image_file_.empty() && attempt(load_file(image_file_)))
		return &*types_;
	if (attempt(load_guest(session, log)))
		return &*types_;
	failure_ = "no kernel types: " + why;
	return make_error(*failure_);
}

}  // namespace vtice::dbg::btf
