// vtice probe's feed: syscall events from several CPUs' polls fire a
// program's probes in time order, and a return fires with its own entry's
// number and arguments (exit records carry neither).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "checker.hpp"
#include "output.hpp"
#include "probe_feed.hpp"
#include "runtime.hpp"

using namespace vtice;

namespace {

class Captured : public probes::Output {
public:
	void text(std::string_view printed) override { printed_ += printed; }
	void map(const probes::MapInfo &info, const probes::MapEntries &entries) override
	{
		maps_ += probes::format_map_text(info, entries);
	}
	std::string printed_, maps_;
};

trace::SyscallEvent event(bool enter, std::uint64_t tsc, std::uint32_t pid, std::uint64_t nr_or_ret,
			  std::uint64_t arg2 = 0)
{
	trace::SyscallEvent ev;
	ev.enter = enter;
	ev.tsc = tsc;
	ev.cpu = static_cast<std::uint16_t>(tsc % 2);
	ev.has_task = true;
	ev.pid = pid;
	ev.tgid = pid + 1000;
	ev.task = 0xffff888000000000ull + pid;
	ev.comm = "t" + std::to_string(pid);
	if (enter) {
		ev.nr = nr_or_ret;
		ev.args = {3, 0, arg2, 0, 0, 0};
	} else {
		ev.ret = nr_or_ret;
	}
	return ev;
}

// A hidden breakpoint's hit at address (a fn: entry, a return site, an addr:).
trace::SyscallEvent probe_hit(std::uint64_t address)
{
	trace::SyscallEvent hit = event(true, 10, 7, 0);
	hit.enter = false;
	hit.probe_hit = true;
	hit.nr = address;
	return hit;
}

// Every syscall is number 0 to this lookup.
std::optional<std::uint64_t> any_syscall(std::string_view) { return 0; }

// A program and its runtime, begun at time 0, with its output captured.
struct FeedRun {
	explicit FeedRun(const std::string &source)
	{
		auto c = probes::compile_program(source, any_syscall);
		EXPECT_TRUE(c.ok()) << source;
		if (c.ok())
			program = std::move(*c);
		runtime = std::make_unique<probes::Runtime>(program, out);
		runtime->begin(0);
	}
	probes::CheckedProgram program;
	Captured out;
	std::unique_ptr<probes::Runtime> runtime;
};

}  // namespace

TEST(ProbeFeed, ReturnsFireWithTheirEntrysNumberAndArguments)
{
	// 0 = read, 1 = write (x86-64 ABI).
	auto program = probes::compile_program(
		"syscall:read:return { printf(\"%s %d %d %d %d\\n\", comm, pid, tid, arg2, retval); }",
		[](std::string_view n) -> std::optional<std::uint64_t> {
			if (n == "read")
				return 0;
			return std::nullopt;
		});
	ASSERT_TRUE(program.ok());
	Captured out;
	probes::Runtime rt(*program, out);
	rt.begin(0);
	console::ProbeFeed feed(rt, [](std::uint64_t tsc) { return tsc * 10; });
	// Two tasks interleaved, given out of time order (as two CPUs' rings
	// come); task 7's read returns 64, task 8's write (not read) returns 5;
	// task 9 returns from a call entered before the run.
	feed.feed_events({event(false, 40, 7, 64), event(true, 10, 7, 0, 100), event(true, 20, 8, 1, 5),
			  event(false, 30, 8, 5), event(false, 50, 9, 0)});
	EXPECT_EQ(out.printed_, "t7 1007 7 100 64\n");
	EXPECT_EQ(feed.stats().events, 5u);
	EXPECT_EQ(feed.stats().returns_unpaired, 1u);
}

TEST(ProbeFeed, EventsFireInTimeOrderWithTheirTime)
{
	FeedRun r("syscall:* { printf(\"%d \", nsecs); }");
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc * 10; });
	feed.feed_events({event(true, 3, 1, 0), event(true, 1, 2, 0), event(true, 2, 3, 0)});
	EXPECT_EQ(r.out.printed_, "10 20 30 ");
}

TEST(ProbeFeed, StopsFeedingOnceTheProgramExits)
{
	FeedRun r("syscall:* { @n = count(); exit(); }");
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; });
	feed.feed_events({event(true, 1, 1, 0), event(true, 2, 2, 0), event(true, 3, 3, 0)});
	EXPECT_EQ(feed.stats().events, 1u);
	r.runtime->finish(0);
	EXPECT_EQ(r.out.maps_, "@n: 1\n");
}

