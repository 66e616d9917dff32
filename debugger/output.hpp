// Where commands print. Batch mode writes to stdout; the TUI collects lines
// into its command pane. Commands never call printf directly.
#pragma once

#include <cstdarg>
#include <string>
#include <string_view>

namespace vtice::dbg {

// printf into a string.
std::string vformat(const char *format, va_list args);

class Output {
public:
	virtual ~Output() = default;
	// One piece of text; commands end lines with '\n' themselves.
	virtual void write(std::string_view text) = 0;
	// Progress of a long command ("trace: 1200 branches"); may be ignored.
	virtual void progress(std::string_view) {}

	void print(const char *format, ...) __attribute__((format(printf, 2, 3)));
};

// Collects everything into a string (tests, TUI panes).
class StringOutput final : public Output {
public:
	void write(std::string_view text) override { text_.append(text); }
	const std::string &text() const { return text_; }
	void clear() { text_.clear(); }

private:
	std::string text_;
};

}  // namespace vtice::dbg
