// libFuzzer target: kallsyms table recovery over arbitrary bytes. The first
// byte picks the window's base alignment so unaligned windows are covered.
#include <cstddef>
#include <cstdint>

#include "symbols/kallsyms.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	if (size == 0)
		return 0;
	std::uint64_t base = 0xffffffff82000000ull + (data[0] & 7);
	auto got = vtice::symbols::recover_kallsyms_tables({data + 1, size - 1}, base);
	if (got.ok()) {
		const auto &table = got->table;
		for (const auto &symbol : table.symbols()) {
			(void)table.lookup(symbol.address + 1);
			(void)table.address_of(table.name(symbol));
		}
	}
	return 0;
}
