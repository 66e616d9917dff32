// The kernel's log, read from a stopped kernel's memory like the crash
// utility's `log`: the lockless printk ring buffer of Linux 5.10+ (`prb`,
// kernel/printk/printk_ringbuffer.h), with every structure offset taken
// from the kernel's BTF.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "btf/btf_types.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg {

class Session;
class Output;

struct LogRecord {
	std::uint64_t seq = 0;
	std::uint64_t ts_nsec = 0;
	unsigned level = 0;
	std::string text;
};

// The newest max_records records (0: all), oldest first.
Result<std::vector<LogRecord>> read_kernel_log(Session &session, const btf::Types &types,
					       std::size_t max_records, Output &log);
// "[    1.234567] text" per line of the record, as the kernel's syslog shows it.
std::string format_log_record(const LogRecord &record);

}  // namespace vtice::dbg
