// libFuzzer target: a trace file with a step recording, as `vtice replay`
// and `vtice serve-replay` open it: the chunks, the replay engine over
// whatever loads, the call-depth navigation and a few queries.
#include <cstddef>
#include <cstdint>

#include "navigation.hpp"
#include "recording.hpp"
#include "replay_engine.hpp"
#include "trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	auto trace = vtice::trace::read_trace(std::span(data, size));
	if (!trace)
		return 0;
	auto recording = vtice::replay::load_recording(*trace);
	if (!recording)
		return 0;
	vtice::replay::Replay replay(std::move(*recording));
	vtice::Disassembler disassembler;
	vtice::replay::Navigator navigator(replay, disassembler);
	std::size_t n = replay.steps();
	for (std::size_t k : {n, std::size_t(0), n / 2, n}) {
		replay.seek(k);
		(void)replay.reg("rip");
		(void)replay.read(replay.pc_at(k), 16);
		(void)replay.last_write(replay.pc_at(k), 8, k);
		(void)navigator.finish(k);
		(void)navigator.reverse_finish(k);
		(void)navigator.call_stack(k);
	}
	(void)navigator.find_register("rax", 0, 0, true);
	return 0;
}
