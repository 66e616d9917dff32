// vtice probe's ARM request: each probed address once with the fetch
// program its hits run, and a refusal where two probes written differently
// land on one address but read different memory (root runs one program per
// address, so one of them would print the other's values).
#include <gtest/gtest.h>

#include <cstring>

#include <memory>
#include <regex>
#include <string>

#include "../symbols/kernel_dir.hpp"
#include "checker.hpp"
#include "diagnostic.hpp"
#include "probe_functions.hpp"
#include "probe_params.hpp"
#include "probe_run.hpp"
#include "trace_common.hpp"

using namespace vtice;

namespace {

std::optional<std::uint64_t> no_syscalls(std::string_view) { return std::nullopt; }

// fn:vfs_read's entry past its ENDBR64 on a kernel with IBT, where
// addr:vfs_read+4 lands too: resolve_function_points' part, done by hand.
constexpr std::uint64_t kVfsReadBody = 0xffffffff81234564ull;

// source checked against a Debian kernel's BTF (reads through reg() need
// its types), every point placed at kVfsReadBody.
class ProbeArmRequest : public ::testing::Test {
protected:
	void SetUp() override
	{
		auto dirs = symbols::testing::debian_kernel_dirs();
		if (dirs.empty())
			GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
		btf_ = std::make_shared<console::ProbeTypes>(
			std::make_shared<console::KernelBtf>((dirs[0] / "vmlinux").string()));
		types_ = console::kernel_types(btf_);
	}

	probes::CheckedProgram resolved(const std::string &source)
	{
		auto program = probes::compile_program(source, no_syscalls, console::kernel_params(btf_), types_.get());
		EXPECT_TRUE(program.ok()) << source << ": " << (program.ok() ? "" : program.error().message);
		if (!program.ok())
			return {};
		for (auto &probe : program->program.probes)
			for (auto &point : probe.points)
				point.address = kVfsReadBody;
		return std::move(*program);
	}

	// Why arm_request refuses source, as the user sees it ("" if it does not).
	std::string refusal(const std::string &source)
	{
		auto req = console::arm_request(resolved(source), 0);
		return req.ok() ? std::string() : probes::format_diagnostic(source, req.error());
	}

	std::shared_ptr<console::ProbeTypes> btf_;
	std::unique_ptr<probes::KernelTypes> types_;
};

}  // namespace

TEST_F(ProbeArmRequest, TwoProbesAtOneAddressReadingTheSameShareItsSlotAndProgram)
{
	// One address by name and by number.
	auto program = resolved("addr:vfs_read+4 { printf(\"%s\\n\", str(reg(\"rsi\"))); }\n"
				"addr:0xffffffff81234564 { printf(\"%s|\\n\", str(reg(\"rsi\"))); }");
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->count, 1u);
	EXPECT_EQ(req->addrs[0], kVfsReadBody);
	EXPECT_EQ(req->nr_programs, 1u);
	EXPECT_EQ(req->program[0], 1u);
}

TEST_F(ProbeArmRequest, TwoProbesAtOneAddressReadingDifferentMemoryAreRefusedAtTheSecond)
{
	auto why = refusal("fn:vfs_read { printf(\"%s\\n\", str(arg1)); }\n"
			   "addr:vfs_read+4 { printf(\"%s\\n\", str(reg(\"rdi\"))); }");
	EXPECT_NE(why.find("program:2:1: error: addr:vfs_read+4 is 0xffffffff81234564, where another probe reads "
			   "other memory"),
		  std::string::npos)
		<< why;
}

TEST_F(ProbeArmRequest, AProbeThatReadsNothingLeavesTheOthersProgramInPlace)
{
	auto program = resolved("fn:vfs_read { printf(\"%s\\n\", str(arg1)); }\n"
				"addr:vfs_read+4 { @n = count(); }");
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->count, 1u);
	EXPECT_EQ(req->program[0], 1u);
}

// A probe whose predicate root tests drops hits for every probe at its
// address: one written differently that lands there is refused.
TEST_F(ProbeArmRequest, AProbeTestedInRootSharesItsAddressWithNoOther)
{
	auto why = refusal("fn:vfs_read /arg2 > 4096/ { @big = sum(cpu); }\n"
			   "addr:vfs_read+4 { @all = sum(cpu); }");
	EXPECT_NE(why.find("program:2:1: error: addr:vfs_read+4 is 0xffffffff81234564, where another probe's "
			   "predicate is tested in root"),
		  std::string::npos)
		<< why;
}

