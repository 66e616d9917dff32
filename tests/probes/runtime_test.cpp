// The runtime over synthetic syscall events: each expectation is worked out
// by hand from the events the test feeds, not read back from the code.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnostic.hpp"
#include "output.hpp"
#include "probe_lookup.hpp"
#include "runtime.hpp"
#include <vtice/ioctl.h>

using namespace vtice::probes;

namespace {

// Output kept as strings: printf text, and each map as TextOutput prints it.
class Captured : public Output {
public:
	void text(std::string_view printed) override { printed_ += printed; }
	void map(const MapInfo &info, const MapEntries &entries) override { maps_ += format_map_text(info, entries); }
	std::string printed_, maps_;
};

ProbeEvent enter(std::uint64_t nr, const std::string &comm, std::uint32_t tid, std::uint64_t nsecs,
		   std::array<std::uint64_t, 6> args = {})
{
	ProbeEvent ev;
	ev.nr = nr;
	ev.comm = comm;
	ev.pid = ev.tid = tid;
	ev.nsecs = nsecs;
	ev.args = args;
	return ev;
}

ProbeEvent leave(std::uint64_t nr, const std::string &comm, std::uint32_t tid, std::uint64_t nsecs, std::int64_t ret)
{
	ProbeEvent ev = enter(nr, comm, tid, nsecs);
	ev.kind = PointKind::SyscallReturn;
	ev.retval = ret;
	return ev;
}

struct ProgramRun {
	explicit ProgramRun(const std::string &source, std::size_t max_entries = kDefaultMaxMapEntries)
	{
		auto c = compile_program(source, test_syscalls());
		EXPECT_TRUE(c.ok()) << (c.ok() ? "" : format_diagnostic(source, c.error()));
		if (c.ok())
			checked = std::move(*c);
		runtime = std::make_unique<Runtime>(checked, out, max_entries);
		runtime->begin(0);
	}
	std::string finish()
	{
		runtime->finish(1);
		return out.maps_;
	}
	CheckedProgram checked;
	Captured out;
	std::unique_ptr<Runtime> runtime;
};

constexpr std::uint64_t kRead = 0, kOpenat = 257, kNanosleep = 35;

}  // namespace

TEST(ProbeRuntime, CountsByCommSortedByCount)
{
	ProgramRun r("syscall:read { @[comm] = count(); }");
	for (const char *comm : {"bash", "cat", "bash", "cat", "bash", "sshd"})
		r.runtime->on_event(enter(kRead, comm, 10, 0));
	r.runtime->on_event(enter(kOpenat, "bash", 10, 0));	// another syscall: no probe
	EXPECT_EQ(r.finish(), "@[sshd]: 1\n@[cat]: 2\n@[bash]: 3\n");
}

TEST(ProbeRuntime, PredicateFiltersAndSumsArguments)
{
	ProgramRun r("syscall:read /comm == \"cat\" && arg2 > 100/ { @bytes = sum(arg2); @n = count(); @lo = min(arg2); "
	      "@hi = max(arg2); @mean = avg(arg2); }");
	r.runtime->on_event(enter(kRead, "cat", 1, 0, {3, 0, 4096}));
	r.runtime->on_event(enter(kRead, "cat", 1, 0, {3, 0, 50}));	// arg2 too small
	r.runtime->on_event(enter(kRead, "dog", 1, 0, {3, 0, 9999}));	// not cat
	r.runtime->on_event(enter(kRead, "cat", 1, 0, {3, 0, 512}));
	r.runtime->on_event(enter(kRead, "cat", 1, 0, {3, 0, 1000}));
	// 4096 + 512 + 1000 = 5608; 3 reads; avg 5608 / 3 = 1869 (integer division)
	EXPECT_EQ(r.finish(), "@bytes: 5608\n@n: 3\n@lo: 512\n@hi: 4096\n@mean: 1869\n");
}

TEST(ProbeRuntime, ReturnProbesSeeRetvalAndPrintf)
{
	ProgramRun r("syscall:openat:return { printf(\"%s(%d) = %d [%x] %5d|%-4s|%u\\n\", comm, tid, retval, retval, 42, "
	      "\"ab\", retval); }");
	r.runtime->on_event(leave(kOpenat, "cat", 7, 0, 3));
	r.runtime->on_event(leave(kOpenat, "cat", 7, 0, -2));
	r.runtime->on_event(enter(kOpenat, "cat", 7, 0));	// an entry: not a return probe
	EXPECT_EQ(r.out.printed_, "cat(7) = 3 [3]    42|ab  |3\n"
				  "cat(7) = -2 [fffffffffffffffe]    42|ab  |18446744073709551614\n");
}

TEST(ProbeRuntime, LatencyHistogramFromStartTimes)
{
	ProgramRun r("syscall:nanosleep { @start[tid] = nsecs; }\n"
	      "syscall:nanosleep:return /@start[tid]/ { @us = hist((nsecs - @start[tid]) / 1000); delete(@start[tid]); }");
	// tid 1: 1000 -> 6000 ns (5 us); tid 2: 100 -> 1100 (1 us); tid 1 again 10000 -> 74000 (64 us);
	// a return whose entry was not seen (tid 3) adds nothing. (A start at
	// nsecs 0 would read as false in the predicate, as in bpftrace.)
	r.runtime->on_event(enter(kNanosleep, "a", 1, 1000));
	r.runtime->on_event(enter(kNanosleep, "b", 2, 100));
	r.runtime->on_event(leave(kNanosleep, "b", 2, 1100, 0));
	r.runtime->on_event(leave(kNanosleep, "a", 1, 6000, 0));
	r.runtime->on_event(leave(kNanosleep, "c", 3, 6000, 0));
	r.runtime->on_event(enter(kNanosleep, "a", 1, 10000));
	r.runtime->on_event(leave(kNanosleep, "a", 1, 74000, 0));
	std::string out = r.finish();
	// 1 -> [1]; 5 -> [4, 8); 64 -> [64, 128); empty buckets between are shown.
	std::string bar(52, '@'), none(52, ' ');
	std::string expected = "@us:\n"
			       "[1]                         1 |" + bar + "|\n"
			       "[2, 4)                      0 |" + none + "|\n"
			       "[4, 8)                      1 |" + bar + "|\n"
			       "[8, 16)                     0 |" + none + "|\n"
			       "[16, 32)                    0 |" + none + "|\n"
			       "[32, 64)                    0 |" + none + "|\n"
			       "[64, 128)                   1 |" + bar + "|\n\n";
	EXPECT_EQ(out, expected);
	// Every start was deleted once its return was seen.
	EXPECT_TRUE(r.runtime->maps().entries(r.checked.map_index("@start")).empty());
}

