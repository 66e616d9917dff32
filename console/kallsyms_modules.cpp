// A function's module by /proc/kallsyms's text (kallsyms_modules.hpp).
#include "kallsyms_modules.hpp"

#include <cctype>
#include <set>

#include "ast.hpp"
#include "rsp/packet.hpp"

namespace vtice::console {
namespace {

struct TextSymbol {
	std::uint64_t address;
	std::string_view name, module;	// module: "" for the kernel's own
};

// "ADDRESS TYPE NAME[\t[MODULE]]": a text symbol, or nothing for a data
// symbol or a suffix that is no module's name.
std::optional<TextSymbol> text_symbol(std::string_view line)
{
	auto sp1 = line.find(' ');
	if (sp1 == std::string_view::npos || line.size() < sp1 + 3 || line[sp1 + 2] != ' ')
		return std::nullopt;
	char type = line[sp1 + 1];
	if (type != 't' && type != 'T')
		return std::nullopt;
	std::string_view rest = line.substr(sp1 + 3);
	auto tab = rest.find('\t');
	auto address = dbg::rsp::parse_hex_u64(line.substr(0, sp1));
	if (!address)
		return std::nullopt;
	if (tab == std::string_view::npos)
		return TextSymbol{*address, rest, ""};
	std::string_view module = rest.substr(tab + 1);
	if (module.size() < 2 || module.front() != '[' || module.back() != ']')
		return TextSymbol{*address, rest.substr(0, tab), ""};
	module = module.substr(1, module.size() - 2);
	if (module.empty() || module.find('/') != std::string_view::npos || module[0] == '.')
		return std::nullopt;	// not a module's name, nor a file beside the kernel's BTF
	return TextSymbol{*address, rest.substr(0, tab), module};
}

// Calls each(symbol) for every text symbol of kallsyms_text.
template <typename Each>
void for_each_text_symbol(std::string_view kallsyms_text, Each each)
{
	while (!kallsyms_text.empty()) {
		auto end = kallsyms_text.find('\n');
		std::string_view line = kallsyms_text.substr(0, end);
		kallsyms_text.remove_prefix(end == std::string_view::npos ? kallsyms_text.size() : end + 1);
		if (auto symbol = text_symbol(line))
			each(*symbol);
	}
}

// The owners of a function's copies, the kernel first, the modules by
// name: "the kernel", "msr", "the kernel and msr", "a, b and c".
std::string owner_names(const std::set<std::string> &modules)
{
	std::string list;
	std::size_t i = 0;
	for (const std::string &m : modules) {	// "" (the kernel) sorts first
		list += i == 0 ? "" : i + 1 == modules.size() ? " and " : ", ";
		list += m.empty() ? std::string("the kernel") : m;
		i++;
	}
	return list;
}

}  // namespace

std::vector<ModuleTextSymbol> text_symbols_named(std::string_view kallsyms_text, std::string_view function)
{
	std::vector<ModuleTextSymbol> out;
	for_each_text_symbol(kallsyms_text, [&](const TextSymbol &symbol) {
		if (symbol.name == function)
			out.push_back({symbol.address, std::string(symbol.module)});
	});
	return out;
}

bool is_c_identifier(std::string_view name)
{
	if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
		return false;
	for (char c : name)
		if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
			return false;
	return true;
}

std::vector<std::string> text_function_names(std::string_view kallsyms_text)
{
	InitText init;
	for_each_text_symbol(kallsyms_text, [&init](const TextSymbol &symbol) {
		if (symbol.module.empty() && symbol.name == "_sinittext")
			init.begin = symbol.address;
		else if (symbol.module.empty() && symbol.name == "_einittext")
			init.end = symbol.address;
	});
	std::set<std::string> names;
	for_each_text_symbol(kallsyms_text, [&](const TextSymbol &symbol) {
		if (is_c_identifier(symbol.name) && !(symbol.module.empty() && init.holds(symbol.address)))
			names.insert(symbol.module.empty() ? std::string(symbol.name)
							   : std::string(symbol.module) + ":" + std::string(symbol.name));
	});
	return {names.begin(), names.end()};
}

Result<std::optional<std::string>> module_of_function(std::string_view kallsyms_text, std::string_view function)
{
	std::set<std::string> modules;
	for (const auto &symbol : text_symbols_named(kallsyms_text, function))
		modules.insert(symbol.module);
	if (modules.empty())
		return std::optional<std::string>();
	if (modules.size() > 1) {
		return make_error(std::string(function) + " is a function of " + owner_names(modules) +
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
		elsewhere.insert(symbol.module);
	}
	std::string where = wanted.empty() ? "the kernel" : "module " + wanted;
	if (elsewhere.empty())
		return make_error("no function " + std::string(function) + " in " + where);
	return make_error("no function " + std::string(function) + " in " + where + " (" + owner_names(elsewhere) +
			  (elsewhere.size() == 1 ? " has one)" : " each have one)"));
}

}  // namespace vtice::console