// Two probes counted in root (@n = count()) that land on one address: root
// would count the one's hits for both, so both are recorded there and the
// console counts them.
TEST_F(ProbeArmRequest, ProbesCountedInRootAtOneAddressAreRecordedThere)
{
	auto program = resolved("fn:vfs_read /arg2 > 4096/ { @big = count(); }\n"
				"addr:vfs_read+4 { @all = count(); }");
	ASSERT_TRUE(program.program.probes[0].count_in_root && program.program.probes[1].count_in_root);
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->count, 1u);
	EXPECT_EQ(req->program[0], 0u) << "no COUNT, no test: every hit recorded";
	auto alone = console::arm_request(resolved("fn:vfs_read /arg2 > 4096/ { @big = count(); }"), 0);
	ASSERT_TRUE(alone.ok());
	EXPECT_EQ(alone->program[0], 1u);
	EXPECT_EQ(alone->fetch[0][2].code, VTICE_FETCH_COUNT) << "alone, root counts it";
}

// Root holds 8 fetch programs: past them, a probe whose program only
// tests its predicate leaves the test to the console instead of failing.
TEST_F(ProbeArmRequest, PastRootsProgramsAPredicateIsLeftToTheConsole)
{
	std::string source;
	for (int i = 0; i < 10; i++)
		source += "addr:0x" + std::to_string(81000000 + i) + " /reg(\"rdx\") > " + std::to_string(i) +
			  "/ { @n" + std::to_string(i) + " = count(); }\n";
	auto program = probes::compile_program(source, no_syscalls, console::kernel_params(btf_), types_.get());
	ASSERT_TRUE(program.ok()) << program.error().message;
	std::uint64_t address = 0xffffffff81000000ull;
	for (auto &probe : program->program.probes)
		probe.points[0].address = address += 16;
	auto req = console::arm_request(*program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->count, 10u);
	EXPECT_EQ(req->nr_programs, 8u);
	EXPECT_EQ(req->program[8], 0u) << "the ninth probe's test stays with the console";
	EXPECT_EQ(req->program[7], 8u);
}

// kstack read by some probes only: root copies the stack at their
// addresses and ranges alone, and at an address two probes share when
// either reads it.
TEST_F(ProbeArmRequest, OnlyTheProbesThatReadKstackCopyTheStack)
{
	const std::string source = "fn:vfs_read { @[kstack] = count(); }\n"
				   "fn:vfs_write { @w = count(); }\n"
				   "watch:w:0xffff888000100000:8 { @s[kstack] = count(); }\n"
				   "watch:w:0xffff888000100100:8 { @x = count(); }\n"
				   "fn:vfs_open { @o = count(); }\n"
				   "fn:vfs_open { printf(\"%s\", kstack); }\n";
	auto program = probes::compile_program(source, no_syscalls, console::kernel_params(btf_), types_.get());
	ASSERT_TRUE(program.ok()) << program.error().message;
	std::uint64_t address = 0xffffffff81000000ull;
	for (auto &probe : program->program.probes)
		if (probe.points[0].kind != probes::PointKind::Watch)
			probe.points[0].address = address += 16;
	program->program.probes[5].points[0].address = program->program.probes[4].points[0].address;	// one vfs_open
	std::vector<bool> reads;
	for (const auto &probe : program->program.probes)
		reads.push_back(probe.copies_kstack);
	EXPECT_EQ(reads, (std::vector<bool>{true, false, true, false, false, true}));
	auto req = console::arm_request(*program, 2048);
	ASSERT_TRUE(req.ok()) << req.error().message;
	ASSERT_EQ(req->count, 3u);
	ASSERT_EQ(req->nr_watches, 2u);
	EXPECT_EQ(req->stack_bytes, 2048u);
	EXPECT_EQ(req->stack_points, 0b101u) << "vfs_read's and vfs_open's, not vfs_write's";
	EXPECT_EQ(req->stack_watches, 0b01u) << "the first range's";
}