TEST(ProbeRuntime, HistogramBucketsFollowPowersOfTwo)
{
	EXPECT_EQ(hist_bucket(-5), -1);
	EXPECT_EQ(hist_bucket(0), 0);
	EXPECT_EQ(hist_bucket(1), 1);
	EXPECT_EQ(hist_bucket(2), 2);
	EXPECT_EQ(hist_bucket(3), 2);
	EXPECT_EQ(hist_bucket(4), 3);
	EXPECT_EQ(hist_bucket(1023), 10);
	EXPECT_EQ(hist_bucket(1024), 11);
	EXPECT_EQ(hist_bucket(INT64_MAX), 63);
	MapInfo h;
	h.kind = MapKind::Hist;
	EXPECT_EQ(bucket_label(h, -1), "(..., 0)");
	EXPECT_EQ(bucket_label(h, 11), "[1K, 2K)");
	EXPECT_EQ(bucket_label(h, 21), "[1M, 2M)");
	EXPECT_EQ(bucket_label(h, 63), "[4E, 8E)");
}

TEST(ProbeRuntime, LinearHistogramBuckets)
{
	ProgramRun r("syscall:read { @sizes = lhist(arg2, 0, 1000, 300); }");
	for (std::uint64_t v : {0ull, 299ull, 300ull, 950ull, 1000ull, 5000ull, ~2ull})
		r.runtime->on_event(enter(kRead, "x", 1, 0, {0, 0, v}));
	const MapInfo &m = *r.checked.map("@sizes");
	// Steps [0,300) [300,600) [600,900) [900,1000), then 1000 and above, and below 0.
	EXPECT_EQ(lhist_buckets(m), 4);
	EXPECT_EQ(bucket_label(m, -1), "(..., 0)");
	EXPECT_EQ(bucket_label(m, 3), "[900, 1000)");
	EXPECT_EQ(bucket_label(m, 4), "[1000, ...)");
	const Cell *cell = r.runtime->maps().find(r.checked.map_index("@sizes"), {});
	ASSERT_NE(cell, nullptr);
	std::map<std::int64_t, std::uint64_t> expected = {{-1, 1}, {0, 2}, {1, 1}, {3, 1}, {4, 2}};
	EXPECT_EQ(cell->buckets, expected);
}

TEST(ProbeRuntime, IntegerArithmeticWrapsAndDivisionByZeroGivesZero)
{
	ProgramRun r("syscall:read { @a = arg0 / arg1; @b = arg0 % arg1; @c = -9223372036854775807 - 2; @d = 1 << 64; "
	      "@e = -1 >> 60; @f = arg2 / -1; }");
	r.runtime->on_event(enter(kRead, "x", 1, 0, {7, 0, static_cast<std::uint64_t>(INT64_MIN)}));
	EXPECT_EQ(r.runtime->stats().division_by_zero, 2u);
	const MapStore &maps = r.runtime->maps();
	auto value = [&](const char *name) {
		return aggregate_value(*r.checked.map(name), *maps.find(r.checked.map_index(name), {}));
	};
	EXPECT_EQ(value("@a"), 0);
	EXPECT_EQ(value("@b"), 0);
	EXPECT_EQ(value("@c"), INT64_MAX);	// INT64_MIN - 1 wraps
	EXPECT_EQ(value("@d"), 0);
	EXPECT_EQ(value("@e"), 15);		// logical shift of all ones
	EXPECT_EQ(value("@f"), INT64_MIN);	// INT64_MIN / -1 wraps
}

TEST(ProbeRuntime, ShortCircuitSkipsTheRightSide)
{
	// With && false on the left, the right side's division never runs.
	ProgramRun r("syscall:read /arg0 != 0 && (10 / arg0) > 1/ { @x = count(); }");
	r.runtime->on_event(enter(kRead, "x", 1, 0, {0}));
	r.runtime->on_event(enter(kRead, "x", 1, 0, {2}));
	EXPECT_EQ(r.runtime->stats().division_by_zero, 0u);
	EXPECT_EQ(r.finish(), "@x: 1\n");
}

TEST(ProbeRuntime, ExitStopsFiringAndEndStillRuns)
{
	ProgramRun r("syscall:read { @n = count(); exit(); @after = 1; } END { printf(\"end\\n\"); }");
	r.runtime->on_event(enter(kRead, "x", 1, 0));
	EXPECT_TRUE(r.runtime->exited());
	r.runtime->on_event(enter(kRead, "x", 1, 0));
	EXPECT_EQ(r.finish(), "@n: 1\n");
	EXPECT_EQ(r.out.printed_, "end\n");
}

