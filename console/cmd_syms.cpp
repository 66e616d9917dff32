// vtice syms: load symbols from any source and resolve addresses and names.
#include <cctype>
#include <cstdio>
#include <string>

#include "args.hpp"
#include "messages.hpp"
#include "subcommands.hpp"
#include "symbols/loader.hpp"
#include "vtice/kaslr.hpp"

namespace vtice::console {

namespace {

const char kHelp[] =
	"usage: vtice syms <image|System.map|kallsyms|dump> [--slide HEX] [--base HEX] [--partial] [--list]\n"
	"                  [ADDR|NAME ...]\n"
	"\n"
	"Loads kernel symbols and resolves each argument: an address (hex, 0x optional)\n"
	"prints name+offset, a name prints its address. The source kind is detected from\n"
	"the content: an ELF vmlinux (.symtab, or else its kallsyms tables), a bzImage\n"
	"vmlinuz (xz payload inflated in memory), System.map, /proc/kallsyms text, or a\n"
	"raw memory dump whose first byte is at --base.\n"
	"\n"
	"options:\n"
	"  --slide HEX   KASLR slide added to every kernel address (run-time - link-time)\n"
	"  --base HEX    virtual address of the first byte of a raw memory dump\n"
	"  --list        print every symbol as System.map does (ADDRESS TYPE NAME)\n"
	"  --partial     accept a source that could only be read in part (a System.map\n"
	"                cut short): warn and exit 0; without it that is exit 1\n"
	"\n"
	"example:\n"
	"  vtice syms build/kernel/*/vmlinuz do_sys_openat2 0xffffffff81364650\n";

bool looks_like_address(const std::string &text)
{
	std::string digits = text.rfind("0x", 0) == 0 ? text.substr(2) : text;
	if (digits.size() < 8 && text.rfind("0x", 0) != 0)
		return false;  // short words like "add" are names
	for (char c : digits)
		if (!std::isxdigit(static_cast<unsigned char>(c)))
			return false;
	return !digits.empty();
}

// " at file:line" when the source has DWARF for the address.
std::string source_line(const symbols::LoadedSymbols &loaded, std::uint64_t address)
{
	if (!loaded.lines)
		return {};
	auto line = loaded.lines->lookup(address - static_cast<std::uint64_t>(loaded.table->slide()));
	if (!line)
		return {};
	return " at " + line->file + ":" + std::to_string(line->line);
}

// False (with a message) for an argument that is an address but not a
// 64-bit one: truncating it would answer for another address.
bool resolve(const symbols::LoadedSymbols &loaded, const std::string &query)
{
	const symbols::SymbolTable &table = *loaded.table;
	if (looks_like_address(query)) {
		auto parsed = parse_hex(query);
		if (!parsed) {
			eprintf("vtice syms: %s: longer than 64 bits\n", query.c_str());
			return false;
		}
		std::uint64_t address = static_cast<std::uint64_t>(*parsed);
		Symbolizer symbolize = [&table](std::uint64_t a) { return table.lookup(a); };
		std::string where = table.lookup(address) ? format_address(address, symbolize) : "(no symbol)";
		oprintf("0x%016llx -> %s%s\n", static_cast<unsigned long long>(address), where.c_str(),
			    source_line(loaded, address).c_str());
		return true;
	}
	if (auto address = table.address_of(query))
		oprintf("%s -> 0x%016llx%s\n", query.c_str(), static_cast<unsigned long long>(*address),
			    source_line(loaded, *address).c_str());
	else
		oprintf("%s -> (not found)\n", query.c_str());
	return true;
}

std::optional<long long> hex_option(const ParsedArgs &args, const char *name, bool &bad)
{
	auto text = args.get(name);
	if (!text)
		return std::nullopt;
	auto value = parse_hex(*text);
	if (!value) {
		eprintf("vtice syms: %s: %s\n", name, value.error().to_string().c_str());
		bad = true;
		return std::nullopt;
	}
	return *value;
}

// System.map's form, "ADDRESS TYPE NAME", slid, in address order: for tools
// that take a symbol list (gdb through a symbol file, perf, crash).
void list_symbols(const symbols::SymbolTable &table)
{
	for (const symbols::Symbol &s : table.symbols()) {
		std::string_view name = table.name(s);
		oprintf("%016llx %c %.*s\n", static_cast<unsigned long long>(table.slid(s.address)), s.type,
			    static_cast<int>(name.size()), name.data());
	}
}

}  // namespace

int cmd_syms(int argc, char **argv)
{
	auto args = parse_args(argc, argv, {{"--slide", true}, {"--base", true}, {"--partial", false},
					    {"--list", false}});
	if (!args) {
		eprintf("vtice syms: %s\n", args.error().to_string().c_str());
		return kExitUsage;
	}
	if (args->help) {
		std::fputs(kHelp, stdout);
		return kExitOk;
	}
	if (args->positional.empty()) {
		eprintf("vtice syms: no symbol source given\n\n%s", kHelp);
		return kExitUsage;
	}
	bool bad = false;
	symbols::LoadOptions options;
	if (auto slide = hex_option(*args, "--slide", bad)) {
		if (!plausible_kaslr_slide(*slide)) {
			eprintf("vtice syms: --slide %s: a KASLR slide is within +-1 GiB (the kernel image window)\n",
				args->get("--slide")->c_str());
			return kExitUsage;
		}
		options.slide = *slide;
	}
	if (auto base = hex_option(*args, "--base", bad))
		options.base = static_cast<std::uint64_t>(*base);
	if (bad)
		return kExitUsage;
	auto loaded = symbols::load_symbols(args->positional[0], options);
	if (!loaded) {
		eprintf("vtice syms: %s\n", loaded.error().to_string().c_str());
		return kExitFailure;
	}
	bool list = args->has("--list");
	if (!list)
		oprintf("%zu symbols from %s\n", loaded->table->size(), loaded->description.c_str());
	else
		list_symbols(*loaded->table);
	// A source read only in part answers wrongly for what was cut: loud, and
	// a failure unless the user said a part will do.
	bool partial = loaded->partial.has_value();
	if (partial)
		eprintf("vtice syms: %s: only part of it could be read: %s%s\n",
			     args->positional[0].c_str(), loaded->partial->to_string().c_str(),
			     args->has("--partial") ? "" : " (--partial accepts that)");
	bool ok = true;
	for (std::size_t i = 1; i < args->positional.size(); i++)
		ok = resolve(*loaded, args->positional[i]) && ok;
	if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
		eprintf("vtice syms: writing the output failed\n");
		return kExitFailure;
	}
	return ok && (!partial || args->has("--partial")) ? kExitOk : kExitFailure;
}

}  // namespace vtice::console