// The set of syscalls root records, bit 64w + b in word w; a number past
// the set (512) cannot be chosen, so every syscall is recorded then.
TEST(SyscallsRequest, TheSyscallsNamedAreBitsOfTheSet)
{
	auto req = console::syscalls_request(VTICE_SYSCALLS_ARM, {}, {}, {0, 3, 257, 511});
	ASSERT_TRUE(req.ok());
	EXPECT_EQ(req->flags, (std::uint32_t)VTICE_SYSCALLS_CHOSEN);
	EXPECT_EQ(req->nrs[0], 0b1001u);
	EXPECT_EQ(req->nrs[4], 2u);
	EXPECT_EQ(req->nrs[7], 1ull << 63);
	auto all = console::syscalls_request(VTICE_SYSCALLS_ARM, {}, {});
	ASSERT_TRUE(all.ok());
	EXPECT_EQ(all->flags, 0u);
	auto past = console::syscalls_request(VTICE_SYSCALLS_ARM, {}, {}, {257, 512});
	ASSERT_TRUE(past.ok());
	EXPECT_EQ(past->flags, 0u) << "512 is past the set: every syscall";
	EXPECT_EQ(past->nrs[4], 0u);
}

namespace {

class NoOutput : public probes::Output {
public:
	void text(std::string_view) override {}
	void map(const probes::MapInfo &info, const probes::MapEntries &entries) override
	{
		maps += probes::format_map_text(info, entries);
	}
	std::string maps;
};

}  // namespace

// Root's counts are running totals per address: the run adds what each
// address counted since the last look to the probe armed there, and
// ignores addresses no probe counting in root owns.
TEST_F(ProbeArmRequest, RootCountsFeedTheirProbesMapByTheirGrowth)
{
	auto program = resolved("fn:vfs_read { @n = count(); }");
	ASSERT_TRUE(program.program.probes[0].count_in_root);
	NoOutput out;
	probes::Runtime runtime(program, out);
	runtime.begin(0);
	console::RootCountFeed feed(program, {});
	EXPECT_TRUE(feed.any());
	feed.feed(runtime, {{kVfsReadBody, 3}});
	feed.feed(runtime, {{kVfsReadBody, 5}, {kVfsReadBody + 0x100, 9}});
	feed.feed(runtime, {{kVfsReadBody, 5}});
	EXPECT_EQ(feed.total(), 5u);
	runtime.finish(1);
	EXPECT_EQ(out.maps, "@n: 5\n");
}

// `@m[func]` and `@m[probe]` counted in root: each address's growth goes
// under the function the records' func would name (the run's naming) or
// the point the program wrote, two addresses of one key adding up.
TEST_F(ProbeArmRequest, RootCountsByFunctionOrPointFeedEachAddressUnderItsKey)
{
	auto program = resolved("fn:vfs_read, fn:vfs_write { @calls[func] = count(); }\n"
				"fn:ksys_read, fn:ksys_write { @bytes[probe] = sum(arg2); }");
	const std::uint64_t read = 0xffffffff81000100, write = 0xffffffff81000200, ksys_read = 0xffffffff81000300,
			    ksys_write = 0xffffffff81000400;
	auto &probes = program.program.probes;
	ASSERT_EQ(probes.size(), 2u);
	ASSERT_EQ(probes[0].root_key, probes::RootKey::Func);
	ASSERT_EQ(probes[1].root_key, probes::RootKey::Probe);
	probes[0].points[0].address = read;
	probes[0].points[1].address = write;
	probes[1].points[0].address = ksys_read;
	probes[1].points[1].address = ksys_write;
	auto name = [=](std::uint64_t at) {
		return at == read ? "vfs_read" : at == write ? "vfs_write" : std::string();
	};
	NoOutput out;
	probes::Runtime runtime(program, out);
	runtime.begin(0);
	console::RootCountFeed feed(program, name);
	console::RootCount r{read, 2, 0, {}, {}}, w{write, 1, 0, {}, {}}, kr{ksys_read, 2, 10, {}, {}},
		kw{ksys_write, 1, 5, {}, {}};
	feed.feed(runtime, {r, w, kr, kw});
	r.hits = 5, kw.hits = 3, kw.sum = 5 + 7 + 9;
	feed.feed(runtime, {r, w, kr, kw});
	EXPECT_EQ(feed.total(), 11u);
	runtime.finish(1);
	EXPECT_NE(out.maps.find("@calls[vfs_read]: 5\n"), std::string::npos) << out.maps;
	EXPECT_NE(out.maps.find("@calls[vfs_write]: 1\n"), std::string::npos) << out.maps;
	EXPECT_NE(out.maps.find("@bytes[fn:ksys_read]: 10\n"), std::string::npos) << out.maps;
	EXPECT_NE(out.maps.find("@bytes[fn:ksys_write]: 21\n"), std::string::npos) << out.maps;
}

