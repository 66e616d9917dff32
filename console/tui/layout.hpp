// Where each pane goes for a given terminal size.
//
// Pure arithmetic so it can be unit tested for every size, including the
// degenerate ones a resize produces. The default screen, SoftICE-like:
//
//   status line
//   registers (full width, as many rows as the register set needs)
//   disassembly            | backtrace
//                          | breakpoints
//   memory                 | trace
//   output (scrollback)
//   command line
//
// Narrow terminals drop the right column, short ones drop memory and then
// registers; a zoomed pane or the help pane takes the whole body.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "canvas.hpp"

namespace vtice::tui {

enum class PaneId {
	Registers,
	Disasm,
	Backtrace,
	Breakpoints,
	Memory,
	Trace,
	Output,
	Command,
	Help,
	Count,
};

constexpr int kPaneCount = static_cast<int>(PaneId::Count);

const char *pane_name(PaneId id);                       // "disasm"
std::optional<PaneId> pane_from_name(std::string_view name);  // accepts "disasm", "asm", ...

struct LayoutRequest {
	Size screen;
	int register_rows = 2;             // rows the register set needs at full width
	std::optional<PaneId> zoomed;      // takes the whole body (help uses this too)
};

struct Layout {
	Rect status;
	std::array<Rect, kPaneCount> panes{};  // an empty Rect means hidden
	std::vector<Rect> separators;        // vertical one-column rules

	const Rect &operator[](PaneId id) const { return panes[static_cast<int>(id)]; }
	Rect &operator[](PaneId id) { return panes[static_cast<int>(id)]; }
	bool visible(PaneId id) const { return !(*this)[id].empty(); }
};

// Smallest terminal that shows more than the command line.
constexpr Size kMinScreen = {6, 20};

Layout compute_layout(const LayoutRequest &request);

}  // namespace vtice::tui
