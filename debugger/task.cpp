#include "task.hpp"

#include "btf/btf_source.hpp"
#include "output.hpp"
#include "kernel_address.hpp"

#include <cstring>

namespace vtice::dbg {

namespace {

constexpr std::size_t kTaskStructWindow = 16384;  // task_struct is ~9-13 KiB on x86-64
constexpr std::size_t kTaskCommLen = 16;          // TASK_COMM_LEN

}  // namespace

Result<std::uint64_t> TaskInspector::current_task()
{
	const SymbolSource *symbols = session_.symbols();
	if (!symbols)
		return make_error("finding the current task needs symbols");
	auto offset = symbols->lookup("current_task");
	if (!offset)
		offset = symbols->lookup("pcpu_hot");
	if (!offset)
		return make_error("neither current_task nor pcpu_hot is in the symbols");
	auto gs = session_.register_value("gs_base");
	if (!gs)
		return gs.error();
	// In user mode gs_base is the user's; the kernel's is then in k_gs_base.
	std::uint64_t base = *gs;
	if (!is_kernel_address(base)) {
		auto kgs = session_.register_value("k_gs_base");
		if (!kgs)
			return kgs.error();
		base = *kgs;
	}
	auto bytes = session_.read_memory(base + *offset, 8);
	if (!bytes)
		return make_error("reading current_task: " + bytes.error().message);
	std::uint64_t task;
	std::memcpy(&task, bytes->data(), 8);
	return task;
}

Result<std::size_t> TaskInspector::comm_offset()
{
	if (comm_offset_)
		return *comm_offset_;
	// Kernel types: already loaded, or loaded now where reading the 4 MB
	// blob from guest memory is quick (QEMU's socket: a tenth of a second;
	// over a serial line it takes minutes, so there only if already loaded).
	const btf::Types *types = session_.kernel_types().loaded();
	if (!types && session_.target().features().pipelined_reads) {
		StringOutput quiet;
		if (auto got = session_.kernel_types().get(session_, quiet))
			types = *got;
	}
	if (types) {
		auto task = types->find("struct task_struct");
		auto member = task ? types->member(*task, "comm") : Result<btf::Member>(task.error());
		if (member) {
			comm_source_ = "BTF";
			comm_offset_ = member->bit_offset / 8;
			return *comm_offset_;
		}
	}
	comm_source_ = "found by scanning init_task for \"swapper/0\"";
	const SymbolSource *symbols = session_.symbols();
	auto init_task = symbols ? symbols->lookup("init_task") : std::nullopt;
	if (!init_task)
		return make_error("init_task is not in the symbols");
	auto bytes = session_.read_memory(*init_task, kTaskStructWindow);
	if (!bytes)
		return make_error("reading init_task: " + bytes.error().message);
	static const char kSwapper[] = "swapper/0";  // with its NUL
	for (std::size_t i = 0; i + sizeof(kSwapper) <= bytes->size(); i += 8)
		if (std::memcmp(bytes->data() + i, kSwapper, sizeof(kSwapper)) == 0) {
			comm_offset_ = i;
			return i;
		}
	return make_error("no \"swapper/0\" comm in init_task");
}

Result<std::string> TaskInspector::comm(std::uint64_t task)
{
	auto offset = comm_offset();
	if (!offset)
		return offset.error();
	auto bytes = session_.read_memory(task + *offset, kTaskCommLen);
	if (!bytes)
		return bytes.error();
	std::string name(reinterpret_cast<const char *>(bytes->data()), bytes->size());
	return name.substr(0, name.find('\0'));
}

}  // namespace vtice::dbg