// hist() by func: each address's buckets go into its function's histogram.
TEST_F(ProbeArmRequest, RootHistogramsByFunctionFeedEachAddressUnderItsKey)
{
	auto program = resolved("fn:vfs_read, fn:vfs_write { @sizes[func] = hist(arg2); }");
	const std::uint64_t read = 0xffffffff81000100, write = 0xffffffff81000200;
	auto &probe = program.program.probes.at(0);
	ASSERT_EQ(probe.root_key, probes::RootKey::Func);
	ASSERT_EQ(probe.root_value, probes::RootValue::Hist);
	probe.points[0].address = read;
	probe.points[1].address = write;
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	console::RootCountTable table(program, *req);
	EXPECT_EQ(table.hist_indices(), (std::vector<std::uint32_t>{0, 1}));
	NoOutput out;
	probes::Runtime runtime(program, out);
	runtime.begin(0);
	console::RootCountFeed feed(program, [=](std::uint64_t at) { return at == read ? "vfs_read" : "vfs_write"; });
	std::vector<std::uint64_t> reads(VTICE_FETCH_HIST_BUCKETS), writes(VTICE_FETCH_HIST_BUCKETS);
	reads[2] = 3;	// root's bucket 2: the map's [1]
	writes[5] = 1;	// the map's [8, 16)
	table.update({3, 1}, {});
	table.update_hist(req->addrs[0] == read ? 0 : 1, reads);
	table.update_hist(req->addrs[0] == read ? 1 : 0, writes);
	feed.feed(runtime, table.totals());
	runtime.finish(1);
	EXPECT_TRUE(std::regex_search(out.maps, std::regex(R"(@sizes\[vfs_read\]:\n\[1\] +3 \|@+\|\n\n)")))
		<< out.maps;
	EXPECT_TRUE(std::regex_search(out.maps, std::regex(R"(@sizes\[vfs_write\]:\n\[8, 16\) +1 \|@+\|\n\n)")))
		<< out.maps;
}

// A probe summed in root: the table keeps each address's hits and sum as
// root answers them (ADD's order), and the feed adds what both grew by,
// a sum that went down (negative values) included.
TEST_F(ProbeArmRequest, RootSumsFeedTheirProbesMapByTheirGrowth)
{
	auto program = resolved("fn:vfs_read { @bytes = sum(arg2); }");
	ASSERT_EQ(program.program.probes[0].root_value, probes::RootValue::Sum);
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->fetch[0][1].code, VTICE_FETCH_SUM);
	console::RootCountTable table(program, *req);
	ASSERT_TRUE(table.sums()) << "the sums are to be read";
	NoOutput out;
	probes::Runtime runtime(program, out);
	runtime.begin(0);
	console::RootCountFeed feed(program, {});
	table.update({2}, {4096});
	feed.feed(runtime, table.totals());
	table.update({3, 7}, {4096 - 100, 55});	// one more hit, of -100; a second address no probe owns
	feed.feed(runtime, table.totals());
	EXPECT_EQ(feed.total(), 3u);
	runtime.finish(1);
	EXPECT_EQ(out.maps, "@bytes: 3996\n");
}

