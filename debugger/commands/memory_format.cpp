#include "memory_format.hpp"

#include <cstring>

namespace vtice::dbg {

Result<void> dump_memory(CommandContext &ctx, std::uint64_t address, unsigned unit_size, std::uint64_t count)
{
	auto bytes = ctx.session.read_memory(address, unit_size * count);
	if (!bytes)
		return bytes.error();
	unsigned per_line = unit_size == 1 ? 8 : unit_size == 2 ? 8 : unit_size == 4 ? 4 : 2;
	for (std::uint64_t i = 0; i < count; i++) {
		if (i % per_line == 0) {
			if (i)
				ctx.out.write("\n");
			ctx.out.print("%s:", describe_address(ctx.session, address + i * unit_size).c_str());
		}
		std::uint64_t v = 0;
		std::memcpy(&v, bytes->data() + i * unit_size, unit_size);
		ctx.out.print("\t0x%0*llx", static_cast<int>(unit_size * 2), static_cast<unsigned long long>(v));
	}
	ctx.out.write("\n");
	return {};
}

}  // namespace vtice::dbg