TEST(ProbeRuntime, IntervalFiresOncePerPeriodAndPrintClear)
{
	ProgramRun r("syscall:read { @n = count(); } interval:ms:100 { print(@n); clear(@n); }");
	r.runtime->on_event(enter(kRead, "x", 1, 0));
	r.runtime->tick(50'000'000);	// not yet due
	EXPECT_EQ(r.out.maps_, "");
	r.runtime->tick(100'000'000);
	EXPECT_EQ(r.out.maps_, "@n: 1\n");
	r.runtime->on_event(enter(kRead, "x", 1, 0));
	r.runtime->on_event(enter(kRead, "x", 1, 0));
	r.runtime->tick(450'000'000);	// late: fires once, next due at 500 ms
	EXPECT_EQ(r.out.maps_, "@n: 1\n@n: 2\n");
	r.runtime->tick(480'000'000);
	EXPECT_EQ(r.out.maps_, "@n: 1\n@n: 2\n");
	EXPECT_EQ(r.finish(), "@n: 1\n@n: 2\n");	// cleared: nothing left to print at the end
}

TEST(ProbeRuntime, AFullMapRefusesNewKeysAndCountsThem)
{
	ProgramRun r("syscall:read { @[tid] = count(); }", 2);
	for (std::uint32_t tid : {1u, 2u, 3u, 1u, 4u})
		r.runtime->on_event(enter(kRead, "x", tid, 0));
	EXPECT_EQ(r.runtime->map_updates_refused(), 2u);	// tids 3 and 4
	EXPECT_EQ(r.finish(), "@[2]: 1\n@[1]: 2\n");
}

TEST(ProbeRuntime, ProbeNamesThePointThatFired)
{
	ProgramRun r("syscall:read, syscall:write { @[probe] = count(); }");
	r.runtime->on_event(enter(kRead, "x", 1, 0));
	r.runtime->on_event(enter(1, "x", 1, 0));
	r.runtime->on_event(enter(1, "x", 1, 0));
	EXPECT_EQ(r.finish(), "@[syscall:read]: 1\n@[syscall:write]: 2\n");
}

TEST(ProbeRuntime, JsonOutputIsOneObjectPerLine)
{
	auto c = compile_program("syscall:read { @[comm, tid] = count(); @h = hist(arg2); }", test_syscalls());
	ASSERT_TRUE(c.ok());
	char *buf = nullptr;
	std::size_t len = 0;
	std::FILE *f = open_memstream(&buf, &len);
	{
		JsonOutput out(f);
		Runtime rt(*c, out);
		rt.begin(0);
		rt.on_event(enter(kRead, "a\"b", 5, 0, {0, 0, 3}));
		rt.finish(0);
		out.summary("\"events\":1");
	}
	std::fclose(f);
	std::string text(buf, len);
	std::free(buf);
	EXPECT_EQ(text, "{\"type\":\"map\",\"name\":\"@\",\"kind\":\"count\",\"entries\":[{\"key\":[\"a\\\"b\",5],\"value\":1}]}\n"
			"{\"type\":\"map\",\"name\":\"@h\",\"kind\":\"hist\",\"entries\":[{\"key\":[],\"buckets\":"
			"[{\"bucket\":\"[2, 4)\",\"count\":1}]}]}\n"
			"{\"type\":\"summary\",\"events\":1}\n");
}

namespace {

ProbeEvent sample(const std::string &comm, std::uint32_t cpu, const std::string &kstack)
{
	ProbeEvent ev;
	ev.kind = PointKind::Profile;
	ev.comm = comm;
	ev.pid = ev.tid = 7;
	ev.cpu = cpu;
	ev.kstack = kstack;
	return ev;
}

}  // namespace

// bpftrace prints a stack key a frame a line, indented, the bracket on a
// line of its own; JSON gives the frames as an array, leaf first.
TEST(ProbeRuntime, ProfileSamplesCountByKernelStack)
{
	ProgramRun r("profile:hz:99 /comm == \"dd\"/ { @[kstack] = count(); @c[cpu, kstack] = count(); }");
	r.runtime->on_event(sample("dd", 1, "read_zero\nvfs_read\nksys_read"));
	r.runtime->on_event(sample("dd", 1, "read_zero\nvfs_read\nksys_read"));
	r.runtime->on_event(sample("dd", 0, "[user]"));
	r.runtime->on_event(sample("sh", 0, "do_idle"));	// the predicate keeps it out
	r.runtime->on_event(enter(kRead, "dd", 7, 0));		// not a sample: no profile probe fires
	EXPECT_EQ(r.finish(),
		  "@[\n\t[user]\n]: 1\n"
		  "@[\n\tread_zero\n\tvfs_read\n\tksys_read\n]: 2\n"
		  "@c[0, \n\t[user]\n]: 1\n"
		  "@c[1, \n\tread_zero\n\tvfs_read\n\tksys_read\n]: 2\n");
	EXPECT_EQ(format_map_json(r.checked.maps[1], r.runtime->maps().entries(1)),
		  "{\"type\":\"map\",\"name\":\"@c\",\"kind\":\"count\",\"entries\":["
		  "{\"key\":[0,[\"[user]\"]],\"value\":1},"
		  "{\"key\":[1,[\"read_zero\",\"vfs_read\",\"ksys_read\"]],\"value\":2}]}");
}

TEST(ProbeRuntime, PrintfPrintsAStackALineAFrame)
{
	ProgramRun r("profile:hz:99 { printf(\"%s on %d:\\n%s\\n\", comm, cpu, kstack); }");
	r.runtime->on_event(sample("dd", 1, "read_zero\nvfs_read"));
	EXPECT_EQ(r.out.printed_, "dd on 1:\nread_zero\nvfs_read\n");
}

// args->NAME reads its register as the BTF types it: an int's low 32 bits,
// sign-extended; a size_t's whole 64.
TEST(ProbeRuntime, ArgsByNameTakeTheirTypesWidth)
{
	auto c = compile_program("fn:do_sys_openat2 { printf(\"%d %d\\n\", args->dfd, arg0); }", test_syscalls(),
				 test_params());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	c->program.probes[0].points[0].address = 0xffffffff81234560ull;	// the caller resolves fn: points
	Captured out;
	Runtime runtime(*c, out, kDefaultMaxMapEntries);
	runtime.begin(0);
	ProbeEvent ev = enter(0, "cat", 7, 1);
	ev.kind = PointKind::FnEntry;
	ev.address = 0xffffffff81234560ull;
	ev.args[0] = 0xdeadbeefffffff9cull;	// AT_FDCWD (-100) in EDI, garbage above it
	runtime.on_event(ev);
	runtime.finish(2);
	EXPECT_EQ(out.printed_, "-100 " + std::to_string(static_cast<std::int64_t>(0xdeadbeefffffff9cull)) + "\n");
}