// A task chooses its own comm (prctl PR_SET_NAME): its bytes must not reach
// the terminal raw through printf or a map key.
TEST(ProbeFeed, ATasksNameCannotDriveTheTerminal)
{
	FeedRun r("syscall:* { printf(\"%s|\", comm); @[comm] = count(); }");
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; });
	trace::SyscallEvent ev = event(true, 1, 1, 0);
	ev.comm = "\x1b]0;owned\x07\nx";
	feed.feed_events({ev});
	r.runtime->finish(0);
	EXPECT_EQ(r.out.printed_, "\\x1b]0;owned\\x07\\x0ax|");
	EXPECT_EQ(r.out.maps_, "@[\\x1b]0;owned\\x07\\x0ax]: 1\n");
}

// Samples and syscall events of one poll fire in TSC order, each sample
// with the stack text its callback gives, its task's name escaped.
TEST(ProbeFeed, SamplesFireBetweenEventsInTimeOrderWithTheirStacks)
{
	FeedRun r("syscall:* { printf(\"sys %d|\", nsecs); } profile:hz:99 { printf(\"%s %d %d %s|\", comm, pid, tid, kstack); }");
	std::vector<std::uint64_t> unwound;
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; },
				[&unwound](const trace::ProfileSample &s) {
					unwound.push_back(s.rip);
					return "leaf@" + std::to_string(s.rip) + "\nroot";
				});
	trace::ProfileSample a, b;
	a.tsc = 15, a.rip = 100, a.has_task = true, a.pid = 3, a.tgid = 2, a.comm = "dd\x1b";
	b.tsc = 5, b.rip = 200, b.user = true;
	feed.feed_events({event(true, 20, 1, 0), event(true, 10, 2, 0)}, {a, b});
	EXPECT_EQ(r.out.printed_, " 0 0 leaf@200\nroot|sys 10|dd\\x1b 2 3 leaf@100\nroot|sys 20|");
	EXPECT_EQ(unwound, (std::vector<std::uint64_t>{200, 100}));
	EXPECT_EQ(feed.stats().events, 4u);
}

// A fn: hit armed with a stack reaches kstack through the same callback as
// a sample, its entry as the RIP to unwind from; a hit without one has none.
TEST(ProbeFeed, AFnHitsStackIsUnwoundFromItsEntry)
{
	FeedRun r("fn:vfs_read { printf(\"%s|\", kstack); }");
	r.program.program.probes[0].points[0].address = 0xffffffff81234564ull;	// resolve_function_points' part
	std::vector<trace::ProfileSample> asked;
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; },
				[&asked](const trace::ProfileSample &s) {
					asked.push_back(s);
					return std::string("vfs_read\nksys_read");
				});
	trace::SyscallEvent hit = probe_hit(0xffffffff81234564ull);
	hit.rsp = 0xffffc90000107e00ull;
	hit.rbp = 0xbbbb;
	hit.stack.assign(64, 0x5a);
	trace::SyscallEvent bare = hit;
	bare.tsc = 11;
	bare.rsp = 0;
	bare.stack.clear();
	feed.feed_events({hit, bare});
	EXPECT_EQ(r.out.printed_, "vfs_read\nksys_read||");
	ASSERT_EQ(asked.size(), 1u) << "no stack, nothing to unwind";
	EXPECT_EQ(asked[0].rip, hit.nr);
	EXPECT_EQ(asked[0].rsp, hit.rsp);
	EXPECT_EQ(asked[0].rbp, hit.rbp);
	EXPECT_EQ(asked[0].stack, hit.stack);
	EXPECT_FALSE(asked[0].user);
}

// The string root copied for str() reaches the program escaped: a guest's
// bytes never reach the terminal raw.
TEST(ProbeFeed, AFnHitsStringReachesStrEscaped)
{
	FeedRun r("fn:do_sys_openat2 { printf(\"%s|\", str(arg1)); }");
	r.program.program.probes[0].points[0].address = 0xffffffff81234564ull;
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; });
	trace::SyscallEvent hit = probe_hit(0xffffffff81234564ull);
	hit.str = "/etc/passwd";
	trace::SyscallEvent hostile = hit;
	hostile.tsc = 11;
	hostile.str = "\x1b[2J/x";
	feed.feed_events({hit, hostile});
	EXPECT_EQ(r.out.printed_, "/etc/passwd|\\x1b[2J/x|");
}

