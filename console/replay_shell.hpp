// The commands of `vtice replay`: move through a recording (stepi, nexti,
// finish and their reverse forms, goto) and ask it questions (registers,
// memory as it was, the call stack, who last wrote an address, when a
// register held a value). Output goes to a FILE so the tests read it as a
// user would.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "navigation.hpp"
#include "replay_file.hpp"
#include "replay_orc.hpp"
#include "symbol_table.hpp"

namespace vtice::console {

class ReplayShell {
public:
	ReplayShell(replay::ReplayFile &file, std::FILE *out);

	// bt then unwinds with ORC, past the recording's start (--symbols).
	void use_orc(ReplayOrc orc) { orc_ = std::move(orc); }
	// Runs one command line; false when it failed (the message is printed).
	bool run(const std::string &line);
	void print_where();
	void print_summary();

private:
	bool move(const std::vector<std::string> &words);
	bool go_to(const std::string &where);
	bool registers(const std::vector<std::string> &names);
	bool examine(const std::vector<std::string> &words);
	bool backtrace();
	bool orc_backtrace();
	std::string call_note(std::uint64_t return_address, const std::vector<std::size_t> &calls,
			      std::size_t &matched) const;
	bool last_write(const std::vector<std::string> &words, bool all);
	bool accesses();
	bool when(const std::vector<std::string> &words, bool forward);
	bool fail(const std::string &message);
	std::string where_text(std::size_t position) const;
	std::optional<std::uint64_t> address_of(const std::string &text) const;

	replay::ReplayFile &file_;
	replay::Replay &replay_;
	Disassembler disassembler_;
	replay::Navigator navigator_;
	trace::SymbolTable symbols_;
	std::optional<ReplayOrc> orc_;
	std::FILE *out_;
};

}  // namespace vtice::console