// args->NAME in a syscall probe narrows its register the same way.
TEST(ProbeRuntime, SyscallArgsByNameTakeTheirDeclaredWidth)
{
	auto c = compile_program("syscall:openat { printf(\"%d %d %d\\n\", args->dfd, args->mode, arg3); }",
				 test_syscalls(), {}, nullptr, test_syscall_params());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	Captured out;
	Runtime runtime(*c, out, kDefaultMaxMapEntries);
	runtime.begin(0);
	ProbeEvent ev = enter(257, "cat", 7, 1);
	ev.args[0] = 0xffffff9cull;	// AT_FDCWD as glibc's int leaves it in EDI
	ev.args[3] = 0x12345681a4ull;	// mode 0644 | S_IFREG in the low 16 bits
	runtime.on_event(ev);
	runtime.finish(2);
	EXPECT_EQ(out.printed_, "-100 33188 " + std::to_string(0x12345681a4ull) + "\n");
}

namespace {

// struct s { ...; int a at 8; struct s *p at 16; unsigned short b at 24;
// int bf:5 at bit 6 of 26; } of 32 bytes:
// the few types the next test reads through (the console's KernelTypes
// answers from the kernel's BTF; tests/console/probe_params_test.cpp
// checks those answers against pahole).
class TinyTypes final : public vtice::probes::KernelTypes {
public:
	vtice::Result<std::uint32_t> find(std::string_view name) const override
	{
		return name == "struct s" ? vtice::Result<std::uint32_t>(1u) : vtice::make_error("no " + std::string(name));
	}
	std::optional<std::uint32_t> pointee(std::uint32_t id) const override
	{
		return id == 3 ? std::optional<std::uint32_t>(1) : std::nullopt;
	}
	vtice::Result<Field> field(std::uint32_t id, std::string_view name) const override
	{
		if (id == 1 && name == "a")
			return Field{8, 2};
		if (id == 1 && name == "p")
			return Field{16, 3};
		if (id == 1 && name == "b")
			return Field{24, 4};
		if (id == 1 && name == "bf")
			return Field{26, 2, 6, 5};	// int bf:5, from bit 6 of byte 26: two bytes hold it
		return vtice::make_error("no field " + std::string(name));
	}
	std::optional<Scalar> scalar(std::uint32_t id) const override
	{
		if (id == 2)
			return Scalar{4, true};
		if (id == 3)
			return Scalar{8, false};
		if (id == 4)
			return Scalar{2, false};
		return std::nullopt;
	}
	bool is_char_array(std::uint32_t) const override { return false; }
	std::optional<Array> array(std::uint32_t) const override { return std::nullopt; }
	std::optional<std::uint64_t> size(std::uint32_t id) const override
	{
		return id == 1 ? std::optional<std::uint64_t>(32) : std::nullopt;	// struct s
	}
	bool is_struct(std::uint32_t id) const override { return id == 1; }
	std::string name(std::uint32_t id) const override { return "type " + std::to_string(id); }
	std::optional<std::uint32_t> return_type(std::string_view function) const override
	{
		if (function.starts_with("close"))
			return 2u;	// int
		return function == "make_s" ? std::optional<std::uint32_t>(3) : std::nullopt;	// struct s *
	}
};

}  // namespace

// A read through an argument is its VALUE slot as root loaded it (the
// field's bytes, zero-extended), widened as the field's type says: an int's
// 0xfffffffe is -2, an unsigned short's 0xffff 65535. The same read twice
// is one slot.
TEST(ProbeRuntime, ReadsThroughArgumentsAreTheirSlotsWidenedByType)
{
	TinyTypes types;
	const std::string source = "fn:f { printf(\"%d %d %d\\n\", ((struct s *)arg0)->a, ((struct s *)arg0)->p->b, "
				   "((struct s *)arg0)->a + 1); }";
	auto c = compile_program(source, test_syscalls(), {}, &types);
	ASSERT_TRUE(c.ok()) << format_diagnostic(source, c.error());
	using vtice::probes::FetchCode;
	EXPECT_EQ(c->program.probes[0].fetch,
		  (std::vector<vtice::probes::FetchOp>{{FetchCode::Arg, 0, 0}, {FetchCode::Add, 0, 8}, {FetchCode::Load, 4, 0},
						       {FetchCode::Value, 0, 0}, {FetchCode::Arg, 0, 0}, {FetchCode::Add, 0, 16},
						       {FetchCode::Load, 8, 0}, {FetchCode::Add, 0, 24}, {FetchCode::Load, 2, 0},
						       {FetchCode::Value, 1, 0}}));
	Captured out;
	Runtime runtime(*c, out);
	runtime.begin(0);
	ProbeEvent ev;
	ev.kind = PointKind::FnEntry;
	ev.values[0] = 0xfffffffeu;
	ev.values[1] = 0xffffu;
	runtime.on_event(ev);
	ev.values = {};
	ev.values_unreadable = 3;	// root gave 0 for both
	runtime.on_event(ev);
	EXPECT_EQ(out.printed_, "-2 65535 -1\n0 0 1\n");
	EXPECT_EQ(runtime.stats().unreadable_reads, 3u) << "the second hit's three reads, each counted";
}

