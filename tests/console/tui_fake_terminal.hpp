// A Terminal that records a grid of cells and replays scripted keys, so the
// TUI's layout, dispatch and rendering are testable without a tty.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "terminal.hpp"

namespace vtice::tui::testing {

class FakeTerminal final : public Terminal {
public:
	FakeTerminal(int rows, int cols) { resize(rows, cols); }

	Size size() const override { return size_; }

	void put(int row, int col, std::string_view text, Style style) override
	{
		if (row < 0 || row >= size_.rows || col < 0 || col + static_cast<int>(text.size()) > size_.cols)
			++out_of_bounds_;
		if (row < 0 || row >= size_.rows)
			return;
		for (std::size_t i = 0; i < text.size() && col + static_cast<int>(i) < size_.cols; ++i) {
			if (col + static_cast<int>(i) < 0)
				continue;
			cells_[row][col + i] = text[i];
			styles_[row][col + i] = style;
		}
	}

	void clear() override
	{
		cells_.assign(size_.rows, std::string(size_.cols, ' '));
		styles_.assign(size_.rows, std::vector<Style>(size_.cols, Style::Normal));
	}

	void set_cursor(std::optional<std::pair<int, int>> at) override { cursor_ = at; }
	void flush() override { ++flushes_; }

	Key read_key(int) override
	{
		if (keys_.empty())
			return kKeyNone;
		Key key = keys_.front();
		keys_.pop_front();
		return key;
	}

	void refresh_size() override { ++size_refreshes_; }

	// Test side.
	void resize(int rows, int cols)
	{
		size_ = {rows, cols};
		clear();
	}
	void push_keys(std::initializer_list<Key> keys) { keys_.insert(keys_.end(), keys); }
	void push_text(const std::string &text)
	{
		for (char ch : text)
			keys_.push_back(static_cast<unsigned char>(ch));
	}
	const std::string &row(int r) const { return cells_.at(r); }
	Style style_at(int r, int c) const { return styles_.at(r).at(c); }
	std::string screen() const
	{
		std::string all;
		for (const auto &line : cells_)
			all += line + "\n";
		return all;
	}
	bool shows(const std::string &text) const { return screen().find(text) != std::string::npos; }
	// Row and column of the first occurrence of text, or {-1, -1}.
	std::pair<int, int> find(const std::string &text) const
	{
		for (int r = 0; r < size_.rows; ++r)
			if (auto c = cells_[r].find(text); c != std::string::npos)
				return {r, static_cast<int>(c)};
		return {-1, -1};
	}
	std::optional<std::pair<int, int>> cursor() const { return cursor_; }
	int size_refreshes() const { return size_refreshes_; }
	int out_of_bounds() const { return out_of_bounds_; }

private:
	Size size_;
	std::vector<std::string> cells_;
	std::vector<std::vector<Style>> styles_;
	std::deque<Key> keys_;
	std::optional<std::pair<int, int>> cursor_;
	int flushes_ = 0;
	int size_refreshes_ = 0;
	int out_of_bounds_ = 0;  // puts that reached past an edge (Canvas should clip them)
};

}  // namespace vtice::tui::testing
