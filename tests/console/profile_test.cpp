// vtice profile's console half: sample groups decoded (records.h), a copied
// stack unwound with the real Debian kernel's ORC tables (an entry's return
// address is at RSP: the CALL instruction's own definition), counts per CPU
// and per function, folded lines as flamegraph.pl reads them, and a
// Perfetto timeline that Python's json module parses with balanced slices.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "command_output.hpp"
#include "profile_report.hpp"
#include "profile_samples.hpp"
#include "profile_stacks.hpp"
#include "symbols/loader.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

vtice_record rec(uint16_t type, uint32_t flags, uint64_t a, uint64_t b, uint64_t tsc = 1000)
{
	vtice_record r{};
	r.type = type;
	r.cpu = 1;
	r.flags = flags;
	r.tsc = tsc;
	r.u.raw[0] = a;
	r.u.raw[1] = b;
	return r;
}

std::vector<vtice_record> sample_group(uint64_t rip, uint64_t rsp, std::vector<uint64_t> stack, uint32_t bits = 0,
				       uint32_t pid = 42, const char *comm = "dd", uint64_t tsc = 1000)
{
	std::vector<vtice_record> g;
	g.push_back(rec(VTICE_REC_PROFILE_SAMPLE, bits, rip, rsp, tsc));
	g.push_back(rec(VTICE_REC_SYSCALL_DATA, VTICE_SYSCALL_DATA_REGS, 0xb0b0, 0, tsc));
	g.push_back(rec(VTICE_REC_SYSCALL_DATA, VTICE_SYSCALL_DATA_TASK, pid | (uint64_t)pid << 32, 0xffff8880, tsc));
	uint64_t name[2] = {};
	std::strncpy(reinterpret_cast<char *>(name), comm, 15);
	g.push_back(rec(VTICE_REC_SYSCALL_DATA, VTICE_SYSCALL_DATA_COMM, name[0], name[1], tsc));
	for (size_t i = 0; i + 1 < stack.size(); i += 2)
		g.push_back(rec(VTICE_REC_SYSCALL_DATA, VTICE_SYSCALL_DATA_STACK, stack[i], stack[i + 1], tsc));
	g[0].flags |= static_cast<uint32_t>(g.size() - 1);
	return g;
}

TEST(ProfileDecode, AGroupBecomesOneSample)
{
	auto g = sample_group(0xffffffff81001000, 0xffffc90000003f00, {1, 2, 3, 4});
	trace::ProfileDecodeStats stats;
	auto samples = trace::decode_profile_records(g, stats);
	ASSERT_EQ(samples.size(), 1u);
	const auto &s = samples[0];
	EXPECT_EQ(s.cpu, 1u);
	EXPECT_EQ(s.rip, 0xffffffff81001000u);
	EXPECT_EQ(s.rsp, 0xffffc90000003f00u);
	EXPECT_EQ(s.rbp, 0xb0b0u);
	EXPECT_TRUE(s.has_task);
	EXPECT_EQ(s.pid, 42u);
	EXPECT_EQ(s.comm, "dd");
	ASSERT_EQ(s.stack.size(), 32u);
	uint64_t words[4];
	std::memcpy(words, s.stack.data(), sizeof(words));
	EXPECT_EQ(words[0], 1u);
	EXPECT_EQ(words[3], 4u);
	EXPECT_FALSE(s.user);
	EXPECT_EQ(stats.samples, 1u);
}

TEST(ProfileDecode, CutGroupsAndUnknownKindsAreCountedNotTrusted)
{
	auto cut = sample_group(1, 2, {1, 2});
	cut.pop_back();	// the group says one more DATA record follows
	auto unknown = sample_group(1, 2, {});
	unknown[1].flags = 99;
	auto user_with_stack = sample_group(0x401000, 0x7ffd0000, {1, 2}, VTICE_PROFILE_USER);
	auto good = sample_group(3, 4, {});
	std::vector<vtice_record> all;
	for (auto *g : {&cut, &unknown, &user_with_stack, &good})
		all.insert(all.end(), g->begin(), g->end());
	vtice_record lost = rec(VTICE_REC_LOST, 0, 7, 0);
	all.push_back(lost);
	trace::ProfileDecodeStats stats;
	auto samples = trace::decode_profile_records(all, stats);
	ASSERT_EQ(samples.size(), 1u);
	EXPECT_EQ(samples[0].rip, 3u);
	EXPECT_EQ(stats.malformed, 3u);
	EXPECT_EQ(stats.lost, 7u);
}

std::string debian_vmlinux()
{
	if (std::filesystem::is_directory(VTICE_KERNEL_DIR))
		for (const auto &entry : std::filesystem::directory_iterator(VTICE_KERNEL_DIR))
			if (std::filesystem::exists(entry.path() / "vmlinux"))
				return (entry.path() / "vmlinux").string();
	return "";
}