// An aggregation whose operand (or key) is the body's one read through
// an argument is root's: the program is the read then the aggregation's
// op at the field's width (an int: S32), and for a count by key the
// read's VALUE between them. A hit root finds no slot for comes as a
// record with the VALUE, and counts under the same key root's slots give;
// a read besides the operand keeps the probe out of root. A predicate's
// read is root's test: an unkeyed count needs nothing more, a keyed one
// also records it for the hits it cannot count.
TEST(ProbeRuntime, RootAggregatesTheBodysOneReadThroughAnArgument)
{
	using vtice::probes::FetchCode;
	using vtice::probes::FetchOp;
	TinyTypes types;
	const auto s32 = static_cast<std::uint8_t>(static_cast<int>(vtice::probes::IndexWidth::S32) << 4);
	const std::vector<FetchOp> read_a = {{FetchCode::Arg, 0, 0}, {FetchCode::Add, 0, 8}, {FetchCode::Load, 4, 0},
					     {FetchCode::Value, 0, 0}};
	auto compiled = [&](const std::string &source) {
		auto c = compile_program(source, test_syscalls(), {}, &types);
		EXPECT_TRUE(c.ok()) << format_diagnostic(source, c.error());
		return std::move(*c);
	};
	auto summed = compiled("fn:f { @ = sum(((struct s *)arg0)->a); }");
	auto sum_ops = std::vector<FetchOp>(read_a.begin(), read_a.end() - 1);	// nothing recorded: no VALUE
	sum_ops.push_back({FetchCode::Sum, s32, 0});
	EXPECT_EQ(summed.program.probes[0].fetch, sum_ops);
	EXPECT_EQ(summed.program.probes[0].root_value, RootValue::Sum);
	auto two_reads = compiled("fn:f { @ = sum(((struct s *)arg0)->a + ((struct s *)arg0)->p->b); }");
	EXPECT_FALSE(two_reads.program.probes[0].count_in_root) << "arithmetic on two reads: the console's";
	auto also_printed = compiled("fn:f { @ = sum(((struct s *)arg0)->a); printf(\"%d\\n\", ((struct s *)arg0)->p->b); }");
	EXPECT_FALSE(also_printed.program.probes[0].count_in_root) << "a read besides the operand";
	// A sum keyed by one read of another: the key's read and VALUE, KEY, the operand's, KEYED.
	auto by_read = compiled("fn:f { @[((struct s *)arg0)->a] = sum(((struct s *)arg0)->p->b); }");
	const std::vector<FetchOp> read_b = {{FetchCode::Arg, 0, 0}, {FetchCode::Add, 0, 16}, {FetchCode::Load, 8, 0},
					     {FetchCode::Add, 0, 24}, {FetchCode::Load, 2, 0}, {FetchCode::Value, 1, 0}};
	auto by_read_ops = read_a;
	by_read_ops.push_back({FetchCode::Key, s32, 0});
	by_read_ops.insert(by_read_ops.end(), read_b.begin(), read_b.end());
	by_read_ops.push_back(
		{FetchCode::Keyed, static_cast<std::uint8_t>(static_cast<int>(vtice::probes::IndexWidth::U16) << 4),
		 static_cast<std::int32_t>(FetchCode::Sum)});
	EXPECT_EQ(by_read.program.probes[0].fetch, by_read_ops);
	auto tested = compiled("fn:f /((struct s *)arg0)->a > 5/ { @ = count(); }");
	auto keep_a = std::vector<FetchOp>(read_a.begin(), read_a.end() - 1);
	keep_a.push_back({FetchCode::Keep, static_cast<std::uint8_t>(static_cast<int>(vtice::probes::KeepCmp::Gt) | s32), 5});
	auto tested_ops = keep_a;
	tested_ops.push_back({FetchCode::Count, 0, 0});
	EXPECT_EQ(tested.program.probes[0].fetch, tested_ops) << "root's test, then its count";
	auto tested_keyed = compiled("fn:f /((struct s *)arg0)->a > 5/ { @[((struct s *)arg0)->p->b] = count(); }");
	const Probe &tk = tested_keyed.program.probes[0];
	ASSERT_TRUE(tk.count_in_root);
	EXPECT_EQ(tk.fetch.back().code, FetchCode::Keyed);
	EXPECT_EQ(std::count(tk.fetch.begin(), tk.fetch.end(), FetchOp{FetchCode::Value, 0, 0}), 1)
		<< "the predicate's read recorded once, for a hit past the slots";
	EXPECT_EQ(std::count(tk.fetch.begin(), tk.fetch.end(), FetchOp{FetchCode::Value, 1, 0}), 1) << "the key's";
	// One read as both: recorded once (root refuses a slot written twice).
	auto same = compiled("fn:f { @[((struct s *)arg0)->a] = max(((struct s *)arg0)->a); }");
	auto same_ops = read_a;
	same_ops.push_back({FetchCode::Key, s32, 0});
	same_ops.insert(same_ops.end(), read_a.begin(), read_a.end() - 1);
	same_ops.push_back({FetchCode::Keyed, s32, static_cast<std::int32_t>(FetchCode::Max)});
	EXPECT_EQ(same.program.probes[0].fetch, same_ops);

	auto c = compiled("fn:f { @flags[((struct s *)arg0)->a] = count(); }");
	const Probe &probe = c.program.probes[0];
	auto keyed_ops = read_a;
	keyed_ops.push_back({FetchCode::Keyed, s32, 0});
	ASSERT_EQ(probe.fetch, keyed_ops);
	ASSERT_EQ(probe.root_value, RootValue::Keys);
	auto record = [&](std::uint32_t a) {
		ProbeEvent ev = enter(0, "dd", 7, 1);
		ev.kind = PointKind::FnEntry;
		ev.address = probe.points[0].address;
		ev.values[0] = a;
		return ev;
	};
	Captured recorded;
	Runtime from_records(c, recorded, kDefaultMaxMapEntries);
	from_records.begin(0);
	for (std::uint32_t a : {0xfffffffeu, 5u, 0xfffffffeu})
		from_records.on_event(record(a));
	from_records.finish(2);
	Captured counted;
	Runtime from_root(c, counted, kDefaultMaxMapEntries);
	from_root.begin(0);
	from_root.add_root_keyed(probe, std::int64_t{-2}, 1);	// root's slot: the read cut to S32
	from_root.add_root_keyed(probe, std::int64_t{5}, 1);
	from_root.on_event(record(0xfffffffeu));		// past root's slots: the record's VALUE
	from_root.finish(2);
	EXPECT_EQ(counted.maps_, recorded.maps_);
	EXPECT_NE(counted.maps_.find("@flags[-2]: 2"), std::string::npos) << counted.maps_;
}

