// The panes of the debugger screen. Each renders from the Model and keeps
// only view state (cursor, scroll, fold); the engine owns the truth.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "model.hpp"
#include "pane.hpp"
#include "trace_view.hpp"

namespace vtice::tui {

class RegistersPane final : public Pane {
public:
	explicit RegistersPane(Model &model) : Pane(PaneId::Registers), model_(model) {}
	std::string title() const override { return "registers"; }
	void draw(Canvas &body) override;
	void on_stop() override { registers_ = model_.registers(); }
	// Rows the register grid needs at this width (the layout asks).
	int rows_needed(int cols) const;

private:
	int cell_width() const;

	Model &model_;
	std::vector<RegisterRow> registers_;
};

class DisasmPane final : public Pane {
public:
	DisasmPane(Model &model, PaneHost &host) : Pane(PaneId::Disasm), model_(model), host_(host) {}
	std::string title() const override;
	void draw(Canvas &body) override;
	KeyFlags on_key(Key key) override;
	void on_stop() override;
	// Puts the cursor on address, scrolling so it is visible.
	void show(std::uint64_t address);
	std::optional<std::uint64_t> cursor_address() const;
	const std::vector<DisasmRow> &rows() const { return rows_; }

private:
	void fetch_from(std::uint64_t top);
	void fetch_around(std::uint64_t address);
	int find(std::uint64_t address) const;
	void move(int delta);

	Model &model_;
	PaneHost &host_;
	std::vector<DisasmRow> rows_;
	std::optional<std::uint64_t> cursor_;
	int height_ = 20;  // rows at the last draw; keys scroll by it
};

// A list with a cursor whose rows each have an address: Enter shows the
// code there. Backtrace and breakpoints differ only in their rows.
template <class Row>
class ListPane : public Pane {
public:
	ListPane(PaneId id, Model &model, PaneHost &host) : Pane(id), model_(model), host_(host) {}
	void draw(Canvas &body) override;
	KeyFlags on_key(Key key) override;

protected:
	virtual std::string format(const Row &row) const = 0;
	virtual std::uint64_t address(const Row &row) const = 0;
	virtual std::string empty_text() const = 0;

	Model &model_;
	PaneHost &host_;
	std::vector<Row> rows_;
	int cursor_ = 0, top_ = 0, height_ = 1;
};

class BacktracePane final : public ListPane<FrameRow> {
public:
	BacktracePane(Model &model, PaneHost &host) : ListPane(PaneId::Backtrace, model, host) {}
	std::string title() const override { return "backtrace"; }
	void on_stop() override;

private:
	std::string format(const FrameRow &frame) const override;
	std::uint64_t address(const FrameRow &frame) const override { return frame.pc; }
	std::string empty_text() const override { return "(no frames)"; }
};

class BreakpointsPane final : public ListPane<BreakpointRow> {
public:
	BreakpointsPane(Model &model, PaneHost &host) : ListPane(PaneId::Breakpoints, model, host) {}
	std::string title() const override { return "breakpoints"; }
	KeyFlags on_key(Key key) override;  // adds Delete
	void on_stop() override;

private:
	std::string format(const BreakpointRow &bp) const override;
	std::uint64_t address(const BreakpointRow &bp) const override { return bp.address; }
	std::string empty_text() const override { return "(none: F9 in disassembly or 'break SYMBOL')"; }
};

class MemoryPane final : public Pane {
public:
	explicit MemoryPane(Model &model) : Pane(PaneId::Memory), model_(model) {}
	std::string title() const override;
	void draw(Canvas &body) override;
	KeyFlags on_key(Key key) override;
	void on_stop() override;
	void show(std::uint64_t address);
	std::optional<std::uint64_t> address() const { return address_; }

	static int bytes_per_row(int cols);
	// Memory may have changed (a command wrote it): read it again at the next draw.
	void forget_bytes() { shown_.valid = false; }

private:
	// What the last draw read: drawing again reads nothing until the
	// address, the size or the target's memory changes.
	struct Shown {
		bool valid = false;
		std::uint64_t address = 0;
		std::vector<std::optional<std::uint8_t>> cells;  // nullopt: unreadable
		std::optional<Error> failure;                    // the whole read's
	};
	void read_cells(std::uint64_t address, std::size_t length);

	Model &model_;
	Shown shown_;
	std::optional<std::uint64_t> address_;
	bool pinned_ = false;  // the user chose the address: don't follow rsp
	int width_ = 16;
	int height_ = 1;
};

class TracePane final : public Pane {
public:
	explicit TracePane(Model &model) : Pane(PaneId::Trace), model_(model) {}
	std::string title() const override;
	void draw(Canvas &body) override;
	KeyFlags on_key(Key key) override;
	void on_stop() override;
	TraceView &view() { return view_; }
	int cursor() const { return cursor_; }
	// Shows tree instead of the engine's latest trace; null goes back to it.
	void show_tree(const TraceTree *tree);
	// The call a replay stands in, marked "=>" (null: no replay in the tree).
	const TraceNode *replay_call() const { return replay_call_; }

private:
	KeyFlags fold_key(Key key);
	void follow_replay();
	std::string render_row(const TraceView::Row &row) const;

	Model &model_;
	TraceView view_;
	const TraceTree *shown_ = nullptr;
	const TraceNode *replay_call_ = nullptr;
	bool recenter_ = false;  // the replay moved the cursor: scroll to it at the next draw
	int cursor_ = 0, top_ = 0, height_ = 1;
};

class OutputPane final : public Pane {
public:
	OutputPane() : Pane(PaneId::Output) {}
	std::string title() const override { return "output"; }
	void draw(Canvas &body) override;
	KeyFlags on_key(Key key) override;
	void append(const std::string &line, Style style = Style::Normal);
	std::size_t size() const { return lines_.size(); }
	const std::string &line(std::size_t i) const { return lines_[i].text; }

	static constexpr std::size_t kScrollback = 5000;

private:
	static constexpr int kScrollToTop = 1 << 30;
	struct Line {
		std::string text;
		Style style;
	};
	std::deque<Line> lines_;
	int scroll_ = 0;  // wrapped rows above the bottom; 0 follows new output
	int height_ = 1, width_ = 80;
};

class HelpPane final : public Pane {
public:
	HelpPane() : Pane(PaneId::Help) {}
	std::string title() const override { return "help (Esc or F1 closes)"; }
	void draw(Canvas &body) override;
	KeyFlags on_key(Key key) override;
	static std::vector<std::string> text();

private:
	int top_ = 0, height_ = 1;
};

}  // namespace vtice::tui