TEST(ProfileStacks, TheReturnAddressAtAnEntryIsTheCaller)
{
	std::string vmlinux = debian_vmlinux();
	if (vmlinux.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	auto loaded = symbols::load_symbols(vmlinux);
	ASSERT_TRUE(loaded && loaded->image) << (loaded ? "no image" : loaded.error().message);
	symbols::SymbolTable names;
	for (const char *n : {"__start_orc_unwind_ip", "__stop_orc_unwind_ip", "__start_orc_unwind"})
		names.add(*loaded->table->address_of(n), 'R', n);
	names.finalize();
	auto orc = symbols::OrcTable::load(names, *loaded->image);
	ASSERT_TRUE(orc) << orc.error().message;
	uint64_t vfs_read = *loaded->table->address_of("vfs_read");
	uint64_t ksys_read = *loaded->table->address_of("ksys_read");
	// At vfs_read's first instruction the CALL just pushed its return
	// address: somewhere in ksys_read. The copy ends right after it.
	trace::ProfileSample s;
	s.rip = vfs_read;
	s.rsp = 0xffffc90000003e00;
	uint64_t ret = ksys_read + 0x40;
	s.stack.resize(16);
	std::memcpy(s.stack.data(), &ret, 8);
	symbols::OrcTables tables(std::move(*orc));
	SampleStack stack = unwind_sample(&tables, s, 16);
	ASSERT_GE(stack.frames.size(), 2u);
	EXPECT_EQ(stack.frames[0], vfs_read);
	EXPECT_EQ(stack.frames[1], ret);
	EXPECT_TRUE(stack.truncated) << "ksys_read's own frame is past the copy";
	EXPECT_EQ(unwind_sample(nullptr, s, 16).frames.size(), 1u) << "without ORC: the leaf alone";
}

trace::ProfileSample sample(uint16_t cpu, uint64_t tsc, bool user = false, uint32_t pid = 42, const char *comm = "dd")
{
	trace::ProfileSample s;
	s.cpu = cpu;
	s.tsc = tsc;
	s.user = user;
	s.has_task = true;
	s.pid = pid;
	s.comm = comm;
	return s;
}

TEST(ProfileReport, CountsKindsGapsAndFunctions)
{
	ProfileReport r(1000);
	r.add(sample(0, 1000), {"entry", "ksys_read", "vfs_read"}, false);
	r.add(sample(0, 2000), {"entry", "ksys_read", "vfs_read"}, false);
	r.add(sample(0, 6000), {"entry", "ksys_write"}, true);	// three periods with no sample before it
	r.add(sample(0, 7000, true), {"[user]"}, false);
	r.add(sample(1, 1000, false, 0, "swapper/1"), {"default_idle"}, false);
	const auto &c0 = r.cpus().at(0);
	EXPECT_EQ(c0.samples, 4u);
	EXPECT_EQ(c0.kernel, 3u);
	EXPECT_EQ(c0.user, 1u);
	EXPECT_EQ(c0.idle, 0u);
	EXPECT_EQ(c0.unsampled, 3u);
	EXPECT_EQ(r.cpus().at(1).idle, 1u);
	char *text = nullptr;
	size_t len = 0;
	std::FILE *f = open_memstream(&text, &len);
	r.write_folded(f);
	std::fclose(f);
	EXPECT_STREQ(text,
		     "dd;[user] 1\n"
		     "dd;entry;ksys_read;vfs_read 2\n"
		     "dd;entry;ksys_write 1\n"
		     "swapper/1;default_idle 1\n");
	std::free(text);
	f = open_memstream(&text, &len);
	r.write_text(f, 2);
	std::fclose(f);
	std::string report(text, len);
	std::free(text);
	EXPECT_NE(report.find(" 40.0%   40.0%         2  vfs_read"), std::string::npos) << report;
	EXPECT_EQ(report.find("ksys_write"), std::string::npos) << "--top 2: " << report;
	EXPECT_NE(report.find("1 of 5 samples' stacks end early"), std::string::npos) << report;
}

TEST(ProfileReport, FoldedFramesCannotSplitALine)
{
	ProfileReport r(1000);
	r.add(sample(0, 1000, false, 7, "a b;c\n9"), {"x;y", "z w\x1b[2J"}, false);
	char *text = nullptr;
	size_t len = 0;
	std::FILE *f = open_memstream(&text, &len);
	r.write_folded(f);
	std::fclose(f);
	EXPECT_STREQ(text, "a\\x20b\\x3bc\\x0a9;x\\x3by;z\\x20w\\x1b[2J 1\n");
	std::free(text);
}

std::string python_checks_timeline(const std::string &path)
{
	std::string command =
		"python3 -c 'import json,sys\n"
		"d = json.load(open(sys.argv[1]))\n"
		"depth = {}; last = {}\n"
		"for e in d[\"traceEvents\"]:\n"
		"    if e[\"ph\"] == \"M\": continue\n"
		"    t = e[\"tid\"]\n"
		"    assert e[\"ts\"] >= last.get(t, 0), e\n"
		"    last[t] = e[\"ts\"]\n"
		"    depth[t] = depth.get(t, 0) + (1 if e[\"ph\"] == \"B\" else -1)\n"
		"    assert depth[t] >= 0, e\n"
		"assert all(v == 0 for v in depth.values()), depth\n"
		"print(sum(1 for e in d[\"traceEvents\"] if e[\"ph\"] == \"B\"))' " +
		path + " 2>&1";
	return test::command_output(command);
}

TEST(ProfileTimeline, SlicesNestBalanceAndMergeAcrossSamples)
{
	std::string path = testing::TempDir() + "/profile-timeline.json";
	std::FILE *f = std::fopen(path.c_str(), "w");
	ASSERT_NE(f, nullptr);
	ProfileTimeline t(f, 1.0, 1000);
	t.add(sample(0, 1000), {"entry", "ksys_read", "vfs_read"});
	t.add(sample(0, 2000), {"entry", "ksys_read", "vfs_read"});	// the same: nothing new opens
	t.add(sample(0, 3000), {"entry", "ksys_write"});		// entry stays open
	t.add(sample(0, 9000), {"entry"});				// after a gap: all anew
	t.add(sample(1, 500), {"a\"b\\c"});
	t.add(sample(0, 8000), {"entry"});				// the clock went back
	t.finish();
	std::fclose(f);
	// entry, ksys_read, vfs_read; ksys_write; entry; a"b\c; entry.
	EXPECT_EQ(python_checks_timeline(path), "7\n");
}

}  // namespace