// At a function's return the reads start at retval, typed by what the
// function returns (make_s: a struct s *): a return site's hit prints its
// VALUE slot widened as the field's type says.
TEST(ProbeRuntime, ReadsThroughRetvalAtAReturnSite)
{
	TinyTypes types;
	const std::string source = "fn:make_s:return { printf(\"%d %x\\n\", retval->a, retval); }";
	auto c = compile_program(source, test_syscalls(), {}, &types);
	ASSERT_TRUE(c.ok()) << format_diagnostic(source, c.error());
	using vtice::probes::FetchCode;
	EXPECT_EQ(c->program.probes[0].fetch,
		  (std::vector<vtice::probes::FetchOp>{{FetchCode::Retval, 0, 0}, {FetchCode::Add, 0, 8},
						       {FetchCode::Load, 4, 0}, {FetchCode::Value, 0, 0}}));
	c->program.probes[0].points[0].return_sites = {0xffffffff81000123ull};
	Captured out;
	Runtime runtime(*c, out);
	runtime.begin(0);
	ProbeEvent ev;
	ev.kind = PointKind::FnEntry;	// a hit at an address: the return site's
	ev.address = 0xffffffff81000123ull;
	ev.retval = static_cast<std::int64_t>(0xffff888000001000ull);
	ev.values[0] = 0xfffffffbu;
	runtime.on_event(ev);
	EXPECT_EQ(out.printed_, "-5 ffff888000001000\n");
	auto untyped = compile_program("fn:other:return { @ = retval->a; }", test_syscalls(), {}, &types);
	ASSERT_FALSE(untyped.ok());
	EXPECT_NE(untyped.error().message.find("through retval, which BTF does not type: cast it first, as in ((struct T *)retval)->a"), std::string::npos)
		<< untyped.error().message;
}

// A function returning int sets only EAX (mov $-9,%eax leaves RAX
// 0xfffffff7): retval at its return is cut to its BTF return type, and
// a predicate on it is tested in root at that width. Functions that
// return different widths in one probe see RAX whole.
TEST(ProbeRuntime, RetvalAtAReturnIsAsWideAsTheFunctionReturns)
{
	TinyTypes types;
	const std::string source = "fn:close_fd:return /retval < 0/ { printf(\"%d\\n\", retval); }\n"
				   "fn:close_range:return, fn:make_s:return { printf(\"%x|\", retval); }";
	auto c = compile_program(source, test_syscalls(), {}, &types);
	ASSERT_TRUE(c.ok()) << format_diagnostic(source, c.error());
	using vtice::probes::FetchCode;
	EXPECT_EQ(c->program.probes[0].fetch,
		  (std::vector<vtice::probes::FetchOp>{
			  {FetchCode::Retval, 0, 0},
			  {FetchCode::Keep, static_cast<std::uint8_t>(static_cast<int>(vtice::probes::KeepCmp::Lt) |
								      static_cast<int>(vtice::probes::IndexWidth::S32) << 4), 0}}));
	c->program.probes[0].points[0].return_sites = {0xffffffff81000123ull};
	Captured out;
	Runtime runtime(*c, out);
	runtime.begin(0);
	ProbeEvent ev;
	ev.kind = PointKind::FnEntry;	// a hit at an address: the return site's
	ev.address = 0xffffffff81000123ull;
	ev.retval = 0xfffffff7;
	runtime.on_event(ev);
	EXPECT_EQ(out.printed_, "-9\n");
	const auto &mixed = *c->program.probes[1].body.at(0).args.at(0);
	EXPECT_EQ(mixed.bytes, 8u) << "close_range's int and make_s's pointer: RAX whole";
}

// A bitfield is cut out of the bytes root loaded (here two: its 5 bits
// start at bit 6) and sign-extended from its own width; an index through a
// pointer steps by the struct's size.
TEST(ProbeRuntime, BitfieldsAreCutFromTheirBytesAndIndexesStepByTheSize)
{
	TinyTypes types;
	const std::string source = "fn:f { printf(\"%d %d\\n\", ((struct s *)arg0)->bf, ((struct s *)arg0)[1].a); }";
	auto c = compile_program(source, test_syscalls(), {}, &types);
	ASSERT_TRUE(c.ok()) << format_diagnostic(source, c.error());
	using vtice::probes::FetchCode;
	EXPECT_EQ(c->program.probes[0].fetch,
		  (std::vector<vtice::probes::FetchOp>{{FetchCode::Arg, 0, 0}, {FetchCode::Add, 0, 26}, {FetchCode::Load, 2, 0},
						       {FetchCode::Value, 0, 0}, {FetchCode::Arg, 0, 0}, {FetchCode::Add, 0, 32 + 8},
						       {FetchCode::Load, 4, 0}, {FetchCode::Value, 1, 0}}));
	Captured out;
	Runtime runtime(*c, out);
	runtime.begin(0);
	ProbeEvent ev;
	ev.kind = PointKind::FnEntry;
	ev.values[0] = 0x3f | 0b10110u << 6 | 0xf800u;	// -10 in bits 6..10, ones around it
	ev.values[1] = 7;
	runtime.on_event(ev);
	ev.values[0] = 0b01001u << 6;	// 9
	runtime.on_event(ev);
	EXPECT_EQ(out.printed_, "-10 7\n9 7\n");
}

