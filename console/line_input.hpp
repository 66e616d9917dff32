// Command lines from a batch file, a pipe or the terminal, bounded: a line
// is at most kMaxLine bytes and holds no NUL byte, so /dev/zero, a sparse
// file or a binary given as --batch is an error at its first line instead
// of a read without end. Directories and sockets are refused at open.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "vtice/result.hpp"

namespace vtice::console {

class LineInput {
public:
	static constexpr std::size_t kMaxLine = 64 * 1024;

	// "-" is standard input.
	static Result<LineInput> open(const std::string &path);
	LineInput(LineInput &&other) noexcept;
	LineInput &operator=(LineInput &&) = delete;
	LineInput(const LineInput &) = delete;
	~LineInput();

	// The next line without its newline; nothing at the end of the input,
	// or when SIGTERM or SIGHUP arrived while waiting for it (Ctrl-C at a
	// prompt changes nothing, as in gdb). An error names the line.
	Result<std::optional<std::string>> next();
	const std::string &name() const { return name_; }

private:
	LineInput(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}
	// Reads more into buffer_; false at the end of the input.
	Result<bool> fill();

	int fd_;
	bool owned_;
	std::string name_;
	std::string buffer_;
	std::size_t line_number_ = 0;
	bool at_end_ = false;
};

}  // namespace vtice::console
