#include "line_input.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "vtice/interrupts.hpp"
#include "vtice/read_input.hpp"

namespace vtice::console {

Result<LineInput> LineInput::open(const std::string &path)
{
	if (path == "-") {
		RunInputs::get().note_fd(STDIN_FILENO, "standard input");
		return LineInput(STDIN_FILENO, false, "standard input");
	}
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return make_error(path + ": " + std::strerror(errno));
	if (auto kind = check_input_kind(path, fd); !kind) {
		::close(fd);
		return kind.error();
	}
	return LineInput(fd, true, path);
}

LineInput::LineInput(LineInput &&other) noexcept
	: fd_(other.fd_), owned_(other.owned_), name_(std::move(other.name_)), buffer_(std::move(other.buffer_)),
	  line_number_(other.line_number_), at_end_(other.at_end_)
{
	other.owned_ = false;
}

LineInput::~LineInput()
{
	if (owned_)
		::close(fd_);
}

Result<bool> LineInput::fill()
{
	char chunk[4096];
	for (;;) {
		ssize_t n = ::read(fd_, chunk, sizeof(chunk));
		if (n > 0) {
			buffer_.append(chunk, static_cast<std::size_t>(n));
			return true;
		}
		if (n == 0)
			return false;
		if (errno != EINTR)
			return make_error(name_ + ": " + std::strerror(errno));
		if (interrupts::end_signal())
			return false;
	}
}

Result<std::optional<std::string>> LineInput::next()
{
	for (;;) {
		std::size_t newline = buffer_.find('\n');
		std::size_t length = newline == std::string::npos ? buffer_.size() : newline;
		if (buffer_.find('\0') < length || length > kMaxLine) {
			bool nul = buffer_.find('\0') < length;
			at_end_ = true;
			buffer_.clear();
			return make_error(name_ + ": line " + std::to_string(line_number_ + 1) +
					  (nul ? " holds a NUL byte: not a text file of commands"
					       : " is longer than " + std::to_string(kMaxLine) + " bytes"));
		}
		if (newline != std::string::npos || (at_end_ && !buffer_.empty())) {
			std::string line = buffer_.substr(0, length);
			buffer_.erase(0, newline == std::string::npos ? length : newline + 1);
			line_number_++;
			if (!line.empty() && line.back() == '\r')
				line.pop_back();
			return std::optional<std::string>(std::move(line));
		}
		if (at_end_)
			return std::optional<std::string>();
		auto more = fill();
		if (!more)
			return more.error();
		at_end_ = !*more;
	}
}

}  // namespace vtice::console
