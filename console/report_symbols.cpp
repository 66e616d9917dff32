#include "report_symbols.hpp"

#include "symbols/loader.hpp"

namespace vtice::console {

static Result<Symbolizer> load_symbolizer(const std::string &path, std::uint64_t slide, std::string &description)
{
	symbols::LoadOptions options;
	options.slide = static_cast<std::int64_t>(slide);
	auto loaded = symbols::load_symbols(path, options);
	if (!loaded)
		return loaded.error();
	description = loaded->description;
	return symbols::make_symbolizer(loaded->table);
}

Result<ExternalSymbols> load_external_symbols(const std::string &path, std::uint64_t slide)
{
	ExternalSymbols out;
	auto elf = trace::ElfCodeSource::open(path, slide);
	if (elf)
		out.code = std::make_unique<trace::ElfCodeSource>(std::move(*elf));
	auto symbolize = load_symbolizer(path, slide, out.description);
	if (!symbolize && !out.code)
		return symbolize.error();
	if (symbolize)
		out.symbolize = std::move(*symbolize);
	else
		out.description = "code only (" + symbolize.error().message + ")";
	return out;
}

}  // namespace vtice::console