// count() by key in root: the table names the addresses whose slots are
// read, and the feed turns each slot's growth into hits of its key (a
// comm's bytes up to its NUL; a number as it is).
TEST_F(ProbeArmRequest, RootKeySlotsFeedTheirProbesMapByKey)
{
	// The maps' text after slots (then grown) were read for source's one probe.
	auto fed = [this](const std::string &source, std::vector<vtice_probe_key> slots,
			  const std::vector<vtice_probe_key> &grown) {
		auto program = resolved(source);
		EXPECT_EQ(program.program.probes[0].root_value, probes::RootValue::Keys);
		auto req = console::arm_request(program, 0);
		EXPECT_TRUE(req.ok()) << req.error().message;
		console::RootCountTable table(program, *req);
		EXPECT_FALSE(table.sums());
		EXPECT_EQ(table.key_indices(), std::vector<std::uint32_t>{0});
		NoOutput out;
		probes::Runtime runtime(program, out);
		runtime.begin(0);
		console::RootCountFeed feed(program, {});
		slots.resize(VTICE_FETCH_KEYED_SLOTS);
		table.update({1}, {});
		table.update_keys(0, slots);
		feed.feed(runtime, table.totals());
		table.update({2}, {});
		table.update_keys(0, grown);
		feed.feed(runtime, table.totals());
		runtime.finish(1);
		return out.maps;
	};
	vtice_probe_key dd{{}, 2}, journal{{}, 4};
	std::memcpy(dd.key, "dd", 2);
	std::memcpy(journal.key, "systemd-journal", 15);
	std::vector<vtice_probe_key> later = {dd, journal};
	later[0].count = 3;
	later.resize(VTICE_FETCH_KEYED_SLOTS);
	std::string maps = fed("fn:vfs_read { @byname[comm] = count(); }", {dd}, later);
	EXPECT_NE(maps.find("@byname[dd]: 3\n"), std::string::npos) << maps;
	EXPECT_NE(maps.find("@byname[systemd-journal]: 4\n"), std::string::npos) << maps;
	vtice_probe_key size{{static_cast<std::uint64_t>(-4096), 0}, 1};
	maps = fed("fn:vfs_read { @bysize[arg2] = count(); }", {size}, {size, size});
	EXPECT_NE(maps.find("@bysize[-4096]: 2\n"), std::string::npos) << "one key in two slots adds up: " << maps;
	// By key with a value kept in the slot: a sum grows (what it grew by
	// goes in once); an average is that sum over the count; a least value
	// stands as read.
	vtice_probe_key dd_bytes = dd;
	dd_bytes.value = 100;	// 2 reads, 100 bytes
	std::vector<vtice_probe_key> more = {dd_bytes};
	more[0].count = 3;
	more[0].value = 4196;	// a third read of 4096
	more.resize(VTICE_FETCH_KEYED_SLOTS);
	maps = fed("fn:vfs_read { @bytes[comm] = sum(arg2); }", {dd_bytes}, more);
	EXPECT_NE(maps.find("@bytes[dd]: 4196\n"), std::string::npos) << maps;
	maps = fed("fn:vfs_read { @mean[comm] = avg(arg2); }", {dd_bytes}, more);
	EXPECT_NE(maps.find("@mean[dd]: 1398\n"), std::string::npos) << "4196 / 3: " << maps;
	more[0].value = 1;
	maps = fed("fn:vfs_read { @least[comm] = min(arg2); }", {dd_bytes}, more);
	EXPECT_NE(maps.find("@least[dd]: 1\n"), std::string::npos) << maps;
	// Two parts: the task's (or the CPU's) in the slot's first word
	// whichever place the statement gives it, the computed ones after, in
	// their order.
	vtice_probe_key pair{{7, static_cast<std::uint64_t>(-2)}, 2, 30};
	maps = fed("fn:vfs_read { @a[arg1, cpu] = sum(arg2); }", {pair}, {pair});
	EXPECT_NE(maps.find("@a[-2, 7]: 30\n"), std::string::npos) << maps;
	maps = fed("fn:vfs_read { @b[pid, arg2] = count(); }", {pair}, {pair});
	EXPECT_NE(maps.find("@b[7, -2]: 2\n"), std::string::npos) << maps;
	maps = fed("fn:vfs_read { @c[arg0, arg2] = count(); }", {pair}, {pair});
	EXPECT_NE(maps.find("@c[7, -2]: 2\n"), std::string::npos) << maps;
}

