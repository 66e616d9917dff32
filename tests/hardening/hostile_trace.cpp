// vtice_hostile_trace KIND OUT.vtrace [N]: writes, with vtice's own trace
// writer, the traces the hostile-input suite feeds to `vtice report`:
//   deep N       one self-recursive call N levels deep ("call self")
//   backwards    calls whose records go back in time
//   names        symbols whose names carry terminal controls, C1 included
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "record_builders.hpp"
#include "trace_file.hpp"

using namespace vtice::trace;
using vtice::test::branch_record;

namespace {

constexpr std::uint64_t kText = 0xffffffff81000000ull;
// call kText (rel32 -5 from the next instruction), then ret.
const std::uint8_t kSelfCall[] = {0xe8, 0xfb, 0xff, 0xff, 0xff, 0xc3};

std::vector<std::uint8_t> deep(unsigned long levels)
{
	TraceHeader header;
	header.clock = TraceClock::Instructions;
	TraceWriter writer(header);
	writer.add_code(kText, kSelfCall);
	std::vector<vtice_record> records;
	for (unsigned long i = 0; i < levels; i++)
		records.push_back(branch_record(0, i + 1, kText, kText, VTICE_BRANCH_FROM_STEP));
	writer.add_records(records);
	return writer.finish();
}

// A call at tsc 100 returns at tsc 40: its end is before its start.
std::vector<std::uint8_t> backwards()
{
	TraceWriter writer(TraceHeader{});
	const std::uint8_t code[] = {0xe8, 0x00, 0x10, 0x00, 0x00, 0xc3};	// call +0x1000; ret
	writer.add_code(kText, code);
	const std::uint8_t callee[] = {0xc3};
	writer.add_code(kText + 0x1005, callee);
	std::vector<vtice_record> records = {branch_record(0, 100, kText, kText + 0x1005),
					     branch_record(0, 40, kText + 0x1005, kText + 5)};
	writer.add_records(records);
	return writer.finish();
}

std::vector<std::uint8_t> names()
{
	TraceWriter writer(TraceHeader{});
	const std::uint8_t code[] = {0xe8, 0x00, 0x10, 0x00, 0x00, 0xc3};
	writer.add_code(kText, code);
	const std::uint8_t callee[] = {0xc3};
	writer.add_code(kText + 0x1005, callee);
	std::vector<TraceSymbol> symbols = {{kText, 6, "caller\x1b[2J\x1b]0;owned\x07"},
					    {kText + 0x1005, 1, "callee\x9b" "31m\xc2\x9b" "0m;\n x"}};
	writer.add_symbols(symbols);
	std::vector<vtice_record> records = {branch_record(0, 10, kText, kText + 0x1005),
					     branch_record(0, 12, kText + 0x1005, kText + 5)};
	writer.add_records(records);
	return writer.finish();
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: vtice_hostile_trace deep|backwards|names OUT.vtrace [N]\n");
		return 2;
	}
	std::string kind = argv[1];
	std::vector<std::uint8_t> bytes;
	if (kind == "deep")
		bytes = deep(argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 20000);
	else if (kind == "backwards")
		bytes = backwards();
	else if (kind == "names")
		bytes = names();
	else {
		std::fprintf(stderr, "vtice_hostile_trace: unknown kind '%s'\n", kind.c_str());
		return 2;
	}
	auto written = write_file(argv[2], bytes);
	if (!written) {
		std::fprintf(stderr, "vtice_hostile_trace: %s\n", written.error().to_string().c_str());
		return 1;
	}
	return 0;
}
