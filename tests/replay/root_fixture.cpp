// Writes a root recording (root_records.hpp's three steps and their code)
// as `vtice trace syscall --record -o` would: the file stock gdb reads
// through `vtice serve-replay` in root_serve_gdb_test.py.
#include <cstdio>

#include "recording.hpp"
#include "root_records.hpp"
#include "root_steps.hpp"

using namespace vtice;

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: %s OUT.vtrace\n", argv[0]);
		return 2;
	}
	auto steps = replay::steps_from_records(replay::root_records::three_steps());
	if (!steps) {
		std::fprintf(stderr, "%s\n", steps.error().message.c_str());
		return 1;
	}
	steps->recording.code.push_back({replay::root_records::kRip, replay::root_records::kCode});
	trace::TraceWriter writer(trace::TraceHeader{});
	replay::add_recording(writer, steps->recording);
	if (auto r = trace::write_file(argv[1], writer.finish()); !r) {
		std::fprintf(stderr, "%s\n", r.error().to_string().c_str());
		return 1;
	}
	return 0;
}
