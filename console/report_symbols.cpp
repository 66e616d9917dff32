#include "report_symbols.hpp"

#include "symbols/loader.hpp"
#include "vtice/read_input.hpp"

namespace vtice::console {

static Result<Symbolizer> load_symbolizer(std::shared_ptr<const InputBytes> input, const std::string &path,
					  std::uint64_t slide, std::string &description)
{
	symbols::LoadOptions options;
	options.slide = static_cast<std::int64_t>(slide);
	auto loaded = symbols::load_symbols_from(symbols::share_input(std::move(input)), path, options);
	if (!loaded)
		return loaded.error();
	description = loaded->description;
	return symbols::make_symbolizer(loaded->table);
}

// The file is read once: a FIFO's writer is gone by a second open.
Result<ExternalSymbols> load_external_symbols(const std::string &path, std::uint64_t slide)
{
	constexpr std::size_t kMaxStream = 256u << 20;	// no symbol source comes near it
	auto input = map_input(path, kMaxStream);
	if (!input)
		return input.error();
	ExternalSymbols out;
	auto elf = trace::ElfCodeSource::from_image(*input, path, slide);
	if (elf)
		out.code = std::make_unique<trace::ElfCodeSource>(std::move(*elf));
	auto symbolize = load_symbolizer(*input, path, slide, out.description);
	if (!symbolize && !out.code)
		return symbolize.error();
	if (symbolize)
		out.symbolize = std::move(*symbolize);
	else
		out.description = "code only (" + symbolize.error().message + ")";
	return out;
}

}  // namespace vtice::console
