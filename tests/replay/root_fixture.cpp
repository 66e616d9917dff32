// Writes a root recording as `vtice trace syscall --record -o` would:
// root_records.hpp's three steps and their code (the file stock gdb reads
// through `vtice serve-replay` in root_serve_gdb_test.py), or with
// --decoded its eleven steps after the console's decoding of root's
// windows (Seen and Unseen accesses: the seed of fuzz_replay_reader's
// corpus root-decoded.vtrace).
#include <cstdio>
#include <cstring>

#include "recording.hpp"
#include "root_accesses.hpp"
#include "root_records.hpp"
#include "root_steps.hpp"

using namespace vtice;
using namespace vtice::replay::root_records;

int main(int argc, char **argv)
{
	bool decoded = argc == 3 && std::strcmp(argv[2], "--decoded") == 0;
	if (argc != 2 && !decoded) {
		std::fprintf(stderr, "usage: %s OUT.vtrace [--decoded]\n", argv[0]);
		return 2;
	}
	auto steps = replay::steps_from_records(decoded ? more_steps() : three_steps());
	if (!steps) {
		std::fprintf(stderr, "%s\n", steps.error().message.c_str());
		return 1;
	}
	if (decoded) {
		auto pages = text();
		replay::decode_root_accesses(steps->recording, pages);
		const auto &page = pages.begin()->second;	// the code, not its page's padding
		steps->recording.code.push_back({kRip, {page.begin(), page.begin() + 9 + kMoreCode.size()}});
	} else {
		steps->recording.code.push_back({kRip, kCode});
	}
	trace::TraceWriter writer(trace::TraceHeader{});
	replay::add_recording(writer, steps->recording);
	if (auto r = trace::write_file(argv[1], writer.finish()); !r) {
		std::fprintf(stderr, "%s\n", r.error().to_string().c_str());
		return 1;
	}
	return 0;
}
