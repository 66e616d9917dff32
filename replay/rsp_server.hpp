// serve-replay: a GDB-RSP stub over a step recording, so stock gdb's
// reverse-stepi, reverse-continue (with breakpoints and watchpoints),
// reverse-finish, info registers and x work on a recorded kernel path
// (GDB manual, "Remote Protocol": bs, bc, ReverseStep+, ReverseContinue+,
// the replaylog stop reason). The replay is read-only: writes are refused,
// and memory the recording never saw answers with an error.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "replay_engine.hpp"

namespace vtice::replay {

// How the stub names itself to `monitor vtice` (debugger/rsp/rsp_target.cpp
// tells a recording from a live machine by it).
inline constexpr const char *kServeReplayBanner = "vtice serve-replay";

class ReplayStub {
public:
	explicit ReplayStub(Replay &replay);

	// The reply to one packet's payload; sets `ended` on D and k.
	std::string handle(std::string_view packet, bool &ended);
	// What the target description says (qXfer:features:read:target.xml).
	std::string target_xml() const;
	bool no_ack() const { return no_ack_; }

private:
	enum class Watch : std::uint8_t { Write = 2, Read = 3, Access = 4 };
	struct Watchpoint {
		Watch kind;
		std::uint64_t address;
		std::size_t length;
	};
	std::string run(bool forward, bool single);
	std::string stop_reply(const std::string &reason = "") const;
	std::string watch_hit(std::size_t step) const;
	std::string read_memory(std::string_view args) const;
	std::string read_register(std::string_view args) const;
	std::string set_point(std::string_view args, bool insert);
	std::string monitor(std::string_view hex);
	std::string xfer_features(std::string_view args) const;

	Replay &replay_;
	// gdb's amd64 core registers the recording lacks (a root recording has
	// no segment or x87 registers): served after its own, unavailable.
	std::vector<RegisterSpec> unavailable_;
	std::set<std::uint64_t> breakpoints_;
	std::vector<Watchpoint> watchpoints_;
	bool no_ack_ = false;
};

struct ServeOptions {
	std::string host = "127.0.0.1";
	unsigned port = 0;
	bool once = false;  // end after the first client leaves
	std::function<void(const std::string &)> announce;
};

// Listens and serves one client at a time until a client ends with `k`
// or, with once, leaves.
Result<void> serve_replay(Replay &replay, const ServeOptions &options);

}  // namespace vtice::replay
