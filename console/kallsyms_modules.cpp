// A function's module by /proc/kallsyms's text (kallsyms_modules.hpp).
#include "kallsyms_modules.hpp"

#include <set>

#include "ast.hpp"
#include "rsp/packet.hpp"

namespace vtice::console {
namespace {

// "ADDRESS TYPE NAME[\t[MODULE]]": a text symbol of that name, or nothing
// for another name, a data symbol or a suffix that is no module's name.
std::optional<ModuleTextSymbol> text_symbol(std::string_view line, std::string_view function)
{
	auto sp1 = line.find(' ');
	if (sp1 == std::string_view::npos || line.size() < sp1 + 3 || line[sp1 + 2] != ' ')
		return std::nullopt;
	char type = line[sp1 + 1];
	if (type != 't' && type != 'T')
		return std::nullopt;
	std::string_view rest = line.substr(sp1 + 3);
	auto tab = rest.find('\t');
	if (rest.substr(0, tab) != function)
		return std::nullopt;
	auto address = dbg::rsp::parse_hex_u64(line.substr(0, sp1));
	if (!address)
		return std::nullopt;
	if (tab == std::string_view::npos)
		return ModuleTextSymbol{*address, ""};
	std::string_view module = rest.substr(tab + 1);
	if (module.size() < 2 || module.front() != '[' || module.back() != ']')
		return ModuleTextSymbol{*address, ""};
	module = module.substr(1, module.size() - 2);
	if (module.empty() || module.find('/') != std::string_view::npos || module[0] == '.')
		return std::nullopt;	// not a module's name, nor a file beside the kernel's BTF
	return ModuleTextSymbol{*address, std::string(module)};
}

std::string owner_name(const std::string &module)
{
	return module.empty() ? std::string("the kernel") : module;
}

}  // namespace

std::vector<ModuleTextSymbol> text_symbols_named(std::string_view kallsyms_text, std::string_view function)
{
	std::vector<ModuleTextSymbol> out;
	while (!kallsyms_text.empty()) {
		auto end = kallsyms_text.find('\n');
		std::string_view line = kallsyms_text.substr(0, end);
		kallsyms_text.remove_prefix(end == std::string_view::npos ? kallsyms_text.size() : end + 1);
		if (auto symbol = text_symbol(line, function))
			out.push_back(std::move(*symbol));
	}
	return out;
}

Result<std::optional<std::string>> module_of_function(std::string_view kallsyms_text, std::string_view function)
{
	std::set<std::string> modules;
	for (const auto &symbol : text_symbols_named(kallsyms_text, function))
		modules.insert(symbol.module);
	if (modules.empty())
		return std::optional<std::string>();
	if (modules.size() > 1) {
		std::string list;
		for (const auto &m : modules)
			list += (list.empty() ? "" : ", ") + owner_name(m);
		return make_error(std::string(function) + " is a function of " + list +
				  ": which one's types is not known (name it: fn:MODULE:" + std::string(function) + ")");
	}
	return std::optional<std::string>(*modules.begin());
}

Result<std::uint64_t> function_in_module(std::string_view kallsyms_text, std::string_view module,
					 std::string_view function)
{
	std::string wanted = module == probes::kVmlinux ? std::string() : std::string(module);
	std::set<std::string> elsewhere;
	for (const auto &symbol : text_symbols_named(kallsyms_text, function)) {
		if (symbol.module == wanted)
			return symbol.address;
		elsewhere.insert(owner_name(symbol.module));
	}
	std::string where = wanted.empty() ? "the kernel" : "module " + wanted;
	if (elsewhere.empty())
		return make_error("no function " + std::string(function) + " in " + where);
	std::string list;
	for (const auto &m : elsewhere)
		list += (list.empty() ? "" : ", ") + m;
	return make_error("no function " + std::string(function) + " in " + where + " (" + list + " has one)");
}

}  // namespace vtice::console
