// libFuzzer target: what a user types into the debugger (command lines and
// expressions) and symbol text files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "commands/command.hpp"
#include "expr.hpp"
#include "symbol_source.hpp"

using namespace vtice::dbg;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::string_view input(reinterpret_cast<const char *>(data), size);
	(void)tokenize(input);
	ExprContext ctx;
	ctx.reg = [](std::string_view name) -> vtice::Result<std::uint64_t> {
		if (name == "rax")
			return 42;
		return vtice::make_error("no register");
	};
	ctx.mem = [](std::uint64_t address, unsigned size) -> vtice::Result<std::uint64_t> {
		if (address & 1)
			return vtice::make_error("unreadable");
		return address * size;
	};
	ctx.sym = [](std::string_view name) -> std::optional<std::uint64_t> {
		if (name == "do_sys_openat2")
			return 0xffffffff81363fa0ull;
		return std::nullopt;
	};
	(void)evaluate_expression(input, ctx);
	auto table = parse_kallsyms_text(input, "fuzz");
	if (table) {
		(void)(*table)->lookup("do_sys_openat2");
		(void)(*table)->symbolize(0xffffffff81000010ull);
	}
	return 0;
}
