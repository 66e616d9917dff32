// A module's function's types from the module's BTF (module_btf.hpp).
#include "module_btf.hpp"

#include <memory>
#include <optional>
#include <set>

#include "btf/btf_source.hpp"
#include "vtice/read_input.hpp"

namespace vtice::console {
namespace {

constexpr std::size_t kMaxKallsyms = 64u << 20;	// /proc/kallsyms is ~10 MB with modules

// "ADDRESS TYPE NAME[\t[MODULE]]": the module of a text symbol of that name,
// "" for the kernel's, nothing for another name or a data symbol.
std::optional<std::string> text_symbol_module(std::string_view line, std::string_view function)
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
	if (tab == std::string_view::npos)
		return std::string();
	std::string_view module = rest.substr(tab + 1);
	if (module.size() < 2 || module.front() != '[' || module.back() != ']')
		return std::string();
	module = module.substr(1, module.size() - 2);
	if (module.empty() || module.find('/') != std::string_view::npos || module[0] == '.')
		return std::nullopt;	// not a module's name, nor a file beside the kernel's BTF
	return std::string(module);
}

// kallsyms, read on the first question and kept (or why it could not be).
class KallsymsText {
public:
	explicit KallsymsText(std::string path) : path_(std::move(path)) {}

	Result<std::string_view> text()
	{
		if (!read_) {
			read_ = true;
			auto bytes = read_input(path_, kMaxKallsyms);
			if (bytes)
				text_.assign(bytes->begin(), bytes->end());
			else
				failure_ = bytes.error().message;
		}
		if (!failure_.empty())
			return make_error(path_ + " cannot be read for a module's: " + failure_);
		return std::string_view(text_);
	}
	const std::string &path() const { return path_; }

private:
	std::string path_;
	bool read_ = false;
	std::string text_, failure_;
};

std::string directory_of(const std::string &path)
{
	auto slash = path.rfind('/');
	return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

Result<std::optional<std::string>> module_of_function(std::string_view kallsyms_text, std::string_view function)
{
	std::set<std::string> modules;
	while (!kallsyms_text.empty()) {
		auto end = kallsyms_text.find('\n');
		std::string_view line = kallsyms_text.substr(0, end);
		kallsyms_text.remove_prefix(end == std::string_view::npos ? kallsyms_text.size() : end + 1);
		if (auto module = text_symbol_module(line, function))
			modules.insert(*module);
	}
	if (modules.empty())
		return std::optional<std::string>();
	if (modules.size() > 1) {
		std::string list;
		for (const auto &m : modules)
			list += (list.empty() ? "" : ", ") + (m.empty() ? std::string("the kernel") : m);
		return make_error(std::string(function) + " is a function of " + list +
				  ": which one's types is not known");
	}
	return std::optional<std::string>(*modules.begin());
}

ModuleTypesLookup local_module_types(std::string kallsyms_path, std::string kernel_btf_path)
{
	auto kallsyms = std::make_shared<KallsymsText>(std::move(kallsyms_path));
	return [kallsyms, dir = directory_of(kernel_btf_path)](std::string_view function,
								const dbg::btf::Types &kernel) -> Result<ModuleTypes> {
		std::string name(function);
		auto text = kallsyms->text();
		if (!text)
			return make_error("no function " + name + " in " + kernel.origin() + ", and " +
					  text.error().message);
		auto module = module_of_function(*text, function);
		if (!module)
			return module.error();
		if (!*module)
			return make_error("no function " + name + " in " + kernel.origin() + " or " + kallsyms->path());
		if ((*module)->empty())
			return make_error("no function " + name + " in " + kernel.origin() +
					  " (kallsyms has it: BTF leaves out some functions)");
		const std::string &in = **module;
		auto types = dbg::btf::load_module_file(dir + "/" + in, kernel);
		if (!types)
			return make_error(name + " is module " + in + "'s, and its types cannot be read: " +
					  types.error().message);
		return ModuleTypes{in, std::move(*types)};
	};
}

}  // namespace vtice::console
