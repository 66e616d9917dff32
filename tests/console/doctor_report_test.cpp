// vtice doctor's report: the JSON a user attaches to a bug must parse
// (Python's json module is the independent parser) and carry each value
// unchanged, whatever bytes a CPU brand string or an error holds.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "command_output.hpp"
#include "doctor/report.hpp"

namespace vtice::console::doctor {
namespace {

std::string python_reads(const std::string &json, const std::string &expression)
{
	std::string path = testing::TempDir() + "/doctor-report.json";
	std::ofstream(path) << json;
	std::string command = "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
			      "sys.stdout.write(" + expression + ")' " + path;
	std::string out = test::command_output(command);
	std::remove(path.c_str());
	return out;
}

TEST(DoctorReport, JsonParsesAndKeepsEveryValue)
{
	MachineFacts facts;
	facts.cpu = "Evil \"CPU\" \\ name";
	facts.vendor = "GenuineIntel";
	facts.kernel = "6.12.0";
	std::vector<CheckResult> results = {
		{"load", Verdict::Pass, "2 of 2 online CPUs virtualized", 1.5},
		{"trace", Verdict::Fail, "line one\nline \"two\"\ttab", 30.25},
		{"lbr", Verdict::NotApplicable, "no LBR", 0},
	};
	std::string json = to_json(facts, results, "0.1.0");
	EXPECT_EQ(python_reads(json, "d[\"vtice_version\"]"), "0.1.0");
	EXPECT_EQ(python_reads(json, "d[\"machine\"][\"cpu\"]"), "Evil \"CPU\" \\ name (GenuineIntel, family 0 model 0 (0x0) stepping 0)");
	EXPECT_EQ(python_reads(json, "\" \".join(c[\"name\"] + \"=\" + c[\"result\"] for c in d[\"checks\"])"),
		  "load=pass trace=FAIL lbr=n/a");
	EXPECT_EQ(python_reads(json, "d[\"checks\"][1][\"details\"]"), "line one\nline \"two\"\ttab");
	EXPECT_EQ(python_reads(json, "str(d[\"checks\"][1][\"seconds\"])"), "30.25");
}

TEST(DoctorReport, TheSummaryNamesTheFirstFailure)
{
	std::vector<CheckResult> results = {{"vmx", Verdict::Pass, "", 0},
					    {"load", Verdict::Fail, "", 0},
					    {"unload", Verdict::NotApplicable, "", 0}};
	EXPECT_EQ(format_summary(results),
		  "1 passed, 1 failed, 1 not applicable; stopped at load\n");
	EXPECT_EQ(format_check({"exits-idle", Verdict::Pass, "0.000 VM exits", 0.25}),
		  "exits-idle        pass    0.2 s  0.000 VM exits\n");
}

}  // namespace
}  // namespace vtice::console::doctor
