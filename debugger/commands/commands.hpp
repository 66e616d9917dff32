// Declarations of the command entries (one per file) and helpers they share.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "command.hpp"

namespace vtice::dbg {

extern const Command kCmdBreak, kCmdHbreak, kCmdTbreak, kCmdWatch, kCmdDelete, kCmdInfoBreakpoints;
extern const Command kCmdRwatch, kCmdAwatch, kCmdCondition, kCmdIgnore, kCmdCommands;
extern const Command kCmdContinue, kCmdStep, kCmdNext, kCmdFinish, kCmdInfoRegisters, kCmdSet;
extern const Command kCmdExamine, kCmdDump, kCmdDisas, kCmdBacktrace, kCmdPrint, kCmdInfoSymbol;
extern const Command kCmdTranslate, kCmdMonitor, kCmdDetach, kCmdDisconnect, kCmdHelp, kCmdTrace, kCmdInfoTask, kCmdInfoThreads, kCmdThread;
extern const Command kCmdPtype, kCmdOffsetof, kCmdDmesg, kCmdVmcore;
extern const Command kCmdReverseStepi, kCmdReverseNexti, kCmdReverseContinue, kCmdReverseFinish;

// Commands living outside this directory's fixed list (trace), added by
// their own files so the table has one line per command.
std::span<const Command *const> extra_commands();

// A line split into its command and the words after the command's name.
struct ParsedLine {
	const Command *command;
	std::vector<std::string> args;
};
// Nothing for an empty line or a comment; an error for an unknown command.
Result<std::optional<ParsedLine>> parse_line(std::string_view line);
// Runs one line, leaving any breakpoint command list to the caller.
Result<void> dispatch_line(CommandContext &ctx, std::string_view line);

// Breakpoint command lists (stop_commands.cpp).
// True when the list starts with "silent": no stop report.
bool is_silent(const std::vector<std::string> &commands);
// Runs the list of the stop in ctx.reported_stop, then of the stop that list
// leads to, and so on, in one loop.
Result<void> run_stop_commands(CommandContext &ctx);

// watch, rwatch, awatch: "[-r|-a] [-lN] EXPRESSION [if CONDITION]".
Result<void> add_watchpoint_command(CommandContext &ctx, const std::vector<std::string> &args, BreakKind type,
				    const Command &self);

// A breakpoint number as the user typed it ("3").
Result<int> parse_breakpoint_number(const std::string &text);

// "0xffffffff81000000 <do_sys_openat2+0x10>"
std::string describe_address(Session &session, std::uint64_t address);
// Prints the instruction at pc after a stop, as gdb does after stepping.
void print_pc_line(CommandContext &ctx);
Result<std::uint64_t> parse_count(const std::string &text, const char *what);
// "[N]" after stepi/nexti: 1 when absent.
Result<std::uint64_t> optional_count(const std::vector<std::string> &args, const Command &command);
std::string join(const std::vector<std::string> &words, std::size_t from = 0);
Error usage_error(const Command &command);

}  // namespace vtice::dbg