// reg() past the eight every hit carries reads the GPRS records' values.
TEST(ProbeFeed, AHitsOtherRegistersReachReg)
{
	FeedRun r("addr:vfs_read+0x1c { printf(\"%x %x %d %x|\", reg(\"rbx\"), reg(\"rsp\"), reg(\"r12\"), reg(\"rflags\")); }");
	r.program.program.probes[0].points[0].address = 0xffffffff8123457cull;
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; });
	trace::SyscallEvent hit = probe_hit(0xffffffff8123457cull);
	hit.more_regs = {0xb0b0, 0xffffc90000107e00ull, 0xbebe, 10, 11, 12, 13, 14, 15, 0x246};
	feed.feed_events({hit});
	EXPECT_EQ(r.out.printed_, "b0b0 ffffc90000107e00 12 246|");
}

// A syscall's string (str(arg1) in syscall:NAME, copied at its entry)
// reaches the entry's probe and its return's, escaped as a fn: hit's is.
TEST(ProbeFeed, ASyscallsStringReachesItsEntryAndItsReturnEscaped)
{
	FeedRun r("syscall:read { printf(\"in %s|\", str(arg1)); }\n"
		  "syscall:read:return { printf(\"out %s %d|\", str(arg1), retval); }");
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; });
	trace::SyscallEvent enter = event(true, 10, 7, 0);
	enter.str = "\x1b[2J/etc";
	feed.feed_events({enter, event(false, 20, 7, 5)});
	EXPECT_EQ(r.out.printed_, "in \\x1b[2J/etc|out \\x1b[2J/etc 5|");
}

// fn:NAME:return: a hit at one of the function's return sites fires the
// return probe with RAX as retval; a hit at its entry fires the entry probe
// only, and a hit at another address neither.
TEST(ProbeFeed, AHitAtAReturnSiteFiresTheReturnProbeWithRax)
{
	FeedRun r("fn:vfs_read { printf(\"in|\"); } fn:vfs_read:return { printf(\"%s=%d|\", probe, retval); }");
	r.program.program.probes[0].points[0].address = 0xffffffff81234564ull;
	r.program.program.probes[1].points[0].return_sites = {0xffffffff812345f0ull, 0xffffffff81234622ull};
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; });
	trace::SyscallEvent entry = probe_hit(0xffffffff81234564ull);
	trace::SyscallEvent ret = entry;
	ret.tsc = 11;
	ret.nr = 0xffffffff81234622ull;
	ret.ret = static_cast<std::uint64_t>(-14);	// -EFAULT in RAX
	trace::SyscallEvent elsewhere = ret;
	elsewhere.tsc = 12;
	elsewhere.nr = 0xffffffff81234600ull;
	feed.feed_events({entry, ret, elsewhere});
	EXPECT_EQ(r.out.printed_, "in|fn:vfs_read:return=-14|");
}

// addr:: a hit at the point's address fires it, with its stack unwound
// from there; a hit at the function's entry fires the fn: probe only.
TEST(ProbeFeed, AHitAtAnAddrFiresTheAddrProbeAlone)
{
	FeedRun r("fn:vfs_read { printf(\"in|\"); } "
		  "addr:vfs_read+0x1c { printf(\"%s %s %d %d %x|\", probe, kstack, reg(\"rsi\"), reg(\"rax\"), reg(\"rip\")); }");
	r.program.program.probes[0].points[0].address = 0xffffffff81234564ull;
	r.program.program.probes[1].points[0].address = 0xffffffff8123457cull;	// resolve_function_points' part
	std::vector<std::uint64_t> unwound;
	console::ProbeFeed feed(*r.runtime, [](std::uint64_t tsc) { return tsc; },
				[&unwound](const trace::ProfileSample &s) {
					unwound.push_back(s.rip);
					return std::string("vfs_read+0x1c");
				});
	trace::SyscallEvent entry = probe_hit(0xffffffff81234564ull);
	trace::SyscallEvent inside = entry;
	inside.tsc = 11;
	inside.nr = 0xffffffff8123457cull;
	inside.rsp = 0xffffc90000107e00ull;
	inside.stack.assign(32, 0);
	inside.args[1] = 42;	// RSI at the hit
	inside.ret = static_cast<std::uint64_t>(-2);	// RAX at the hit
	feed.feed_events({entry, inside});
	EXPECT_EQ(r.out.printed_, "in|addr:vfs_read+0x1c vfs_read+0x1c 42 -2 ffffffff8123457c|");
	EXPECT_EQ(unwound, (std::vector<std::uint64_t>{0xffffffff8123457cull}));
}
