// The running kernel's memory through kcore and kallsyms (local_kernel_memory.hpp).
#include "local_kernel_memory.hpp"

#include "trace/kcore.hpp"
#include "trace_common.hpp"

namespace vtice::console {

KernelMemorySource local_kernel_memory(std::string kallsyms_path, std::string kcore_path)
{
	return [kallsyms_path, kcore_path]() -> Result<KernelMemory> {
		auto kcore = dbg::Kcore::open(kcore_path);
		if (!kcore)
			return kcore.error();
		auto read = read_running_kallsyms(kallsyms_path, "_text");
		if (!read)
			return read.error();
		std::shared_ptr<const dbg::SymbolList> symbols = std::move(*read);
		auto memory = std::make_shared<dbg::Kcore>(std::move(*kcore));
		// The reader holds memory: the Kcore lives as long as it.
		return KernelMemory{[symbols](std::string_view name) { return symbols->lookup(name); },
				    [memory, read = memory->reader()](std::uint64_t address, std::span<std::uint8_t> out) {
					    return read(address, out);
				    }};
	};
}

}  // namespace vtice::console