// A watch hit fires the watch points whose range holds the byte it touched
// and whose access matches what it did; func and addr are the hit's.
TEST(ProbeRuntime, WatchHitsFireThePointsTheirByteAndAccessMatch)
{
	ProgramRun r("watch:w:0xffff888000001000:8 { @w[func] = count(); }"
		     "watch:r:0xffff888000001004:2 { @r[addr] = count(); }"
		     "watch:rw:0xffff888000002000:1 { printf(\"%s %x\\n\", probe, addr); }");
	auto hit = [](std::uint64_t addr, unsigned access, const std::string &func) {
		ProbeEvent ev;
		ev.kind = PointKind::Watch;
		ev.watch_addr = addr;
		ev.watch_access = access;
		ev.func = func;
		return ev;
	};
	r.runtime->on_event(hit(0xffff888000001000, kWatchWrite, "do_timer"));
	r.runtime->on_event(hit(0xffff888000001007, kWatchWrite, "do_timer"));	// the last byte
	r.runtime->on_event(hit(0xffff888000001008, kWatchWrite, "do_timer"));	// one past: no point
	r.runtime->on_event(hit(0xffff888000001004, kWatchRead, "ktime_get"));	// the read watch, not the write one
	r.runtime->on_event(hit(0xffff888000001005, kWatchWrite | kWatchRead, "inc"));	// both
	r.runtime->on_event(hit(0xffff888000002000, kWatchRead, "x"));
	ProbeEvent fn = hit(0xffff888000001000, kWatchWrite, "vfs_read");
	fn.kind = PointKind::FnEntry;	// a function probe's hit is never a watch's
	r.runtime->on_event(fn);
	EXPECT_EQ(r.out.printed_, "watch:rw:0xffff888000002000:1 ffff888000002000\n");
	EXPECT_EQ(r.finish(), "@w[inc]: 1\n@w[do_timer]: 2\n"
			      // keys are signed 64-bit: 0xffff888000001004 - 2^64 (python3)
			      "@r[-131391639515132]: 1\n@r[-131391639515131]: 1\n");
}

// A probe summed in root: root's hits and sum add to its map as that many
// hits of those values would (sum() wraps as root's does).
TEST(ProbeRuntime, RootSumsAddToTheMapAsThoseHitsWould)
{
	auto c = compile_program("fn:vfs_read { @bytes = sum(arg2); }", test_syscalls());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	const Probe &summed = c->program.probes[0];
	ASSERT_EQ(summed.root_value, RootValue::Sum);
	Captured out;
	Runtime runtime(*c, out, kDefaultMaxMapEntries);
	runtime.begin(0);
	runtime.add_root_count(summed, 3, 4096 + 10 + 1);
	runtime.add_root_count(summed, 1, -12);
	EXPECT_EQ(runtime.stats().fired, 4u);
	runtime.finish(3);
	EXPECT_EQ(out.maps_, "@bytes: 4095\n");

	auto a = compile_program("fn:vfs_read { @mean = avg(arg2); }", test_syscalls());
	ASSERT_TRUE(a.ok() && a->program.probes[0].root_value == RootValue::Sum);
	Captured averaged;
	Runtime avg(*a, averaged, kDefaultMaxMapEntries);
	avg.begin(0);
	avg.add_root_count(a->program.probes[0], 4, 4096 + 4096 + 10 + 2);
	avg.finish(3);
	EXPECT_EQ(averaged.maps_, "@mean: 2051\n") << "root's sum over root's count";
}

// A probe whose min() or max() root keeps: root's value as it stands at
// each feed, folded as that many hits of it would be (signed).
TEST(ProbeRuntime, RootMinAndMaxFoldIntoTheMapAsTheirHitsWould)
{
	auto c = compile_program("fn:vfs_read { @lo = min(arg2); } fn:vfs_write { @hi = max(arg2); }", test_syscalls());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	const Probe &lo = c->program.probes[0], &hi = c->program.probes[1];
	ASSERT_EQ(lo.root_value, RootValue::Min);
	ASSERT_EQ(hi.root_value, RootValue::Max);
	Captured out;
	Runtime runtime(*c, out, kDefaultMaxMapEntries);
	runtime.begin(0);
	runtime.add_root_count(lo, 2, 4096);
	runtime.add_root_count(lo, 1, -5);	// root's least went negative
	runtime.add_root_count(lo, 3, 7);	// another address's least: not below -5
	runtime.add_root_count(hi, 1, -20);	// the first value is the max, negative or not
	runtime.add_root_count(hi, 4, -3);
	EXPECT_EQ(runtime.stats().fired, 11u);
	runtime.finish(3);
	EXPECT_EQ(out.maps_, "@lo: -5\n@hi: -3\n") << "the maps in the order the program names them";
}

namespace {

// The maps a program prints when its one fn: probe's hits arrive as
// records, arg2 each of values (the reference for what root folds in).
std::string maps_from_records(const CheckedProgram &c, const std::vector<std::uint64_t> &values)
{
	Captured recorded;
	Runtime from_records(c, recorded, kDefaultMaxMapEntries);
	from_records.begin(0);
	for (std::uint64_t v : values) {
		ProbeEvent ev = enter(0, "dd", 7, 1, {0, 0, v});
		ev.kind = PointKind::FnEntry;
		ev.address = c.program.probes[0].points[0].address;
		from_records.on_event(ev);
	}
	from_records.finish(2);
	return recorded.maps_;
}

}  // namespace

