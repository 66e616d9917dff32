// The console command table. Each command lives in its own file under
// debugger/commands/ with its help text and registers one entry here; batch
// mode and the TUI both dispatch through execute_line().
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../output.hpp"
#include "../session.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg {

struct CommandContext {
	Session &session;
	Output &out;
	// The longest one command may take (batch: --timeout), each wait for a
	// stop and each chain of automatic continues in it too; < 0: no limit.
	int run_timeout_ms = -1;
	// The next line of the input this command came from, for a command that
	// takes a block ("commands N" ... "end"): the batch file, or the prompt
	// showing ">". Nothing at the end of input; null where there is no input.
	std::function<std::optional<std::string>()> read_line;
	// The stop the last command reported (print_stop): execute_line runs its
	// breakpoint's command list.
	std::optional<StopInfo> reported_stop;
};

struct Command {
	const char *name;                  // gdb's name: "break", "info registers"
	std::vector<const char *> aliases; // WinDbg/SoftICE/gdb short forms: "bp", "b"
	const char *usage;                 // "break LOCATION [if CONDITION]"
	const char *summary;               // one line for "help"
	const char *help;                  // the full text for "help NAME"
	// args: the words after the command name, as the tokenizer split them.
	Result<void> (*run)(CommandContext &ctx, const std::vector<std::string> &args);
};

std::span<const Command> command_table();

// A command from outside the debugger library (the console's `probe`),
// added before the table is first used.
void register_command(const Command *command);

// Finds a command by name or alias; multi-word names ("info registers") match
// the longest prefix of words. consumed = how many words named the command.
const Command *find_command(const std::vector<std::string> &words, std::size_t &consumed);

// Tokenizes and runs one line. Empty lines and '#' comments do nothing. When
// the command stops the target at a breakpoint with a command list, the list
// runs next, and so do the lists of the stops it leads to.
Result<void> execute_line(CommandContext &ctx, std::string_view line);

// "Breakpoint 1 at 0x... <do_sys_openat2>" and the instruction at pc, unless
// the breakpoint's command list starts with "silent". Remembers the stop in
// ctx.reported_stop for execute_line.
void print_stop(CommandContext &ctx, const StopInfo &stop);

// Splits a command line: words separated by blanks; "double" and 'single'
// quotes group; backslash escapes inside double quotes; '#' at a word start
// begins a comment. Unterminated quotes are an error with the offset.
Result<std::vector<std::string>> tokenize(std::string_view line);

}  // namespace vtice::dbg
