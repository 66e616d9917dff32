// The frames above a replay position, unwound with the kernel's ORC tables
// (`vtice replay TRACE --symbols VMLINUX`): the vmlinux's tables, moved to
// where the recording's own symbols say that kernel ran (its KASLR slide),
// over the registers and the memory the recording holds at that step. A
// frame whose stack bytes the recording never saw ends the walk; nothing is
// guessed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "orc_unwinder.hpp"
#include "replay_engine.hpp"
#include "trace_file.hpp"

namespace vtice::console {

struct ReplayOrc {
	std::unique_ptr<dbg::OrcUnwinder> unwinder;
	Symbolizer symbolizer;  // the vmlinux's names, slid: frames outside the recording too
	std::int64_t slide = 0;
	std::size_t agreeing = 0;  // recorded functions whose address gives that slide
};

// The slide is the one most of the recording's functions agree on; none
// found in the vmlinux means another kernel, an error that says so.
Result<ReplayOrc> load_replay_orc(const std::string &vmlinux, const std::vector<trace::TraceSymbol> &recorded);

// The frames at the replay's position, innermost first (frame 0: its pc).
Result<std::vector<dbg::Frame>> unwind_replay(const ReplayOrc &orc, const replay::Replay &replay,
					       std::size_t max_frames);

}  // namespace vtice::console
