// `vtice report` end to end, run as a user would: the bundled demo trace,
// each format, -o, bad arguments, and a damaged copy rendered up to the damage.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "assemble.hpp"
#include "fixture_builder.hpp"

namespace vtice {
namespace {

const std::string kFixtures = std::string(VTICE_TEST_DATA) + "/fixtures/";

std::string report(const std::string &args, int *status)
{
	return test::run_command(std::string(VTICE_BINARY) + " report " + args, status);
}

TEST(Report, RendersTheDemoTraceInEveryFormat)
{
	int status = -1;
	std::string graph = report(kFixtures + "demo.vtrace", &status);
	EXPECT_EQ(status, 0);
	EXPECT_EQ(graph, test::read_text_file(kFixtures + "calls/expected.graph"));
	std::string folded = report(kFixtures + "demo.vtrace --format folded", &status);
	EXPECT_EQ(status, 0);
	EXPECT_EQ(folded, test::read_text_file(kFixtures + "calls/expected.folded"));
	std::string out = testing::TempDir() + "/demo.json";
	report(kFixtures + "demo.vtrace --format=perfetto -o " + out, &status);
	EXPECT_EQ(status, 0);
	std::string events = test::run_command("python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
					       " print(sum(e[\"ph\"]==\"X\" for e in d[\"traceEvents\"]))' " + out);
	EXPECT_EQ(events, "9\n");  // _start main leaf leaf2 loop_fn leaf outer middle inner
	std::remove(out.c_str());
}

TEST(Report, BadArgumentsAreUsageErrors)
{
	int status = -1;
	std::string text = report("", &status);
	EXPECT_EQ(status, 2);
	EXPECT_NE(text.find("expected one TRACE file"), std::string::npos);
	text = report(kFixtures + "demo.vtrace --format svg", &status);
	EXPECT_EQ(status, 2);
	EXPECT_NE(text.find("unknown --format 'svg'"), std::string::npos);
	text = report("--help", &status);
	EXPECT_EQ(status, 0);
	EXPECT_NE(text.find("usage: vtice report TRACE"), std::string::npos);
	text = report("/nonexistent.vtrace", &status);
	EXPECT_EQ(status, 1);
	EXPECT_NE(text.find("/nonexistent.vtrace: No such file or directory"), std::string::npos);
}

TEST(Report, DamagedTraceRendersItsValidPrefix)
{
	std::ifstream in(kFixtures + "demo.vtrace", std::ios::binary);
	std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
	ASSERT_GT(bytes.size(), 64u);
	// Cut inside the END chunk: header, CODE, SYMBOLS and RECORDS survive.
	std::string path = testing::TempDir() + "/cut.vtrace";
	std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 4));
	int status = -1;
	std::string text = report(path, &status);
	EXPECT_EQ(status, 1);
	EXPECT_NE(text.find("} /* loop_fn */"), std::string::npos) << text;
	EXPECT_NE(text.find("chunk length 8 runs past the end of the file"), std::string::npos) << text;
	EXPECT_NE(text.find("rendered the 17 records before it"), std::string::npos) << text;
	std::remove(path.c_str());
	// Not a trace at all: nothing to render, a clear error.
	text = report(kFixtures + "calls/snippet.S", &status);
	EXPECT_EQ(status, 1);
	EXPECT_NE(text.find("not a vtice trace file: bad magic (at offset 0x0)"), std::string::npos) << text;
}

// A trace without CODE chunks classifies its branches from the vmlinux given
// with --symbols, and names them from it. The call at startup_64+0x31 (objdump: call 0xffffffff810007e0)
// must open a frame; without the image the branch stays unclassified.
TEST(Report, ClassifiesFromTheRealVmlinux)
{
	std::string dir = test::run_command(std::string(VTICE_TEST_DATA) + "/../tools/kernel.sh " +
					    VTICE_KERNEL_DIR + " 2>/dev/null | tail -1");
	std::string vmlinux = dir.substr(0, dir.find('\n')) + "/vmlinux";
	if (!std::ifstream(vmlinux))
		GTEST_SKIP() << "no unpacked Debian kernel (run tools/kernel.sh)";
	std::string listing = test::run_command("objdump -d --no-show-raw-insn --start-address=0xffffffff81000031 "
						"--stop-address=0xffffffff81000036 " + vmlinux);
	ASSERT_NE(listing.find("call   0xffffffff810007e0"), std::string::npos) << listing;
	trace::TraceHeader header;
	header.tsc_khz = 1000000;
	trace::TraceWriter writer(header);
	vtice_record call{};
	call.type = VTICE_REC_BRANCH;
	call.tsc = 100;
	call.u.branch.from = 0xffffffff81000031ull;
	call.u.branch.to = 0xffffffff810007e0ull;
	writer.add_records(std::span(&call, 1));
	std::string path = testing::TempDir() + "/vmlinux-call.vtrace";
	auto bytes = writer.finish();
	ASSERT_TRUE(trace::write_file(path, bytes).ok());
	int status = -1;
	std::string without = report(path, &status);
	EXPECT_NE(without.find("unclassified: 1"), std::string::npos) << without;
	std::string with = report(path + " --symbols " + vmlinux, &status);
	EXPECT_EQ(status, 0) << with;
	EXPECT_NE(with.find("unclassified: 0"), std::string::npos) << with;
	// Names via the symbols library (kallsyms tables inside the image); the
	// expected ones come from arch/x86/kernel/head_64.S, where .text opens
	// with startup_64, which early on calls startup_64_setup_env.
	EXPECT_NE(with.find("|  startup_64() { /* already running */"), std::string::npos) << with;
	EXPECT_NE(with.find("|    startup_64_setup_env(); /* still running */"), std::string::npos) << with;
	std::remove(path.c_str());
}

}  // namespace
}  // namespace vtice
