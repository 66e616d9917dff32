// The seam to the symbols/ library. Until it is linked in, symbol files in
// /proc/kallsyms or System.map text form are read here, and recovery from
// guest memory is unavailable.
#include <fstream>
#include <sstream>

#include "kernel_setup.hpp"

namespace vtice::dbg {

SymbolFileLoader default_symbol_file_loader()
{
	return [](const std::string &path) -> Result<std::unique_ptr<SymbolList>> {
		std::ifstream in(path, std::ios::binary);
		if (!in)
			return make_error("cannot open symbol file " + path);
		std::ostringstream text;
		text << in.rdbuf();
		std::string data = text.str();
		if (data.size() >= 4 && data.compare(0, 4, "\x7f" "ELF") == 0)
			return make_error(path + " is an ELF image; reading images needs the symbols library");
		return parse_kallsyms_text(data, path);
	};
}

MemorySymbolRecovery default_memory_symbol_recovery()
{
	return {};
}

}  // namespace vtice::dbg
