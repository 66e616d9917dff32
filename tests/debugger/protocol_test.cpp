// Stop replies, thread ids, qSupported and target descriptions, against
// replies written from the gdb manual's packet descriptions and QEMU's
// observed replies (DESIGN.md).
#include <gtest/gtest.h>

#include <map>

#include "rsp/protocol.hpp"

using namespace vtice::dbg;
using namespace vtice::dbg::rsp;
using vtice::Result;
using vtice::make_error;

TEST(RspStopReply, SignalOnly)
{
	auto e = parse_stop_reply("S05");
	ASSERT_TRUE(e.ok());
	EXPECT_EQ(e->signal, 5);
	EXPECT_EQ(e->reason, StopReason::Signal);
	EXPECT_FALSE(e->thread);
}

TEST(RspStopReply, QemuThreadAndBreak)
{
	auto e = parse_stop_reply("T05thread:p01.02;swbreak:;");
	ASSERT_TRUE(e.ok());
	EXPECT_EQ(e->thread, 2);
	EXPECT_TRUE(e->swbreak);
	EXPECT_EQ(e->reason, StopReason::Breakpoint);
	e = parse_stop_reply("T05hwbreak:;thread:3;");
	ASSERT_TRUE(e.ok());
	EXPECT_TRUE(e->hwbreak);
	EXPECT_EQ(e->thread, 3);
}

TEST(RspStopReply, Watchpoints)
{
	auto e = parse_stop_reply("T05thread:p01.01;watch:ffff888003a4b000;");
	ASSERT_TRUE(e.ok());
	EXPECT_EQ(e->reason, StopReason::Watchpoint);
	EXPECT_EQ(e->watch_kind, BreakKind::WriteWatch);
	EXPECT_EQ(e->watch_address, 0xffff888003a4b000ull);
	EXPECT_EQ(parse_stop_reply("T05rwatch:10;")->watch_kind, BreakKind::ReadWatch);
	EXPECT_EQ(parse_stop_reply("T05awatch:10;")->watch_kind, BreakKind::AccessWatch);
	EXPECT_FALSE(parse_stop_reply("T05watch:zz;").ok());
}

// GDB manual, "Stop Reply Packets": replaylog:begin / replaylog:end.
TEST(RspStopReply, ReplayLogEdges)
{
	auto e = parse_stop_reply("T05replaylog:begin;thread:1;");
	ASSERT_TRUE(e.ok());
	EXPECT_EQ(e->replay_log, "begin");
	EXPECT_EQ(e->reason, StopReason::Signal);
	EXPECT_EQ(parse_stop_reply("T05replaylog:end;")->replay_log, "end");
	EXPECT_EQ(parse_stop_reply("T05thread:1;")->replay_log, "");
}

TEST(RspStopReply, ExitAndRegistersIgnored)
{
	EXPECT_EQ(parse_stop_reply("W00")->reason, StopReason::Exited);
	EXPECT_EQ(parse_stop_reply("W00;process:1")->reason, StopReason::Exited);
	EXPECT_EQ(parse_stop_reply("X09")->reason, StopReason::Terminated);
	auto e = parse_stop_reply("T0506:0000000000000000;07:f0ffffff00000000;10:0000000081000000;");
	ASSERT_TRUE(e.ok());
	EXPECT_EQ(e->signal, 5);
}

TEST(RspStopReply, UnknownAndMalformedAreErrors)
{
	auto e = parse_stop_reply("Q05");
	ASSERT_FALSE(e.ok());
	EXPECT_NE(e.error().message.find("unknown stop reply 'Q05'"), std::string::npos);
	EXPECT_FALSE(parse_stop_reply("").ok());
	EXPECT_FALSE(parse_stop_reply("T").ok());
	EXPECT_FALSE(parse_stop_reply("Tzz").ok());
	EXPECT_FALSE(parse_stop_reply("T05thread").ok());
	EXPECT_FALSE(parse_stop_reply("T05thread:p1;").ok());
}

TEST(RspThreadId, Forms)
{
	EXPECT_EQ(*parse_thread_id("p01.02"), 2);
	EXPECT_EQ(*parse_thread_id("1f"), 31);
	EXPECT_EQ(*parse_thread_id("-1"), -1);
	EXPECT_EQ(*parse_thread_id("p1.-1"), -1);
	EXPECT_FALSE(parse_thread_id("").ok());
	EXPECT_FALSE(parse_thread_id("ffffffffff").ok());
}

