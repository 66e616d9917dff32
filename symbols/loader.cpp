#include "symbols/loader.hpp"

#include "symbols/bzimage.hpp"
#include "symbols/text_symbols.hpp"

namespace vtice::symbols {

namespace {

Result<KallsymsRecovery> kallsyms_in_elf(const ElfImage &image)
{
	// The tables live in .rodata (a few MiB): searching it first spares
	// scanning the text segment, most of a vmlinux's bytes.
	if (const ElfSection *rodata = image.section(".rodata"); rodata && rodata->has_bytes)
		if (auto recovered = recover_kallsyms_tables(image.section_bytes(*rodata), rodata->address))
			return recovered;
	if (image.segments().empty())
		return recover_kallsyms_tables(image.bytes(), 0);
	std::optional<Error> informative;
	std::uint64_t searched = 0;
	for (const ElfSegment &segment : image.segments()) {
		auto recovered = recover_kallsyms_tables(image.segment_bytes(segment), segment.vaddr);
		if (recovered)
			return recovered;
		searched += segment.file_size;
		// A token table without the rest says more than "no token table".
		Error error = recovered.error();
		if (error.message.rfind("no kallsyms token table", 0) == 0)
			continue;
		if (error.offset)
			*error.offset += segment.offset;
		informative = error;
	}
	if (informative)
		return *informative;
	if (auto needed = image.truncated_from())
		return make_error("ELF file is truncated (its segments need " + std::to_string(*needed) +
					  " bytes) and the part present has no .symtab and no kallsyms tables",
				  image.bytes().size());
	return make_error("ELF file has no .symtab and no kallsyms tables in its " + std::to_string(searched) +
			  " loadable bytes (not a kernel image, or built without CONFIG_KALLSYMS)");
}

Result<LoadedSymbols> from_kallsyms(Result<KallsymsRecovery> recovered, LoadedSymbols out, const std::string &where)
{
	if (!recovered)
		return recovered.error();
	out.table = std::make_shared<SymbolTable>(std::move(recovered->table));
	out.layout = recovered->layout;
	out.partial = recovered->partial;
	out.description = "kallsyms tables in " + where + " (" + recovered->layout.style() + " layout)";
	return out;
}

Result<LoadedSymbols> from_elf(SharedBuffer bytes, const std::string &name, SourceKind kallsyms_kind)
{
	auto image = ElfImage::parse(bytes);
	if (!image)
		return make_error(name + ": " + image.error().message, image.error().offset);
	LoadedSymbols out;
	if (image->section(".debug_info")) {
		if (auto lines = DwarfLines::open(bytes))
			out.lines = std::make_shared<DwarfLines>(std::move(*lines));
	}
	if (image->has_symtab()) {
		auto table = image->symtab();
		if (!table)
			return make_error(name + ": " + table.error().message, table.error().offset);
		out.kind = SourceKind::elf_symtab;
		out.table = std::make_shared<SymbolTable>(std::move(*table));
		out.description = ".symtab in " + name;
		out.image = std::move(*image);
		return out;
	}
	out.kind = kallsyms_kind;
	auto recovered = kallsyms_in_elf(*image);
	if (!recovered)
		return make_error(name + ": " + recovered.error().message, recovered.error().offset);
	out.image = std::move(*image);
	return from_kallsyms(std::move(recovered), std::move(out), name);
}

Result<LoadedSymbols> from_text(ByteSpan bytes, const std::string &name)
{
	auto parsed = parse_symbol_text(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
	if (!parsed)
		return make_error(name + ": " + parsed.error().message, parsed.error().offset);
	LoadedSymbols out;
	out.kind = parsed->flavor == TextFlavor::kallsyms ? SourceKind::kallsyms_text : SourceKind::system_map;
	out.partial = parsed->partial;
	out.table = std::make_shared<SymbolTable>(std::move(parsed->table));
	out.description = (out.kind == SourceKind::kallsyms_text ? "kallsyms text " : "System.map ") + name;
	return out;
}

Result<LoadedSymbols> detect_and_load(SharedBuffer buffer, const std::string &name,
				      const LoadOptions &options)
{
	ByteSpan bytes = buffer->bytes();
	if (bytes.empty())
		return make_error(name + ": empty file");
	if (ElfImage::looks_like_elf(bytes))
		return from_elf(buffer, name, SourceKind::elf_kallsyms);
	if (looks_like_bzimage(bytes)) {
		auto inflated = extract_bzimage(bytes);
		if (!inflated)
			return make_error(name + ": " + inflated.error().message, inflated.error().offset);
		SharedBuffer elf = share_bytes(std::move(*inflated));
		if (!ElfImage::looks_like_elf(elf->bytes()))
			return make_error(name + ": bzImage payload is not an ELF file");
		return from_elf(elf, name, SourceKind::bzimage_kallsyms);
	}
	if (!options.base && looks_like_symbol_text(bytes))
		return from_text(bytes, name);
	LoadedSymbols out;
	out.kind = SourceKind::memory_dump;
	auto recovered = recover_kallsyms_tables(bytes, options.base.value_or(0));
	if (!recovered && !options.base)
		return make_error(name + ": not an ELF, bzImage, System.map or kallsyms text, and no kallsyms "
				  "tables found in it as a raw dump (" + recovered.error().message + ")");
	if (!recovered)
		return make_error(name + ": " + recovered.error().message, recovered.error().offset);
	char where[64];
	std::snprintf(where, sizeof(where), " at 0x%llx", static_cast<unsigned long long>(options.base.value_or(0)));
	return from_kallsyms(std::move(recovered), std::move(out), "memory dump " + name + where);
}

}  // namespace

Result<LoadedSymbols> load_symbols_from(SharedBuffer bytes, const std::string &name,
					const LoadOptions &options)
{
	auto loaded = detect_and_load(std::move(bytes), name, options);
	if (loaded)
		loaded->table->set_slide(options.slide);
	return loaded;
}

Result<LoadedSymbols> load_symbols(const std::string &path, const LoadOptions &options)
{
	auto bytes = open_file(path);
	if (!bytes)
		return bytes.error();
	return load_symbols_from(std::move(*bytes), path, options);
}

}  // namespace vtice::symbols
