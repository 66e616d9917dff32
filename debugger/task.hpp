// The current task of a stopped vCPU: its task_struct and comm, found from
// kallsyms, with the kernel's BTF when it is loaded (no DWARF needed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "session.hpp"

namespace vtice::dbg {

class TaskInspector {
public:
	explicit TaskInspector(Session &session) : session_(session) {}

	// task_struct of the task running on the selected vCPU: the per-cpu
	// variable current_task (6.1) or pcpu_hot.current_task (6.2+, offset 0)
	// read through the kernel's gs_base.
	Result<std::uint64_t> current_task();
	// The task's comm. Its offset in task_struct comes from the kernel's
	// types when they are loaded, else is learnt by finding "swapper/0" in
	// init_task.
	Result<std::string> comm(std::uint64_t task);
	// Where the comm offset came from ("BTF", or the heuristic), after comm().
	const std::string &comm_source() const { return comm_source_; }

private:
	Result<std::size_t> comm_offset();

	Session &session_;
	std::optional<std::size_t> comm_offset_;
	std::string comm_source_;
};

}  // namespace vtice::dbg