TEST(RspSupported, QemuReply)
{
	auto s = parse_supported("PacketSize=1000;qXfer:features:read+;vContSupported+;multiprocess+;QStartNoAckMode-");
	EXPECT_EQ(s["PacketSize"], "1000");
	EXPECT_EQ(s["qXfer:features:read"], "+");
	EXPECT_EQ(s["multiprocess"], "+");
	EXPECT_EQ(s["QStartNoAckMode"], "-");
}

namespace {

// Shaped like QEMU's: target.xml includes i386-64bit.xml, which carries a
// licence comment (with a '<reg' inside it that must be ignored).
const std::map<std::string, std::string> kAnnexes = {
	{"target.xml", "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
		       "<target><architecture>i386:x86-64</architecture>"
		       "<xi:include href=\"i386-64bit.xml\"/></target>"},
	{"i386-64bit.xml", "<?xml version=\"1.0\"?>\n<!-- Copyright ... <reg name=\"fake\" bitsize=\"8\"/> -->\n"
			   "<feature name=\"org.gnu.gdb.i386.core\">\n"
			   "  <reg name=\"rax\" bitsize=\"64\" type=\"int64\"/>\n"
			   "  <reg name='rbx' bitsize='64' type='int64'/>\n"
			   "  <reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\"/>\n"
			   "  <reg name=\"eflags\" bitsize=\"32\" type=\"i386_eflags\"/>\n"
			   "  <reg name=\"st0\" bitsize=\"80\" type=\"i387_ext\"/>\n"
			   "</feature><feature name=\"org.gnu.gdb.i386.sys\">\n"
			   "  <reg name=\"cr3\" bitsize=\"64\" regnum=\"70\" group=\"system\"/>\n"
			   "  <reg name=\"cr4\" bitsize=\"64\"/>\n"
			   "</feature>"},
};

Result<std::string> fetch(const std::string &annex)
{
	auto it = kAnnexes.find(annex);
	if (it == kAnnexes.end())
		return make_error("no annex " + annex);
	return it->second;
}

}  // namespace

TEST(RspTargetXml, FollowsIncludesAndSkipsComments)
{
	auto layout = parse_target_description("target.xml", fetch);
	ASSERT_TRUE(layout.ok()) << layout.error().message;
	EXPECT_EQ(layout->architecture, "i386:x86-64");
	ASSERT_EQ(layout->registers.size(), 7u);
	EXPECT_EQ(layout->find("fake"), nullptr);
	EXPECT_EQ(layout->find("rip")->offset, 16u);
	EXPECT_EQ(layout->find("rip")->number, 2u);
	EXPECT_EQ(layout->find("eflags")->offset, 24u);
	EXPECT_EQ(layout->find("st0")->offset, 28u);
	EXPECT_EQ(layout->find("cr3")->offset, 38u);
	EXPECT_EQ(layout->find("cr3")->number, 70u);
	EXPECT_EQ(layout->find("cr4")->number, 71u);
	EXPECT_EQ(layout->find("rax")->group, "general");
	EXPECT_EQ(layout->g_size, 54u);
}

TEST(RspTargetXml, ErrorsNameTheAnnex)
{
	auto missing = parse_target_description("nope.xml", fetch);
	ASSERT_FALSE(missing.ok());
	EXPECT_NE(missing.error().message.find("nope.xml"), std::string::npos);
	auto bad = parse_target_description("x", [](const std::string &) -> Result<std::string> {
		return std::string("<target><reg name=\"rax\" bitsize=\"sixty\"/></target>");
	});
	ASSERT_FALSE(bad.ok());
	EXPECT_NE(bad.error().message.find("bitsize='sixty'"), std::string::npos);
	auto loop = parse_target_description("a", [](const std::string &) -> Result<std::string> {
		return std::string("<xi:include href=\"a\"/>");
	});
	ASSERT_FALSE(loop.ok());
	EXPECT_NE(loop.error().message.find("deeper than 8"), std::string::npos);
	EXPECT_FALSE(parse_target_description("u", [](const std::string &) -> Result<std::string> {
		return std::string("<target><reg name=\"rax\" bitsize=\"64\"");
	}).ok());
}
