// Opening a recorded trace for replay: the file, its recording, and the
// damage the reader met (the good prefix is still replayed).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "replay_engine.hpp"
#include "trace_file.hpp"

namespace vtice::replay {

struct ReplayFile {
	trace::TraceData data;            // header, symbols, code
	std::unique_ptr<Replay> replay;
	std::optional<Error> damage;      // where the file stopped being readable
};

Result<ReplayFile> open_replay(const std::string &path);

}  // namespace vtice::replay