// hist() counted in root: root's buckets (ioctl.h's numbering, worked out
// by hand for the values below) fold into the map exactly as the same
// values arriving as records do, the count included; growth that spans
// two reads adds up; nothing is added after exit().
TEST(ProbeRuntime, RootHistFoldsIntoTheMapAsTheSameRecordsWould)
{
	const std::string source = "fn:vfs_read { @sizes = hist(arg2); }";
	auto c = compile_program(source, test_syscalls());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	const Probe &probe = c->program.probes[0];
	ASSERT_EQ(probe.root_value, RootValue::Hist);
	std::string recorded = maps_from_records(*c, {0ull, 1ull, 3ull, 4096ull, 4097ull, ~0ull, 1ull << 62});

	Captured counted;
	Runtime from_root(*c, counted, kDefaultMaxMapEntries);
	from_root.begin(0);
	std::vector<std::uint64_t> first(VTICE_FETCH_HIST_BUCKETS), second(VTICE_FETCH_HIST_BUCKETS);
	first[1] = 1;	// 0
	first[2] = 1;	// 1
	first[14] = 1;	// 4096: [4K, 8K)
	second[3] = 1;	// 3: [2, 4)
	second[14] = 1;	// 4097
	second[0] = 1;	// -1
	second[64] = 1;	// 2^62: [4E, 8E)
	from_root.add_root_hist(probe, first);
	from_root.add_root_hist(probe, second);
	EXPECT_EQ(from_root.stats().fired, 7u);
	from_root.finish(2);
	EXPECT_EQ(counted.maps_, recorded);
	EXPECT_NE(counted.maps_.find("[4K, 8K)"), std::string::npos) << counted.maps_;
}

// lhist() counted in root: root's linear buckets (ioctl.h: below MIN,
// then one per STEP from MIN, the last holding the rest; worked out by
// hand below) fold into the map as the same values arriving as records
// do, those at or past MAX all in the map's top bucket.
TEST(ProbeRuntime, RootLhistFoldsIntoTheMapAsTheSameRecordsWould)
{
	auto c = compile_program("fn:vfs_read { @l = lhist(arg2, -100, 200, 100); }", test_syscalls());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	const Probe &probe = c->program.probes[0];
	ASSERT_EQ(probe.root_value, RootValue::Lhist);
	std::string recorded = maps_from_records(*c, {static_cast<std::uint64_t>(-101), static_cast<std::uint64_t>(-100),
						      0, 99, 150, 200, 5000, 7000});

	Captured counted;
	Runtime from_root(*c, counted, kDefaultMaxMapEntries);
	from_root.begin(0);
	std::vector<std::uint64_t> buckets(VTICE_FETCH_HIST_BUCKETS);
	buckets[0] = 1;		// -101: below MIN
	buckets[1] = 1;		// -100: [-100, 0)
	buckets[2] = 2;		// 0 and 99: [0, 100)
	buckets[3] = 1;		// 150: [100, 200)
	buckets[4] = 1;		// 200: root's [200, 300), the map's [200, ...)
	buckets[52] = 1;	// 5000: (5000 + 100) / 100 = 51, + 1
	buckets[64] = 1;	// 7000: past root's 63 steps
	from_root.add_root_hist(probe, buckets);
	EXPECT_EQ(from_root.stats().fired, 8u);
	from_root.finish(2);
	EXPECT_EQ(counted.maps_, recorded);
	EXPECT_NE(counted.maps_.find("[200, ...)"), std::string::npos) << counted.maps_;
}

// count() by key in root: each key's hits fold into the map as that many
// records of the same comm would, a key split over two slots adds up, and
// a record that comes anyway (a hit past root's slots) counts once more.
TEST(ProbeRuntime, RootKeyedCountsFoldIntoTheMapAsTheSameRecordsWould)
{
	auto c = compile_program("fn:vfs_read { @reads[comm] = count(); }", test_syscalls());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	const Probe &probe = c->program.probes[0];
	ASSERT_EQ(probe.root_value, RootValue::Keys);
	auto record = [&](const char *comm) {
		ProbeEvent ev = enter(0, comm, 7, 1);
		ev.kind = PointKind::FnEntry;
		ev.address = probe.points[0].address;
		return ev;
	};

	Captured recorded;
	Runtime from_records(*c, recorded, kDefaultMaxMapEntries);
	from_records.begin(0);
	for (const char *comm : {"dd", "cat", "dd", "dd", "bash"})
		from_records.on_event(record(comm));
	from_records.finish(2);

	Captured counted;
	Runtime from_root(*c, counted, kDefaultMaxMapEntries);
	from_root.begin(0);
	from_root.add_root_keyed(probe, std::string("dd"), 2);
	from_root.add_root_keyed(probe, std::string("cat"), 1);
	from_root.add_root_keyed(probe, std::string("dd"), 1);	// a second slot of the same key
	from_root.on_event(record("bash"));			// past root's slots: recorded
	EXPECT_EQ(from_root.stats().fired, 5u);
	from_root.finish(2);
	EXPECT_EQ(counted.maps_, recorded.maps_);
	EXPECT_NE(counted.maps_.find("@reads[dd]: 3"), std::string::npos) << counted.maps_;
}

// A probe counted in root: root's counts add to its map as that many
// hits would, a record that comes anyway (an address root records at)
// counts once more, and nothing is added after exit().
TEST(ProbeRuntime, RootCountsAddToTheMapAsThatManyHits)
{
	auto c = compile_program("fn:vfs_read { @reads = count(); } syscall:getpid { exit(); }", test_syscalls());
	ASSERT_TRUE(c.ok()) << format_diagnostic("", c.error());
	const Probe &counted = c->program.probes[0];
	ASSERT_TRUE(counted.count_in_root);
	c->program.probes[0].points[0].address = 0xffffffff81234560ull;
	Captured out;
	Runtime runtime(*c, out, kDefaultMaxMapEntries);
	runtime.begin(0);
	runtime.add_root_count(counted, 5);
	ProbeEvent ev = enter(0, "cat", 7, 1);
	ev.kind = PointKind::FnEntry;
	ev.address = 0xffffffff81234560ull;
	runtime.on_event(ev);
	EXPECT_EQ(runtime.stats().fired, 6u);
	runtime.on_event(enter(39, "cat", 7, 2));	// getpid: exit()
	runtime.add_root_count(counted, 100);
	runtime.finish(3);
	EXPECT_EQ(out.maps_, "@reads: 6\n");
}
