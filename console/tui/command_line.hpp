// The command line: line editing, history (Up/Down) and Tab completion of
// command names. Lines it submits go through the engine's command table.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "pane.hpp"

namespace vtice::tui {

class CommandLine final : public Pane {
public:
	using NameSource = std::function<std::vector<std::string>()>;

	explicit CommandLine(NameSource names, PaneHost *host = nullptr);

	std::string title() const override { return "command"; }
	void draw(Canvas &body) override;
	// Editing keys, Up/Down history, Tab completion, Enter (kSubmit).
	// Tab on an empty line is not handled, so the App cycles panes.
	KeyFlags on_key(Key key) override;

	// The submitted line; an empty Enter repeats the last command, as in gdb.
	std::string take_line();
	const std::string &text() const { return text_; }
	std::size_t cursor() const { return cursor_; }
	void insert(char ch);
	void set_text(std::string text);
	// Column of the text cursor inside a line of `width` columns.
	int cursor_column(int width) const;

	const std::vector<std::string> &history() const { return history_; }

	struct Completion {
		bool changed = false;
		std::vector<std::string> candidates;  // shown when ambiguous
	};
	Completion complete();

	static constexpr const char *kPrompt = "(vtice) ";
	static constexpr std::size_t kHistoryLimit = 1000;

private:
	KeyFlags edit_key(Key key);
	void history_up();
	void history_down();
	void submit();
	int scroll_for(int width) const;

	NameSource names_;
	PaneHost *host_;
	std::string text_;
	std::size_t cursor_ = 0;
	std::vector<std::string> history_;
	std::size_t history_index_ = 0;  // == history_.size(): editing a new line
	std::string draft_;              // the new line, kept while browsing history
	std::string submitted_;
};

// The longest prefix shared by all names (empty for none).
std::string common_prefix(const std::vector<std::string> &names);

}  // namespace vtice::tui