// read_tables asks a source for exactly the addresses that have buckets or
// key slots, and only once their hits grew since their last read (a drain
// every 20 ms would otherwise cost 65 VMCALLs an address, hit or not);
// it keeps what the source answers, and stops at its first error.
TEST_F(ProbeArmRequest, RootTablesAreReadForTheirAddressesAloneWhenTheyCounted)
{
	auto program = resolved("fn:vfs_read { @sizes = hist(arg2); }");
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	console::RootCountTable table(program, *req);
	std::vector<std::uint32_t> asked;
	std::vector<std::uint64_t> buckets(VTICE_FETCH_HIST_BUCKETS, 0);
	buckets[3] = 7;
	auto hist = [&](std::uint32_t index) -> Result<std::vector<std::uint64_t>> {
		asked.push_back(index);
		return buckets;
	};
	auto keys = [](std::uint32_t) -> Result<std::vector<vtice_probe_key>> {
		ADD_FAILURE() << "no address counts by key";
		return std::vector<vtice_probe_key>{};
	};
	ASSERT_TRUE(table.read_tables(hist, keys));
	EXPECT_TRUE(asked.empty()) << "root counted nothing yet: its buckets are all 0";
	table.update({7}, {});
	ASSERT_TRUE(table.read_tables(hist, keys));
	EXPECT_EQ(asked, std::vector<std::uint32_t>{0});
	EXPECT_EQ(table.totals().at(0).buckets, buckets);
	ASSERT_TRUE(table.read_tables(hist, keys));
	EXPECT_EQ(asked.size(), 1u) << "no hit since the last read: the buckets are not asked again";
	table.update({8}, {});
	auto failing = [](std::uint32_t) -> Result<std::vector<std::uint64_t>> { return make_error("gone"); };
	auto read = table.read_tables(failing, keys);
	ASSERT_FALSE(read);
	EXPECT_EQ(read.error().message, "gone");
}

// lhist() in root goes to the module as LHIST with its base and width,
// and its buckets are read as hist()'s are.
TEST_F(ProbeArmRequest, RootLhistSendsItsBoundsAndIsReadAsAHistogram)
{
	auto program = resolved("fn:vfs_read { @sizes = lhist(arg2, -512, 4096, 512); }");
	ASSERT_EQ(program.program.probes[0].root_value, probes::RootValue::Lhist);
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->fetch[0][1].code, VTICE_FETCH_LHIST);
	EXPECT_EQ(req->fetch[0][1].base, -512);
	EXPECT_EQ(req->fetch[0][1].imm, 512);
	console::RootCountTable table(program, *req);
	EXPECT_EQ(table.hist_indices(), std::vector<std::uint32_t>{0});
}

// A histogram in root: the table names the addresses whose buckets are
// read apart (not as sums), and the feed adds what each bucket grew by
// since the last read, so the map shows each hit once.
TEST_F(ProbeArmRequest, RootHistBucketsFeedTheirProbesMapByTheirGrowth)
{
	auto program = resolved("fn:vfs_read { @sizes = hist(arg2); }");
	ASSERT_EQ(program.program.probes[0].root_value, probes::RootValue::Hist);
	auto req = console::arm_request(program, 0);
	ASSERT_TRUE(req.ok()) << req.error().message;
	EXPECT_EQ(req->fetch[0][1].code, VTICE_FETCH_HIST);
	console::RootCountTable table(program, *req);
	EXPECT_FALSE(table.sums()) << "no sum to read";
	EXPECT_EQ(table.hist_indices(), std::vector<std::uint32_t>{0});
	NoOutput out;
	probes::Runtime runtime(program, out);
	runtime.begin(0);
	console::RootCountFeed feed(program, {});
	std::vector<std::uint64_t> buckets(VTICE_FETCH_HIST_BUCKETS);
	buckets[14] = 2;	// two reads of 4 KiB to 8 KiB
	table.update({2}, {});
	table.update_hist(0, buckets);
	feed.feed(runtime, table.totals());
	buckets[14] = 3;	// one more of them, and one of 0 bytes
	buckets[1] = 1;
	table.update({4}, {});
	table.update_hist(0, buckets);
	feed.feed(runtime, table.totals());
	feed.feed(runtime, table.totals());	// read again, nothing new
	EXPECT_EQ(feed.total(), 4u);
	runtime.finish(1);
	EXPECT_NE(out.maps.find("[4K, 8K)"), std::string::npos) << out.maps;
	EXPECT_NE(out.maps.find(" 3 |"), std::string::npos) << "3 hits in [4K, 8K), not 5: " << out.maps;
	EXPECT_NE(out.maps.find(" 1 |"), std::string::npos) << out.maps;
}
