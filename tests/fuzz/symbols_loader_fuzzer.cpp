// libFuzzer target: the whole loader (content detection, ELF through libelf,
// bzImage header and xz payload, text, raw kallsyms) over arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "symbols/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	auto bytes = std::make_shared<const vtice::symbols::Bytes>(data, data + size);
	auto loaded = vtice::symbols::load_symbols_from(bytes, "fuzz");
	if (!loaded.ok())
		return 0;
	(void)loaded->table->lookup(0xffffffff81000000ull);
	if (loaded->image) {
		for (const auto &section : loaded->image->sections())
			(void)loaded->image->section_bytes(section);
		(void)loaded->image->at_vaddr(0xffffffff81000000ull, 16);
	}
	if (loaded->lines)
		(void)loaded->lines->lookup(0x401000);
	return 0;
}
