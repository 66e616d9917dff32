#include "kernel_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace vtice::console::doctor {

std::vector<std::string> kmsg_messages(std::string_view records, std::string_view containing)
{
	std::vector<std::string> out;
	while (!records.empty()) {
		std::size_t end = records.find('\n');
		std::string_view line = records.substr(0, end);
		records.remove_prefix(end == std::string_view::npos ? records.size() : end + 1);
		std::size_t semi = line.find(';');
		if (line.empty() || line.front() == ' ' || semi == std::string_view::npos)
			continue;	// a continuation line, or not a record
		std::string_view message = line.substr(semi + 1);
		if (message.find(containing) != std::string_view::npos)
			out.emplace_back(message);
	}
	return out;
}

KernelLogTail::KernelLogTail()
{
	fd_ = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd_ >= 0 && lseek(fd_, 0, SEEK_END) < 0) {
		close(fd_);
		fd_ = -1;
	}
}

KernelLogTail::~KernelLogTail()
{
	if (fd_ >= 0)
		close(fd_);
}

std::vector<std::string> KernelLogTail::lines(std::string_view containing)
{
	std::string records;
	char record[8192];	// one read() is one record (Documentation/ABI/testing/dev-kmsg)
	for (int i = 0; fd_ >= 0 && i < 4096; i++) {
		ssize_t n = read(fd_, record, sizeof(record));
		if (n > 0)
			records.append(record, static_cast<std::size_t>(n));
		else if (n < 0 && errno == EPIPE)
			continue;	// records overwritten before we read them: go on with the next
		else
			break;		// EAGAIN: nothing more; or an error
	}
	return kmsg_messages(records, containing);
}

}  // namespace vtice::console::doctor
