#include "graph_calls.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace vtice::console::doctor {

namespace {

// Whether a call is preempted, and what the scheduler then runs, depends on
// timing, not on the syscall's path: neither graph keeps it.
constexpr std::array<std::string_view, 7> kScheduler = {
	"__cond_resched", "schedule", "__schedule", "preempt_schedule", "preempt_schedule_common",
	"preempt_schedule_irq", "preempt_schedule_notrace"};

struct GraphLine {
	std::size_t depth;	// the indent after '|'
	std::string_view text;	// without it
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "  1) + 12.88 us   |    name() {": a CPU column, then '|'. Other lines
// (headers, context-switch and separator lines) are not calls.
bool graph_line(std::string_view line, GraphLine &out)
{
	std::size_t at = line.find_first_not_of(' ');
	std::size_t digits = at;
	while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits])))
		digits++;
	if (at == std::string_view::npos || digits == at || digits >= line.size() || line[digits] != ')')
		return false;
	std::size_t bar = line.find('|', digits);
	if (bar == std::string_view::npos)
		return false;
	std::string_view text = line.substr(bar + 1);
	std::size_t indent = text.find_first_not_of(' ');
	if (indent == std::string_view::npos)
		return false;
	text.remove_prefix(indent);
	while (!text.empty() && (text.back() == ' ' || text.back() == '\r'))
		text.remove_suffix(1);
	out = {indent, text};
	return true;
}

// The first "name()" of a line: a C identifier (dots allowed, for .isra
// and .cold clones) right before "()", not the tail of an address.
std::string_view first_call(std::string_view text)
{
	for (std::size_t paren = text.find("()"); paren != std::string_view::npos; paren = text.find("()", paren + 1)) {
		std::size_t start = paren;
		while (start > 0 && (word_char(text[start - 1]) || text[start - 1] == '.'))
			start--;
		if (start < paren && !std::isdigit(static_cast<unsigned char>(text[start])) && text[start] != '.')
			return text.substr(start, paren - start);
	}
	return {};
}

bool opens(std::string_view text)
{
	std::size_t paren = text.find("()");
	return paren != std::string_view::npos && text.find('{', paren) != std::string_view::npos;
}

bool closes(std::string_view text) { return !text.empty() && text.front() == '}'; }

bool scheduler(std::string_view name)
{
	return std::find(kScheduler.begin(), kScheduler.end(), name) != kScheduler.end();
}

// The graph's lines, minus every subtree rooted at a scheduler call.
std::vector<GraphLine> path_lines(std::string_view text)
{
	std::vector<GraphLine> out;
	std::size_t skip_depth = 0;
	bool skipping = false;
	while (!text.empty()) {
		std::size_t end = text.find('\n');
		std::string_view line = text.substr(0, end);
		text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
		GraphLine g;
		if (!graph_line(line, g))
			continue;
		if (skipping) {
			if (g.depth == skip_depth && closes(g.text))
				skipping = false;
			continue;
		}
		if (scheduler(first_call(g.text))) {
			skipping = opens(g.text);
			skip_depth = g.depth;
			continue;
		}
		out.push_back(g);
	}
	return out;
}

}  // namespace

std::vector<std::vector<std::string>> ftrace_calls(std::string_view text, std::string_view root)
{
	std::vector<std::vector<std::string>> each;
	std::vector<std::string> calls;
	bool in_root = false, in_irq = false, in_irq_exit = false;
	std::size_t root_depth = 0, irq_depth = 0;
	for (const GraphLine &line : path_lines(text)) {
		std::string_view name = first_call(line.text);
		if (!in_root) {
			if (name != root || !opens(line.text))
				continue;
			in_root = true;
			in_irq = in_irq_exit = false;
			root_depth = line.depth;
			calls.clear();
		} else if (line.depth == root_depth && closes(line.text)) {
			each.push_back(calls);
			in_root = false;
			continue;
		}
		// This kernel's ftrace shows an interrupt inline, from irq_enter_rcu()
		// to the end of irq_exit_rcu() at the same depth.
		if (!in_irq && name == "irq_enter_rcu") {
			in_irq = true;
			irq_depth = line.depth;
		}
		if (!in_irq) {
			if (!name.empty())
				calls.emplace_back(name);
		} else if (line.depth == irq_depth && name == "irq_exit_rcu") {
			in_irq_exit = opens(line.text);
			in_irq = in_irq_exit;
		} else if (in_irq_exit && line.depth == irq_depth && closes(line.text)) {
			in_irq = in_irq_exit = false;
		}
	}
	return each;
}

std::vector<std::string> vtice_calls(std::string_view text)
{
	std::vector<std::string> calls;
	int nested = 0;
	for (const GraphLine &line : path_lines(text)) {
		if (line.text.find("==========>") != std::string_view::npos)
			nested++;
		else if (line.text.find("<==========") != std::string_view::npos)
			nested = std::max(0, nested - 1);
		else if (!nested && !first_call(line.text).empty())
			calls.emplace_back(first_call(line.text));
	}
	return calls;
}

GraphMatch match_calls(const std::vector<std::string> &oracle, const std::vector<std::string> &ours,
		       std::size_t max_cells)
{
	GraphMatch match;
	match.total = oracle.size();
	std::size_t rows = oracle.size() + 1, cols = ours.size() + 1;
	if (rows * cols > max_cells) {
		match.missing.push_back("(graphs too large to compare: " + std::to_string(oracle.size()) + " x " +
					std::to_string(ours.size()) + " calls)");
		return match;
	}
	// lcs[i][j]: the longest common subsequence of oracle[0, i) and ours[0, j).
	std::vector<std::uint32_t> lcs(rows * cols, 0);
	auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t & { return lcs[i * cols + j]; };
	for (std::size_t i = 1; i < rows; i++)
		for (std::size_t j = 1; j < cols; j++)
			at(i, j) = oracle[i - 1] == ours[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
	std::vector<bool> found(oracle.size(), false);
	for (std::size_t i = oracle.size(), j = ours.size(); i && j;) {
		if (oracle[i - 1] == ours[j - 1]) {
			found[i - 1] = true;
			i--, j--;
		} else if (at(i - 1, j) >= at(i, j - 1)) {
			i--;
		} else {
			j--;
		}
	}
	for (std::size_t i = 0; i < oracle.size(); i++) {
		if (found[i])
			match.matched++;
		else
			match.missing.push_back(oracle[i]);
	}
	return match;
}

GraphMatch closest_match(const std::vector<std::vector<std::string>> &oracles,
			 const std::vector<std::string> &ours, std::size_t max_cells)
{
	GraphMatch best;
	for (const auto &oracle : oracles) {
		GraphMatch match = match_calls(oracle, ours, max_cells);
		if (best.total == 0 || match.score() > best.score())
			best = std::move(match);
	}
	return best;
}

}  // namespace vtice::console::doctor
