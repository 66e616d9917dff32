// libFuzzer target: System.map and /proc/kallsyms text parsing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "symbols/text_symbols.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	(void)vtice::symbols::looks_like_symbol_text({data, size});
	auto got = vtice::symbols::parse_symbol_text({reinterpret_cast<const char *>(data), size});
	if (got.ok()) {
		for (const auto &symbol : got->table.symbols())
			(void)got->table.lookup(symbol.address);
		(void)got->table.address_of("ext4:ext4_iget");
	}
	return 0;
}
