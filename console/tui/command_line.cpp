#include "command_line.hpp"

#include <algorithm>
#include <cstring>

namespace vtice::tui {

CommandLine::CommandLine(NameSource names, PaneHost *host)
	: Pane(PaneId::Command), names_(std::move(names)), host_(host)
{
}

std::string common_prefix(const std::vector<std::string> &names)
{
	if (names.empty())
		return {};
	std::string prefix = names.front();
	for (const auto &name : names) {
		auto mismatch = std::mismatch(prefix.begin(), prefix.end(), name.begin(), name.end());
		prefix.erase(mismatch.first, prefix.end());
	}
	return prefix;
}

CommandLine::Completion CommandLine::complete()
{
	Completion result;
	// Only the command name is completed; arguments are the engine's business.
	if (text_.find(' ') != std::string::npos || cursor_ != text_.size() || !names_)
		return result;
	std::vector<std::string> matches;
	for (auto &name : names_())
		if (name.compare(0, text_.size(), text_) == 0)
			matches.push_back(std::move(name));
	std::sort(matches.begin(), matches.end());
	matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
	if (matches.empty())
		return result;
	std::string completed = matches.size() == 1 ? matches.front() + " " : common_prefix(matches);
	if (completed.size() > text_.size()) {
		set_text(completed);
		result.changed = true;
	} else {
		result.candidates = std::move(matches);
	}
	return result;
}

void CommandLine::insert(char ch)
{
	text_.insert(cursor_, 1, ch);
	++cursor_;
}

void CommandLine::set_text(std::string text)
{
	text_ = std::move(text);
	cursor_ = text_.size();
}

void CommandLine::history_up()
{
	if (history_index_ == 0)
		return;
	if (history_index_ == history_.size())
		draft_ = text_;
	set_text(history_[--history_index_]);
}

void CommandLine::history_down()
{
	if (history_index_ >= history_.size())
		return;
	++history_index_;
	set_text(history_index_ == history_.size() ? draft_ : history_[history_index_]);
}

void CommandLine::submit()
{
	submitted_ = text_.empty() && !history_.empty() ? history_.back() : text_;
	if (!text_.empty() && (history_.empty() || history_.back() != text_)) {
		history_.push_back(text_);
		if (history_.size() > kHistoryLimit)
			history_.erase(history_.begin());
	}
	history_index_ = history_.size();
	draft_.clear();
	set_text({});
}

std::string CommandLine::take_line()
{
	std::string line = std::move(submitted_);
	submitted_.clear();
	return line;
}

KeyFlags CommandLine::edit_key(Key key)
{
	switch (key) {
	case kKeyBackspace:
		if (cursor_ == 0)
			return kHandled;
		text_.erase(--cursor_, 1);
		break;
	case kKeyDelete:
		if (cursor_ < text_.size())
			text_.erase(cursor_, 1);
		break;
	case kKeyLeft: cursor_ -= cursor_ > 0; break;
	case kKeyRight: cursor_ += cursor_ < text_.size(); break;
	case kKeyHome: case kKeyCtrlA: cursor_ = 0; break;
	case kKeyEnd: case kKeyCtrlE: cursor_ = text_.size(); break;
	case kKeyCtrlU:
		text_.erase(0, cursor_);
		cursor_ = 0;
		break;
	default:
		if (!is_printable(key))
			return kIgnored;
		insert(static_cast<char>(key));
	}
	return kConsumed;
}

KeyFlags CommandLine::on_key(Key key)
{
	switch (key) {
	case kKeyUp: history_up(); return kConsumed;
	case kKeyDown: history_down(); return kConsumed;
	case kKeyEnter: submit(); return kConsumed | kSubmit;
	case kKeyTab: {
		if (text_.empty())
			return kIgnored;
		auto completion = complete();
		if (host_ && !completion.candidates.empty()) {
			std::string list;
			for (const auto &name : completion.candidates)
				list += name + "  ";
			host_->print(list, Style::Dim);
		}
		return kConsumed;
	}
	default: return edit_key(key);
	}
}

int CommandLine::scroll_for(int width) const
{
	int prompt = static_cast<int>(std::strlen(kPrompt));
	int room = std::max(width - prompt - 1, 1);
	int cursor = static_cast<int>(cursor_);
	return cursor > room ? cursor - room : 0;
}

int CommandLine::cursor_column(int width) const
{
	int column = static_cast<int>(std::strlen(kPrompt)) + static_cast<int>(cursor_) - scroll_for(width);
	return std::min(column, std::max(width - 1, 0));
}

void CommandLine::draw(Canvas &body)
{
	int prompt = static_cast<int>(std::strlen(kPrompt));
	body.line(0, "");
	body.text(0, 0, kPrompt, Style::Prompt);
	body.text(0, prompt, std::string_view(text_).substr(scroll_for(body.cols())));
}

}  // namespace vtice::tui
