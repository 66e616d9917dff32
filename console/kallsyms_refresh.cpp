#include "kallsyms_refresh.hpp"

#include <chrono>
#include <sstream>
#include <utility>

#include "trace_common.hpp"
#include "vtice/read_input.hpp"

namespace vtice::console {

namespace {

constexpr std::uint64_t kLookEveryNs = 1000000000;

}  // namespace

KallsymsRefresh::KallsymsRefresh(std::string kallsyms, std::string modules)
	: kallsyms_(std::move(kallsyms)), modules_(std::move(modules))
{
	modules_changed();	// the list the run starts with
}

bool KallsymsRefresh::modules_changed()
{
	auto bytes = read_input(modules_, 1 << 20);
	std::string now;
	if (bytes) {
		std::istringstream lines(std::string(bytes->begin(), bytes->end()));
		for (std::string line; std::getline(lines, line);)
			now += line.substr(0, line.find(' ')) + "\n";
	}
	bool differs = now != last_modules_;
	last_modules_ = std::move(now);
	return differs;
}

std::unique_ptr<dbg::SymbolList> KallsymsRefresh::poll(std::uint64_t now_ns)
{
	if (!reread_.valid() && now_ns - last_look_ns_ >= kLookEveryNs) {
		last_look_ns_ = now_ns;
		if (modules_changed())
			reread_ = std::async(std::launch::async, [path = kallsyms_]() -> std::unique_ptr<dbg::SymbolList> {
				auto read = read_running_kallsyms(path, "entry_SYSCALL_64");
				return read ? std::move(*read) : nullptr;
			});
	}
	if (!reread_.valid() || reread_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
		return nullptr;
	return reread_.get();
}

}  // namespace vtice::console
