#include "layout.hpp"

#include <algorithm>

namespace vtice::tui {
namespace {

struct PaneNames {
	PaneId id;
	const char *name;
	const char *alias;
};

constexpr PaneNames kNames[] = {
	{PaneId::Registers, "registers", "regs"},
	{PaneId::Disasm, "disasm", "code"},
	{PaneId::Backtrace, "backtrace", "stack"},
	{PaneId::Breakpoints, "breakpoints", "bp"},
	{PaneId::Memory, "memory", "data"},
	{PaneId::Trace, "trace", "graph"},
	{PaneId::Output, "output", "log"},
	{PaneId::Command, "command", "cmd"},
	{PaneId::Help, "help", "keys"},
};

// Below this width the right column would squeeze disassembly unreadably.
constexpr int kTwoColumnMinCols = 70;

void split_left(Layout &out, int top, int rows, int cols)
{
	int disasm = rows >= 12 ? rows * 2 / 3 : rows;
	out[PaneId::Disasm] = {top, 0, disasm, cols};
	if (rows > disasm)
		out[PaneId::Memory] = {top + disasm, 0, rows - disasm, cols};
}

void split_right(Layout &out, int top, int rows, int col, int cols)
{
	int backtrace = rows, breakpoints = 0;
	if (rows >= 9) {
		backtrace = rows / 4;
		breakpoints = rows / 4;
	} else if (rows >= 4) {
		backtrace = rows / 2;
		breakpoints = rows - backtrace;
	}
	int trace = rows - backtrace - breakpoints;
	out[PaneId::Backtrace] = {top, col, backtrace, cols};
	if (breakpoints)
		out[PaneId::Breakpoints] = {top + backtrace, col, breakpoints, cols};
	if (trace)
		out[PaneId::Trace] = {top + backtrace + breakpoints, col, trace, cols};
}

void split_middle(Layout &out, int top, int rows, int cols)
{
	if (cols < kTwoColumnMinCols) {
		split_left(out, top, rows, cols);
		return;
	}
	int right = std::clamp(cols * 2 / 5, 28, 60);
	int left = cols - right - 1;
	split_left(out, top, rows, left);
	out.separators.push_back({top, left, rows, 1});
	split_right(out, top, rows, left + 1, right);
}

void split_body(Layout &out, const LayoutRequest &request, int top, int rows, int cols)
{
	int output = std::clamp(rows / 5, 2, 12);
	if (rows - output < 2) {
		out[PaneId::Output] = {top, 0, rows, cols};
		return;
	}
	int registers = std::min(1 + std::max(request.register_rows, 1), std::max(2, rows / 4));
	if (rows - output - registers < 3)
		registers = 0;
	int middle = rows - output - registers;
	if (registers)
		out[PaneId::Registers] = {top, 0, registers, cols};
	split_middle(out, top + registers, middle, cols);
	out[PaneId::Output] = {top + registers + middle, 0, output, cols};
}

}  // namespace

const char *pane_name(PaneId id)
{
	for (const auto &entry : kNames)
		if (entry.id == id)
			return entry.name;
	return "?";
}

std::optional<PaneId> pane_from_name(std::string_view name)
{
	for (const auto &entry : kNames)
		if (name == entry.name || name == entry.alias)
			return entry.id;
	return std::nullopt;
}

Layout compute_layout(const LayoutRequest &request)
{
	Layout out;
	const int rows = request.screen.rows, cols = request.screen.cols;
	if (rows <= 0 || cols <= 0)
		return out;
	out[PaneId::Command] = {rows - 1, 0, 1, cols};
	if (rows < 3)
		return out;
	out.status = {0, 0, 1, cols};
	const int body = rows - 2;
	if (rows < kMinScreen.rows || cols < kMinScreen.cols) {
		out[PaneId::Output] = {1, 0, body, cols};
		return out;
	}
	if (request.zoomed && *request.zoomed != PaneId::Command) {
		out[*request.zoomed] = {1, 0, body, cols};
		return out;
	}
	split_body(out, request, 1, body, cols);
	return out;
}

}  // namespace vtice::tui
