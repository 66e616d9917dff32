// libFuzzer target: packets from a gdb that lies, against serve-replay's
// stub over a small recording. Each input is split at '\n' into packets.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "recording.hpp"
#include "replay_engine.hpp"
#include "rsp_server.hpp"

namespace {

vtice::replay::Recording small_recording()
{
	vtice::replay::Recording r;
	r.registers = {{"rax", 64, "int64", ""}, {"rip", 64, "code_ptr", ""}, {"eflags", 32, "int32", ""}};
	r.initial.assign(20, 0);
	for (std::uint64_t i = 1; i <= 64; i++) {
		vtice::replay::Step s;
		std::vector<std::uint8_t> pc(8);
		std::uint64_t value = 0x1000 + i;
		std::memcpy(pc.data(), &value, 8);
		s.registers.push_back({1, pc});
		s.memory.push_back({vtice::replay::AccessKind::Write, 0x3000 + (i % 8), {1}, {2}});
		r.steps.push_back(s);
	}
	return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	vtice::replay::Replay replay(small_recording());
	vtice::replay::ReplayStub stub(replay);
	std::string input(reinterpret_cast<const char *>(data), size);
	std::size_t at = 0;
	while (at <= input.size()) {
		std::size_t end = input.find('\n', at);
		if (end == std::string::npos)
			end = input.size();
		bool ended = false;
		(void)stub.handle(std::string_view(input).substr(at, end - at), ended);
		if (ended)
			break;
		at = end + 1;
	}
	return 0;
}
