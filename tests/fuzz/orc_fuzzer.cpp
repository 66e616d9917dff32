// libFuzzer target: ORC tables and unwinding over guest memory the fuzzer
// controls. Layout of the input: [u16 ip-table bytes][ip table][entries]
// [stack...]; the stack is also what unwind_step reads.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "symbols/orc.hpp"

using namespace vtice::symbols;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	if (size < 2)
		return 0;
	constexpr std::uint64_t kBase = 0xffffffff82000000ull;
	std::size_t ip_bytes = (data[0] | (data[1] << 8)) & ~std::size_t{3};
	data += 2;
	size -= 2;
	if (ip_bytes > size)
		ip_bytes = size & ~std::size_t{3};
	SymbolTable symbols;
	symbols.add(kBase, 'D', "__start_orc_unwind_ip");
	symbols.add(kBase + ip_bytes, 'D', "__stop_orc_unwind_ip");
	symbols.add(kBase + ip_bytes, 'D', "__start_orc_unwind");
	symbols.finalize();
	MemoryReader read = [&](std::uint64_t address, std::span<std::uint8_t> out) {
		if (address < kBase || address - kBase > size || out.size() > size - (address - kBase))
			return false;
		if (!out.empty())
			std::memcpy(out.data(), data + (address - kBase), out.size());
		return true;
	};
	auto orc = OrcTable::load(symbols, read);
	if (!orc.ok())
		return 0;
	UnwindRegs regs{kBase - 0x1000000 + (size * 977) % 0x10000, kBase + size / 2, kBase + size / 3, true};
	for (int frame = 0; frame < 8; frame++) {
		auto step = unwind_step(*orc, regs, read);
		if (!step.ok() || step->end_of_stack)
			break;
		regs = step->caller;
	}
	return 0;
}
