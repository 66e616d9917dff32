// The kernel's log from a point on (/dev/kmsg): what vtice.ko said when
// finit_module refused it, quoted in doctor's row instead of "see dmesg".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vtice::console::doctor {

// The messages of /dev/kmsg records ("PRIO,SEQ,USEC,FLAGS;MESSAGE\n", then
// " KEY=VALUE" continuation lines) that contain `containing`, in order.
std::vector<std::string> kmsg_messages(std::string_view records, std::string_view containing);

// Opened at the log's end: lines() returns what the kernel logged since.
class KernelLogTail {
public:
	KernelLogTail();
	~KernelLogTail();
	KernelLogTail(const KernelLogTail &) = delete;
	KernelLogTail &operator=(const KernelLogTail &) = delete;

	// The new messages that contain `containing`; none if the log cannot be
	// read (no /dev/kmsg, or not root).
	std::vector<std::string> lines(std::string_view containing);

private:
	int fd_ = -1;
};

}  // namespace vtice::console::doctor
