// The two text panes: output (command scrollback) and help.
#include <algorithm>

#include "panes.hpp"

namespace vtice::tui {

// Rows a line takes when wrapped at width (an empty line still takes one).
static int wrapped_rows(std::size_t length, int width)
{
	auto w = static_cast<std::size_t>(std::max(width, 1));
	return std::max(1, static_cast<int>((length + w - 1) / w));
}

void OutputPane::append(const std::string &line, Style style)
{
	// Engine output may carry several lines or tabs; the grid wants neither.
	std::size_t start = 0;
	while (start <= line.size()) {
		std::size_t end = line.find('\n', start);
		std::string piece = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
		std::replace(piece.begin(), piece.end(), '\t', ' ');
		if (scroll_ > 0)
			scroll_ += wrapped_rows(piece.size(), width_);  // keep looking at the same rows
		lines_.push_back({std::move(piece), style});
		if (lines_.size() > kScrollback)
			lines_.pop_front();
		if (end == std::string::npos)
			break;
		start = end + 1;
	}
}

// Long lines wrap (command help, x/ dumps); scroll_ counts wrapped rows.
void OutputPane::draw(Canvas &body)
{
	height_ = std::max(body.rows(), 1);
	width_ = std::max(body.cols(), 1);
	struct Row {
		std::string_view text;
		Style style;
	};
	std::vector<Row> rows;  // bottom-up, only as many as the view needs
	std::size_t need = static_cast<std::size_t>(height_) + static_cast<std::size_t>(scroll_);
	for (auto line = lines_.rbegin(); line != lines_.rend() && rows.size() < need; ++line) {
		int pieces = wrapped_rows(line->text.size(), width_);
		for (int piece = pieces - 1; piece >= 0; --piece)
			rows.push_back({std::string_view(line->text).substr(static_cast<std::size_t>(piece) * width_,
									   static_cast<std::size_t>(width_)),
					line->style});
	}
	int count = static_cast<int>(rows.size());
	scroll_ = std::clamp(scroll_, 0, std::max(count - height_, 0));
	int visible = std::min(height_, count - scroll_);
	for (int i = 0; i < visible; ++i) {
		const Row &row = rows[static_cast<std::size_t>(scroll_ + visible - 1 - i)];
		body.line(i, row.text, row.style);
	}
}

KeyFlags OutputPane::on_key(Key key)
{
	int page = std::max(height_ - 1, 1);
	switch (key) {
	case kKeyUp: ++scroll_; break;
	case kKeyDown: --scroll_; break;
	case kKeyPageUp: scroll_ += page; break;
	case kKeyPageDown: scroll_ -= page; break;
	case kKeyHome: scroll_ = kScrollToTop; break;  // draw clamps it to the first row
	case kKeyEnd: scroll_ = 0; break;
	default: return kIgnored;
	}
	scroll_ = std::max(scroll_, 0);
	return kConsumed;
}

std::vector<std::string> HelpPane::text()
{
	return {
		"Keys (SoftICE / gdb-TUI)",
		"  F5              continue",
		"  F8              step into",
		"  F10             step over",
		"  F12, Shift-F11  step out (finish)",
		"  Shift-F5        continue backwards    } on a target that runs backwards",
		"  Shift-F8        step back one insn    } (vtice serve-replay); elsewhere",
		"  Shift-F10       step back over calls  } the reason it cannot is shown",
		"  Shift-F12       back to the call      }",
		"  F9              toggle a breakpoint at the disassembly cursor",
		"  Ctrl-C          interrupt the target (when stopped: clear the command line)",
		"  Tab, Shift-Tab  next / previous pane (Tab completes a half-typed command)",
		"  F6              to the disassembly; from there back to the command line",
		"  F2              zoom the focused pane",
		"  Esc, F1         this help",
		"  q               quit (in a pane)",
		"  Ctrl-L          redraw",
		"",
		"In panes",
		"  Up/Down PgUp/PgDn Home/End   move the cursor or scroll",
		"  disassembly     Home returns to RIP",
		"  backtrace       Enter shows the frame's code",
		"  breakpoints     Enter shows the code, Delete removes",
		"  trace           Enter/Space fold or unfold the call, Left/Right,",
		"                  + opens all, - folds all",
		"  any other key   starts typing on the command line",
		"",
		"Command line",
		"  Up/Down history, Tab completes a command name, empty Enter repeats",
		"  Every batch-mode command works here ('help' lists them); also:",
		"  mem EXPR        show memory at EXPR",
		"  code EXPR       show code at EXPR",
		"  focus PANE      move the keyboard to a pane",
		"  zoom [PANE]     toggle full screen",
		"  graph FILE      a trace file's call tree in the trace pane",
		"  quit, q         leave (detaches from the target)",
	};
}

void HelpPane::draw(Canvas &body)
{
	height_ = std::max(body.rows(), 1);
	auto lines = text();
	for (int i = 0; i < height_ && top_ + i < static_cast<int>(lines.size()); ++i)
	{
		const std::string &line = lines[top_ + i];
		bool heading = !line.empty() && line[0] != ' ';
		body.line(i, line, heading ? Style::Title : Style::Normal);
	}
}

KeyFlags HelpPane::on_key(Key key)
{
	int count = static_cast<int>(text().size());
	int cursor = key == kKeyUp ? top_ : top_ + height_ - 1;
	if (key != kKeyUp && key != kKeyDown && key != kKeyPageUp && key != kKeyPageDown)
		return kIgnored;
	list_key(key, cursor, top_, count, height_);
	return kConsumed;
}

}  // namespace vtice::tui
