// A module's function's types from the module's BTF (module_btf.hpp).
#include "module_btf.hpp"

#include <memory>
#include <optional>

#include "btf/btf_source.hpp"
#include "kallsyms_modules.hpp"
#include "trace_common.hpp"

namespace vtice::console {
namespace {

// kallsyms, read on the first question and kept (or why it could not be).
class KallsymsText {
public:
	explicit KallsymsText(std::string path) : path_(std::move(path)) {}

	Result<std::string_view> text()
	{
		if (!read_) {
			read_ = true;
			auto text = read_kallsyms_text(path_);
			if (text)
				text_ = std::move(*text);
			else
				failure_ = text.error().message;
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

// Module's types from the file named after it in dir (/sys/kernel/btf/msr).
Result<ModuleTypes> load(const std::string &dir, const std::string &module, const dbg::btf::Types &kernel,
			 const std::string &function)
{
	auto types = dbg::btf::load_module_file(dir + "/" + module, kernel);
	if (!types)
		return make_error(function + " is module " + module + "'s, and its types cannot be read: " +
				  types.error().message);
	return ModuleTypes{module, std::move(*types)};
}

}  // namespace

ModuleTypesLookup local_module_types(std::string kallsyms_path, std::string kernel_btf_path)
{
	auto kallsyms = std::make_shared<KallsymsText>(std::move(kallsyms_path));
	return [kallsyms, dir = directory_of(kernel_btf_path)](std::string_view function, std::string_view named,
								const dbg::btf::Types &kernel) -> Result<ModuleTypes> {
		std::string name(function);
		auto text = kallsyms->text();
		// A module named needs no kallsyms: its BTF says whether it has the function.
		if (!text && !named.empty())
			return load(dir, std::string(named), kernel, name);
		if (!text)
			return make_error("no function " + name + " in " + kernel.origin() + ", and " +
					  text.error().message);
		if (!named.empty()) {
			if (auto in = function_in_module(*text, named, function); !in)
				return make_error(in.error().message + " (" + kallsyms->path() + ")");
			return load(dir, std::string(named), kernel, name);
		}
		auto module = module_of_function(*text, function);
		if (!module)
			return module.error();
		if (!*module)
			return make_error("no function " + name + " in " + kernel.origin() + " or " + kallsyms->path());
		if ((*module)->empty())
			return make_error("no function " + name + " in " + kernel.origin() +
					  " (kallsyms has it: BTF leaves out some functions)");
		return load(dir, **module, kernel, name);
	};
}

}  // namespace vtice::console
