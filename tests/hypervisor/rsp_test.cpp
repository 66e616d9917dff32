// The stub's RSP engine (hypervisor/debug/rsp*.c) fed byte by byte over a
// fake machine. Expected bytes follow the GDB manual's "Remote Protocol"
// chapter (framing, acks, stop replies, vCont, qXfer, X escapes), not the
// engine's own output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "rsp_fake_machine.hpp"
#include "vtice/ioctl.h"
#include "vtice/vmcall.h"

using vtice::fake::FakeMachine;

namespace {

std::string g_out;

class Rsp : public ::testing::Test {
protected:
	FakeMachine m;
	vt_rsp rsp{};
	bool stopped = true;

	void SetUp() override
	{
		g_out.clear();
		vt_rsp_init(&rsp, &FakeMachine::ops, &m, [](void *, u8 b) { g_out += (char)b; });
	}

	static std::string frame(const std::string &body)
	{
		unsigned sum = 0;
		for (unsigned char c : body)
			sum += c;
		char cs[3];
		std::snprintf(cs, sizeof(cs), "%02x", sum & 0xff);
		return "$" + body + "#" + cs;
	}

	vt_rsp_action feed(const std::string &bytes)
	{
		vt_rsp_action last = VT_RSP_STAY;
		for (unsigned char c : bytes) {
			vt_rsp_action a = vt_rsp_feed(&rsp, c, stopped);
			if (a != VT_RSP_STAY)
				last = a;
		}
		return last;
	}

	// The engine's output with every packet's checksum verified on the wire
	// form and its run-length encoding expanded (GDB manual, "Overview":
	// X*N is X followed by N-29 more X), re-framed for comparison.
	static std::string expand(const std::string &wire)
	{
		std::string out;
		size_t i = 0;
		while (i < wire.size()) {
			if (wire[i] != '$') {
				out += wire[i++];
				continue;
			}
			size_t hash = wire.find('#', i);
			if (hash == std::string::npos || hash + 3 > wire.size())
				return out + "<truncated packet>";
			std::string enc = wire.substr(i + 1, hash - i - 1);
			if (frame(enc) != wire.substr(i, hash + 3 - i))
				return out + "<bad checksum>";
			std::string body;
			for (size_t k = 0; k < enc.size(); k++) {
				if (enc[k] == '*' && !body.empty() && k + 1 < enc.size()) {
					body.append((unsigned char)enc[k + 1] - 29, body.back());
					k++;
				} else {
					body += enc[k];
				}
			}
			out += frame(body);
			i = hash + 3;
		}
		return out;
	}

	// Send one packet, return what came back (ack included), clear it.
	// 8 bytes, little-endian, two hex digits each: the target's order.
	static std::string le64(uint64_t v)
	{
		static const char digits[] = "0123456789abcdef";
		std::string out;
		for (int i = 0; i < 8; i++, v >>= 8)
			out += {digits[(v >> 4) & 15], digits[v & 15]};
		return out;
	}

	// What a stop reply says, gdbserver's way: the signal, then RBP, RSP
	// and RIP of the stopped CPU (gdb's amd64 numbers 6, 7, 16), then
	// the thread and the rest.
	std::string stop_reply(const std::string &sig, uint32_t cpu, const std::string &rest = "")
	{
		const vt_dbg_regs &r = m.regs[cpu];
		return sig + "06:" + le64(r.gpr[VT_DBG_RBP]) + ";07:" + le64(r.gpr[VT_DBG_RSP]) + ";10:" +
		       le64(r.rip) + ";thread:" + std::to_string(cpu + 1) + ";" + rest;
	}

	std::string ask(const std::string &body)
	{
		g_out.clear();
		feed(frame(body));
		std::string out = expand(g_out);
		g_out.clear();
		return out;
	}
};

TEST_F(Rsp, AcksAGoodPacketAndAnswersWithAChecksum)
{
	EXPECT_EQ(ask("?"), "+" + frame(stop_reply("T02", 0)));
}

TEST_F(Rsp, NaksABadChecksumAndDoesNothing)
{
	feed("$g#00");
	EXPECT_EQ(g_out, "-");
}

TEST_F(Rsp, NaksAPacketLongerThanPacketSize)
{
	feed(frame(std::string(VT_RSP_PACKET_MAX + 10, 'm')));
	EXPECT_EQ(g_out, "-");
	EXPECT_EQ(ask("?"), "+" + frame(stop_reply("T02", 0))) << "and the next packet is fine";
}

TEST_F(Rsp, ResendsTheLastReplyOnNak)
{
	std::string first = ask("qC");
	feed("-");
	EXPECT_EQ(expand(g_out), first.substr(1));
}

TEST_F(Rsp, RepliesAreRunLengthEncodedWithoutHashOrDollarCounts)
{
	ask("g");
	g_out.clear();
	feed(frame("g"));
	std::string wire = g_out;
	EXPECT_LT(wire.size(), 400u) << "unavailable registers travel as runs";
	for (size_t i = 0; i + 1 < wire.size(); i++)
		if (wire[i] == '*') {
			unsigned char n = wire[i + 1];
			EXPECT_TRUE(n >= 29 + 3 && n <= 126 && n != '#' && n != '$') << (int)n;
		}
	EXPECT_EQ(expand(wire).size(), 1 + 1 + 2 * (16 * 8 + 8 + 4 + 6 * 4 + 8 * 10 + 8 * 4 +
						 16 * 16 + 4 + 3 * 8 + 6 * 8) + 3u);
}

TEST_F(Rsp, DollarRestartsAPacketCutShort)
{
	feed("$m ffff");	// the line dropped here
	g_out.clear();
	EXPECT_EQ(ask("qC"), "+" + frame("QC1"));
}

TEST_F(Rsp, NoAckModeStopsAcking)
{
	EXPECT_EQ(ask("QStartNoAckMode"), "+" + frame("OK"));
	EXPECT_EQ(ask("qC"), frame("QC1"));
	ask("D");
	EXPECT_EQ(ask("qC"), "+" + frame("QC1")) << "detach: the next debugger starts acked";
}

// gdb's "disconnect" leaves without D or k; on a serial line nothing else
// tells the stub the debugger changed. The next one opens with qSupported.
TEST_F(Rsp, ANewSessionStartsAckedAfterADisconnect)
{
	EXPECT_EQ(ask("QStartNoAckMode"), "+" + frame("OK"));
	std::string reply = ask("qSupported:multiprocess+;swbreak+");
	EXPECT_EQ(reply.substr(0, 2), "+$") << "qSupported is acked: " << reply;
	EXPECT_EQ(ask("qC"), "+" + frame("QC1")) << "and so is everything after it";
}

TEST_F(Rsp, SupportedFeaturesAsTheIssueLists)
{
	std::string r = ask("qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386");
	for (const char *f : {"PacketSize=1000", "swbreak+", "hwbreak+", "qXfer:features:read+",
			      "vContSupported+", "QStartNoAckMode+"})
		EXPECT_NE(r.find(f), std::string::npos) << f;
}

TEST_F(Rsp, TargetXmlIsPagedWithMoreAndLast)
{
	std::string head = ask("qXfer:features:read:target.xml:0,10");
	EXPECT_EQ(head, "+" + frame("m<?xml version=\"1")) << "length 0x10: 16 bytes";
	EXPECT_EQ(ask("qXfer:features:read:target.xml:100000,10"), "+" + frame("l"));
	EXPECT_EQ(ask("qXfer:features:read:other.xml:0,10"), "+" + frame("E00"));
	std::string all;
	for (unsigned off = 0;; off += 0x200) {
		char q[64];
		std::snprintf(q, sizeof(q), "qXfer:features:read:target.xml:%x,200", off);
		std::string r = ask(q);
		std::string body = r.substr(2, r.size() - 5);
		all += body.substr(1);
		if (body[0] == 'l')
			break;
	}
	for (const char *reg : {"\"rip\"", "\"st7\"", "\"fop\"", "\"xmm15\"", "\"fs_base\"",
				"\"k_gs_base\"", "\"cr3\"", "\"efer\""})
		EXPECT_NE(all.find(reg), std::string::npos) << reg;
	EXPECT_NE(all.find("</target>"), std::string::npos);
}

TEST_F(Rsp, RegistersGoOutLittleEndianWithUnavailableFpu)
{
	std::string g = ask("g");
	// rax = 0x1111 (8 bytes LE) first; rip at register 16
	EXPECT_EQ(g.substr(2, 16), "1111000000000000");
	EXPECT_EQ(g.substr(2 + 16 * 16, 16), "10000081ffffffff");
	EXPECT_NE(g.find("xxxxxxxxxxxxxxxxxxxx"), std::string::npos) << "st0: 10 bytes unavailable";
	EXPECT_EQ(ask("p10"), "+" + frame("10000081ffffffff")) << "p with a hex register number";
	EXPECT_EQ(ask("p999"), "+" + frame("E16"));
}

TEST_F(Rsp, PWritesOneRegisterOfTheSelectedCpu)
{
	EXPECT_EQ(ask("Hg2"), "+" + frame("OK"));
	EXPECT_EQ(ask("P0=efbeadde00000000"), "+" + frame("OK"));
	EXPECT_EQ(m.regs[1].gpr[VT_DBG_RAX], 0xdeadbeefu);
	EXPECT_EQ(m.regs[0].gpr[VT_DBG_RAX], 0x1111u);
	EXPECT_EQ(ask("Hg9"), "+" + frame("E01")) << "no CPU 8";
}

TEST_F(Rsp, GRoundTripsAndKeepsUnavailableRegisters)
{
	std::string g = ask("g");
	std::string regs = g.substr(2, g.size() - 5);
	regs.replace(0, 16, "2a00000000000000");
	EXPECT_EQ(ask("G" + regs), "+" + frame("OK"));
	EXPECT_EQ(m.regs[0].gpr[VT_DBG_RAX], 42u);
	EXPECT_EQ(m.regs[0].rip, FakeMachine::kTextBase + 0x10);
	EXPECT_EQ(ask("G12"), "+" + frame("E16")) << "odd digits";
}

TEST_F(Rsp, MemoryReadsWritesAndFaults)
{
	char q[64];
	std::snprintf(q, sizeof(q), "m%llx,4", (unsigned long long)FakeMachine::kDataBase);
	EXPECT_EQ(ask(q), "+" + frame("00070e15"));
	EXPECT_EQ(ask("mffffffffffff0000,4"), "+" + frame("E0e")) << "EFAULT, as gdb expects";
	std::snprintf(q, sizeof(q), "M%llx,2:abcd", (unsigned long long)FakeMachine::kDataBase);
	EXPECT_EQ(ask(q), "+" + frame("OK"));
	EXPECT_EQ(m.data[0], 0xab);
	EXPECT_EQ(m.data[1], 0xcd);
	std::snprintf(q, sizeof(q), "M%llx,2:ab", (unsigned long long)FakeMachine::kDataBase);
	EXPECT_EQ(ask(q), "+" + frame("E16")) << "length and data disagree";
	EXPECT_EQ(ask("mzz,1"), "+" + frame("E16"));
	// a read stopping at the end of mapped memory returns what was readable
	std::snprintf(q, sizeof(q), "m%llx,8",
		      (unsigned long long)(FakeMachine::kDataBase + FakeMachine::kDataSize - 2));
	EXPECT_EQ(ask(q).size(), 1 + 1 + 4 + 3u);
}

TEST_F(Rsp, BinaryWriteUnescapes)
{
	// X data: 0x7d escapes; '#' (0x23) travels as 0x7d 0x03.
	std::string body = "X" + [] {
		char a[32];
		std::snprintf(a, sizeof(a), "%llx", (unsigned long long)FakeMachine::kDataBase);
		return std::string(a);
	}() + ",2:" + std::string("\x7d\x03") + "A";
	EXPECT_EQ(ask(body), "+" + frame("OK"));
	EXPECT_EQ(m.data[0], 0x23);
	EXPECT_EQ(m.data[1], 'A');
}

TEST_F(Rsp, BreakpointsAndWatchpointsReachTheTarget)
{
	EXPECT_EQ(ask("Z0,ffffffff81000040,1"), "+" + frame("OK"));
	EXPECT_EQ(ask("Z2,ffff888000100010,8"), "+" + frame("OK"));
	EXPECT_EQ(m.points.size(), 2u);
	EXPECT_EQ(ask("z0,ffffffff81000040,1"), "+" + frame("OK"));
	EXPECT_EQ(ask("Z9,0,1"), "+" + frame("E16"));
	EXPECT_EQ(ask("Z0,ffffffffffff0000,1"), "+" + frame("E0e"));
}

TEST_F(Rsp, ContinueResumesEveryCpuAndTheStopIsReported)
{
	EXPECT_EQ(feed(frame("c")), VT_RSP_RESUMED);
	EXPECT_EQ(g_out, "+") << "no reply until the machine stops";
	ASSERT_EQ(m.last_run.size(), 2u);
	EXPECT_EQ(m.last_run[0], VT_RUN_CONTINUE);
	EXPECT_EQ(m.last_run[1], VT_RUN_CONTINUE);
	g_out.clear();
	vt_dbg_stop stop{1, VT_STOP_WATCH, 0xffff888000100010ull};
	vt_rsp_report_stop(&rsp, &stop);
	EXPECT_EQ(expand(g_out), frame(stop_reply("T05", 1, "watch:ffff888000100010;")));
}

// A debugger that left by "disconnect" may have left another CPU selected;
// the next one asks '?' and reads the registers of the CPU that stopped
// (gdbserver's rule: '?' makes the stop's thread the general one).
TEST_F(Rsp, QuestionMarkSelectsTheStoppedCpuAgain)
{
	vt_dbg_stop stop{0, VT_STOP_CRASH, 0};
	vt_rsp_report_stop(&rsp, &stop);
	EXPECT_EQ(ask("Hg2"), "+" + frame("OK"));
	EXPECT_EQ(ask("?"), "+" + frame(stop_reply("T0b", 0)));
	EXPECT_EQ(ask("P0=efbeadde00000000"), "+" + frame("OK"));
	EXPECT_EQ(m.regs[0].gpr[VT_DBG_RAX], 0xdeadbeefu) << "the stopped CPU's registers";
	EXPECT_EQ(m.regs[1].gpr[VT_DBG_RAX], 0x2222u);
}

TEST_F(Rsp, VContStepsOneCpuAndTheOthersDoWhatTheDefaultSays)
{
	EXPECT_EQ(ask("vCont?"), "+" + frame("vCont;c;C;s;S;t"));
	feed(frame("vCont;s:2"));
	EXPECT_EQ(m.last_run[0], VT_RUN_STAY) << "no default action: stays stopped";
	EXPECT_EQ(m.last_run[1], VT_RUN_STEP);
	feed(frame("vCont;s:1;c"));
	EXPECT_EQ(m.last_run[0], VT_RUN_STEP);
	EXPECT_EQ(m.last_run[1], VT_RUN_CONTINUE);
	EXPECT_EQ(ask("vCont;x"), "+" + frame("E16"));
}

TEST_F(Rsp, AStepTheTargetRefusesIsAnError)
{
	m.refuse_step = true;
	EXPECT_EQ(feed(frame("s")), VT_RSP_STAY);
	EXPECT_NE(expand(g_out).find(frame("E01")), std::string::npos);
}

TEST_F(Rsp, BreakInWhileRunning)
{
	feed(frame("c"));
	stopped = false;
	g_out.clear();
	EXPECT_EQ(feed("\x03"), VT_RSP_BREAK);
	stopped = true;
	vt_dbg_stop stop{0, VT_STOP_SIGINT, 0};
	vt_rsp_report_stop(&rsp, &stop);
	EXPECT_EQ(expand(g_out), frame(stop_reply("T02", 0)));
}

TEST_F(Rsp, AFirstPacketStopsTheMachineWithoutAnUnsolicitedReply)
{
	stopped = false;
	EXPECT_EQ(feed("+$"), VT_RSP_BREAK) << "the '$' of gdb's first packet";
	stopped = true;
	vt_dbg_stop stop{0, VT_STOP_SIGINT, 0};
	vt_rsp_report_stop(&rsp, &stop);
	EXPECT_EQ(g_out, "") << "gdb asked qSupported, not for a stop";
	feed(std::string("qC#") + "b4");
	EXPECT_EQ(expand(g_out), "+" + frame("QC1"));
}

TEST_F(Rsp, DetachRemovesEverythingAndResumesAll)
{
	ask("Z0,ffffffff81000040,1");
	EXPECT_EQ(feed(frame("D")), VT_RSP_RESUMED);
	EXPECT_EQ(expand(g_out), "+" + frame("OK"));
	EXPECT_EQ(m.remove_all_calls, 1);
	EXPECT_EQ(m.last_run[0], VT_RUN_CONTINUE);
	EXPECT_EQ(m.last_run[1], VT_RUN_CONTINUE);
}

TEST_F(Rsp, MonitorCommandsAreHexBothWays)
{
	// "exits" = 6578697473
	std::string r = ask("qRcmd,6578697473");
	EXPECT_EQ(m.last_monitor, "exits");
	EXPECT_EQ(r, "+" + frame("63707520303a203432206578697473" "0a"
				 "63707520313a2037206578697473" "0a"));
	EXPECT_EQ(ask("qRcmd,6"), "+" + frame("E16")) << "odd hex";
}

TEST_F(Rsp, ThreadsAreCpus)
{
	EXPECT_EQ(ask("qfThreadInfo"), "+" + frame("m1,2"));
	EXPECT_EQ(ask("qsThreadInfo"), "+" + frame("l"));
	EXPECT_EQ(ask("T2"), "+" + frame("OK"));
	m.online[1] = false;
	EXPECT_EQ(ask("qfThreadInfo"), "+" + frame("m1"));
	EXPECT_EQ(ask("T2"), "+" + frame("E01"));
	// "CPU 0" hex-encoded
	EXPECT_EQ(ask("qThreadExtraInfo,1"), "+" + frame("4350552030"));
}

TEST_F(Rsp, UnknownPacketsGetTheEmptyReply)
{
	EXPECT_EQ(ask("vMustReplyEmpty"), "+" + frame(""));
	EXPECT_EQ(ask("qTStatus"), "+" + frame(""));
	EXPECT_EQ(ask("!"), "+" + frame(""));
}

}  // namespace

// Branch tracing: GDB manual, "General Query Packets" (Qbtrace:bts,
// Qbtrace:off, qXfer:btrace:read) and "Branch Trace Format" (blocks of
// sequential instructions, newest first, begin and end addresses).
class RspBtrace : public Rsp {
protected:
	// The whole object through windows of `window` bytes.
	std::string read_object(const std::string &annex, unsigned window)
	{
		std::string all;
		for (unsigned off = 0; off < 1u << 20;) {
			char q[128];
			std::snprintf(q, sizeof(q), "qXfer:%s:%x,%x", annex.c_str(), off, window);
			std::string r = ask(q);
			if (r.size() < 5 || (r[2] != 'm' && r[2] != 'l'))
				return "<error " + r + ">";
			std::string body = r.substr(3, r.size() - 6);
			all += body;
			off += body.size();
			if (r[2] == 'l')
				return all;
		}
		return "<endless>";
	}

	static std::string block(uint64_t begin, uint64_t end)
	{
		char b[96];
		std::snprintf(b, sizeof(b), "<block begin=\"0x%016llx\" end=\"0x%016llx\"/>",
			      (unsigned long long)begin, (unsigned long long)end);
		return b;
	}
};

TEST_F(RspBtrace, SupportedListsTheBranchTracePackets)
{
	std::string r = ask("qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386");
	for (const char *f : {"Qbtrace:bts+", "Qbtrace:off+", "qXfer:btrace:read+", "qXfer:btrace-conf:read+"})
		EXPECT_NE(r.find(f), std::string::npos) << f;
}

TEST_F(RspBtrace, BtsAndOffActOnTheHgThread)
{
	EXPECT_EQ(ask("Hg2"), "+" + frame("OK"));
	EXPECT_EQ(ask("Qbtrace:bts"), "+" + frame("OK"));
	EXPECT_TRUE(m.tracing[1]);
	EXPECT_FALSE(m.tracing[0]);
	EXPECT_EQ(ask("Qbtrace:off"), "+" + frame("OK"));
	EXPECT_FALSE(m.tracing[1]);
	m.no_tracer = true;
	std::string r = ask("Qbtrace:bts");
	EXPECT_EQ(r.substr(0, 4), "+$E.") << "an error gdb prints as text: " << r;
	EXPECT_NE(r.find("monitor trap flag"), std::string::npos) << r;
}

TEST_F(RspBtrace, BlocksAreNewestFirstAndEndAtTheCurrentPosition)
{
	const uint64_t S = 0xffffffff81000100, A = S + 0x10, B = S + 0x80, C = B + 0x5, D = S + 0x40, E = D + 0x7;
	m.first_ip[0] = S;
	m.last_ip[0] = E;
	m.add_branch(0, A, B);
	m.add_branch(0, C, D);
	std::string doc = read_object("btrace:read:all", 0x1000);
	std::string want = "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n" + block(D, E) +
			   "\n" + block(B, C) + "\n" + block(S, A) + "\n</btrace>\n";
	EXPECT_EQ(doc, want);
	EXPECT_EQ(read_object("btrace:read:all", 7), want) << "any window of the document is the same bytes";
	EXPECT_EQ(ask("qXfer:btrace:read:delta:0,100"), "+" + frame("E01")) << "gdb falls back to all";
}

TEST_F(RspBtrace, AnEmptyTraceHasNoBlocks)
{
	EXPECT_EQ(read_object("btrace:read:all", 0x1000),
		  "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n</btrace>\n");
}

// gdb reads the config when it connects and, seeing a format, believes the
// thread is being recorded (remote.c, remote_btrace_maybe_reopen).
TEST_F(RspBtrace, ConfNamesBtsOnlyWhileTheThreadIsTraced)
{
	std::string off = read_object("btrace-conf:read:", 0x1000);
	EXPECT_NE(off.find("<btrace-conf version=\"1.0\">"), std::string::npos) << off;
	EXPECT_EQ(off.find("<bts"), std::string::npos) << off;
	EXPECT_EQ(ask("Qbtrace:bts"), "+" + frame("OK"));
	std::string on = read_object("btrace-conf:read:", 0x1000);
	EXPECT_NE(on.find("<bts size=\"0x0000000000020000\"/>"), std::string::npos) << "4096 records of 32 bytes: " << on;
}

TEST_F(RspBtrace, RawRecordsComeBackByteExactThroughEscapes)
{
	// '#' 0x23, '$' 0x24, '}' 0x7d and '*' 0x2a must travel escaped.
	m.add_branch(1, 0x2324247d2a2a2323ull, 0xffffffff81000000ull, VTICE_BRANCH_ASYNC);
	m.add_branch(1, 0xffffffff81000010ull, 0x7d7d7d7d7d7d7d7dull);
	std::string raw;
	for (unsigned window : {0x1000u, 5u}) {
		std::string doc;
		for (unsigned off = 0; off < 4096;) {
			char q[64];
			std::snprintf(q, sizeof(q), "qXfer:vtice-trace:read:1:%x,%x", off, window);
			std::string r = ask(q);
			ASSERT_GE(r.size(), 5u) << r;
			std::string body = r.substr(3, r.size() - 6), plain;
			for (size_t i = 0; i < body.size(); i++)
				plain += body[i] == '}' && i + 1 < body.size() ? (char)(body[++i] ^ 0x20) : body[i];
			doc += plain;
			off += plain.size();
			if (r[2] == 'l')
				break;
		}
		ASSERT_EQ(doc.size(), 2 * sizeof(vtice_record)) << "window " << window;
		EXPECT_EQ(std::memcmp(doc.data(), m.trace[1].data(), doc.size()), 0) << "window " << window;
	}
	EXPECT_EQ(ask("qXfer:vtice-trace:read:9:0,10"), "+" + frame("E16")) << "no CPU 9";
}

// GDB manual, "qXfer:btrace:read": "new" returns all the trace if it changed
// since the last read request, else nothing; gdb keeps what it decoded when
// nothing comes (btrace.c, btrace_fetch), so an unchanged trace is read once.
TEST_F(RspBtrace, NewIsTheWholeTraceOnlyWhenItChangedSinceTheLastRead)
{
	const uint64_t S = 0xffffffff81000100, A = S + 0x10, B = S + 0x80, C = B + 0x5, D = S + 0x40;
	const std::string head = "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n";
	const std::string empty = head + "</btrace>\n";
	EXPECT_EQ(ask("Qbtrace:bts"), "+" + frame("OK"));
	m.first_ip[0] = S;
	m.last_ip[0] = B;
	m.add_branch(0, A, B);
	const std::string one = head + block(B, B) + "\n" + block(S, A) + "\n</btrace>\n";
	EXPECT_EQ(read_object("btrace:read:new", 0x1000), one) << "never read: all of it";
	EXPECT_EQ(read_object("btrace:read:new", 0x1000), empty) << "unchanged since that read";
	EXPECT_EQ(read_object("btrace:read:all", 0x1000), one) << "all is all, always";
	EXPECT_EQ(read_object("btrace:read:new", 7), empty) << "unchanged since the all read, in any window";

	m.add_branch(0, C, D);
	m.last_ip[0] = D;
	const std::string two = head + block(D, D) + "\n" + block(B, C) + "\n" + block(S, A) + "\n</btrace>\n";
	EXPECT_EQ(read_object("btrace:read:new", 9), two) << "a branch more: all of it, in any window";
	EXPECT_EQ(read_object("btrace:read:new", 0x1000), empty);

	m.last_ip[0] = D + 3;	// it ran on without taking a branch
	EXPECT_EQ(read_object("btrace:read:new", 0x1000).find(block(D, D + 3)), head.size()) << "the newest block grew";
	EXPECT_EQ(ask("Qbtrace:bts"), "+" + frame("OK")) << "a new trace, though the sim keeps the same span";
	m.add_branch(0, A, B);
	m.add_branch(0, C, D);
	EXPECT_NE(read_object("btrace:read:new", 0x1000), empty) << "a restarted trace is new";
}

TEST_F(RspBtrace, NewIsKeptPerCpu)
{
	m.first_ip[0] = m.first_ip[1] = 0xffffffff81000100;
	m.last_ip[0] = m.last_ip[1] = 0xffffffff81000110;
	m.add_branch(0, 0xffffffff81000104, 0xffffffff81000110);
	m.add_branch(1, 0xffffffff81000104, 0xffffffff81000110);
	const std::string empty = "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n</btrace>\n";
	EXPECT_NE(read_object("btrace:read:new", 0x1000), empty);
	EXPECT_EQ(ask("Hg2"), "+" + frame("OK"));
	EXPECT_NE(read_object("btrace:read:new", 0x1000), empty) << "CPU 1's trace was never read";
	EXPECT_EQ(read_object("btrace:read:new", 0x1000), empty);
	EXPECT_EQ(ask("Hg1"), "+" + frame("OK"));
	EXPECT_EQ(read_object("btrace:read:new", 0x1000), empty) << "CPU 0's is as read before";
}

// Probes through the stub (rsp_probes.c's packet list): each arming packet
// becomes the kernel side's VMCALL steps in probes_dev.c's order, and the
// rings are read apart from being taken.
class RspProbes : public RspBtrace {
protected:
	using Op = std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t>;

	void put_record(uint32_t cpu, uint64_t tsc, uint64_t payload)
	{
		vtice_record r{};
		r.type = VTICE_REC_PROBE_HIT;
		r.cpu = (u16)cpu;
		r.tsc = tsc;
		std::memcpy(reinterpret_cast<char *>(&r) + 16, &payload, sizeof(payload));
		m.ring[cpu].push_back(r);
	}

	static std::string unescape(const std::string &body)
	{
		std::string plain;
		for (size_t i = 0; i < body.size(); i++)
			plain += body[i] == '}' && i + 1 < body.size() ? (char)(body[++i] ^ 0x20) : body[i];
		return plain;
	}
};

TEST_F(RspProbes, SupportedNamesThem)
{
	EXPECT_NE(ask("qSupported").find("QVtice:probes+"), std::string::npos);
}

TEST_F(RspProbes, ArmClearsThenSetsTheFilterTheStackAndTheIntercept)
{
	EXPECT_EQ(ask("Hg2"), "+" + frame("OK"));
	// comm "bash", NUL-padded to 16 bytes; pid 0x7b; 64 bytes of stack; GPRS
	EXPECT_EQ(ask("QVtice:probes:arm:7b,40,1,62617368000000000000000000000000"), "+" + frame("OK"));
	const uint64_t bash = 0x68736162;
	EXPECT_EQ(m.probe_ops, (std::vector<Op>{{1, VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0},
						{1, VTICE_VMCALL_PROBE_FILTER, 0x7b, bash, 0},
						{1, VTICE_VMCALL_PROBE_STACK, 0x40, 1, 0},
						{1, VTICE_VMCALL_PROBE_INTERCEPT, 1, 0, 0}}));
}

TEST_F(RspProbes, AFetchProgramIsEveryOpWithEndAfterThoseSent)
{
	EXPECT_EQ(ask("QVtice:probes:fetch:2:0100000000000000"	// ARG 0
		      "0308000000000000"),			// LOAD 8
		  "+" + frame("OK"));
	ASSERT_EQ(m.probe_ops.size(), (size_t)VTICE_FETCH_OPS_MAX);
	EXPECT_EQ(m.probe_ops[0], (Op{0, VTICE_VMCALL_PROBE_FETCH, 2, 0, 0x01}));
	EXPECT_EQ(m.probe_ops[1], (Op{0, VTICE_VMCALL_PROBE_FETCH, 2, 1, 0x0803}));
	EXPECT_EQ(m.probe_ops[31], (Op{0, VTICE_VMCALL_PROBE_FETCH, 2, 31, 0})) << "END";
	EXPECT_EQ(ask("QVtice:probes:fetch:2:01000000000000"), "+" + frame("E16")) << "not whole ops";
}

TEST_F(RspProbes, AddAndWatchGoPageByPage)
{
	EXPECT_EQ(ask("QVtice:probes:add:ffffffff81000004,1,0"), "+" + frame("OK"));
	EXPECT_EQ(ask("QVtice:probes:watch:ffff888000100ff0,20,1,0"), "+" + frame("OK"));
	EXPECT_EQ(m.probe_ops,
		  (std::vector<Op>{{0, VTICE_VMCALL_PROBE_ADD, 0xffffffff81000004, 0, 1},
				   {0, VTICE_VMCALL_PROBE_WATCH, 0xffff888000100ff0, 0, 0x10 | 1ull << 32},
				   {0, VTICE_VMCALL_PROBE_WATCH, 0xffff888000101000, 0, 0x10 | 1ull << 32}}));
	EXPECT_EQ(ask("QVtice:probes:watch:ffff888000100ff0,0,1,0"), "+" + frame("E16")) << "empty";
	EXPECT_EQ(ask("QVtice:probes:watch:ffff888000100000,1001,1,0"), "+" + frame("E16")) << "over 4 KiB";
	EXPECT_EQ(ask("QVtice:probes:watch:ffffffffffffffff,2,1,0"), "+" + frame("E16")) << "wraps";
}

// kstack read in one probe only: its points carry the flag, the others'
// hits copy no stack (vmcall.h, VTICE_VMCALL_PROBE_COPIES_STACK).
TEST_F(RspProbes, AStackOfOneOrZeroBecomesTheCopiesStackFlag)
{
	EXPECT_EQ(ask("QVtice:probes:add:ffffffff81000004,2,1"), "+" + frame("OK"));
	EXPECT_EQ(ask("QVtice:probes:watch:ffff888000100ff0,20,3,1"), "+" + frame("OK"));
	const uint64_t flag = VTICE_VMCALL_PROBE_COPIES_STACK;
	EXPECT_EQ(m.probe_ops,
		  (std::vector<Op>{{0, VTICE_VMCALL_PROBE_ADD, 0xffffffff81000004, 0, 2 | flag},
				   {0, VTICE_VMCALL_PROBE_WATCH, 0xffff888000100ff0, 0, 0x10 | 3ull << 32 | flag},
				   {0, VTICE_VMCALL_PROBE_WATCH, 0xffff888000101000, 0, 0x10 | 3ull << 32 | flag}}));
	m.probe_ops.clear();
	for (const char *bad : {"QVtice:probes:add:ffffffff81000004,0,2", "QVtice:probes:watch:ffff888000100ff0,8,1,2",
				"QVtice:probes:add:ffffffff81000004,8000000000000000,0",
				"QVtice:probes:watch:ffff888000100ff0,8,80000000,0"})
		EXPECT_EQ(ask(bad), "+" + frame("E16")) << bad << ": no other bit reaches R10's flag";
	EXPECT_TRUE(m.probe_ops.empty());
}

TEST_F(RspProbes, TheTargetsErrnoComesBack)
{
	m.probe_error = -16;
	EXPECT_EQ(ask("QVtice:probes:add:ffffffff81000004,0,0"), "+" + frame("E10"));
	EXPECT_EQ(ask("QVtice:probes:arm:0,0,0,00000000000000000000000000000000"), "+" + frame("E10"));
	EXPECT_EQ(m.probe_ops.size(), 2u) << "arm stops at its first refused step (CLEAR)";
}

TEST_F(RspProbes, OffClearsThenDropsTheIntercept)
{
	m.probe_hits = 0x1234;
	EXPECT_EQ(ask("QVtice:probes:off"), "+" + frame("OK"));
	EXPECT_EQ(m.probe_ops, (std::vector<Op>{{0, VTICE_VMCALL_PROBE_CLEAR, 0, 0, 0},
						{0, VTICE_VMCALL_PROBE_INTERCEPT, 0, 0, 0}}));
	EXPECT_EQ(ask("qVtice:probes"), "+" + frame("1234"));
	m.probe_passed_over = 0x56;
	EXPECT_EQ(ask("qVtice:probes:passed"), "+" + frame("56"));
	EXPECT_EQ(ask("qVtice:probes:passed:1"), "+" + frame("E16"));
	m.probes_removed = 2;
	EXPECT_EQ(ask("qVtice:probes:removed"), "+" + frame("2"));
	EXPECT_EQ(ask("qVtice:probes:removed:"), "+" + frame("E16"));
	EXPECT_EQ(ask("qVtice:tsc"), "+" + frame("249f00")) << "2.4 GHz in kHz";
}

TEST_F(RspProbes, CountsComeBackPerAddressInAddsOrder)
{
	EXPECT_EQ(ask("qVtice:probes:counts"), "+" + frame("")) << "no address armed";
	m.probe_counts = {3, 0, 0x1234};
	EXPECT_EQ(ask("qVtice:probes:counts"), "+" + frame("3,0,1234"));
	m.probe_counts.assign(VTICE_PROBES_MAX, ~0ull);	// the longest reply there can be
	std::string r = ask("qVtice:probes:counts");
	EXPECT_EQ(std::count(r.begin(), r.end(), ','), VTICE_PROBES_MAX - 1) << r.size();
	EXPECT_EQ(ask("qVtice:probes:countsx"), "+" + frame("E16"));
}

TEST_F(RspProbes, SumsComeBackPerAddressApartFromTheCounts)
{
	m.probe_counts = {3, 4};
	m.probe_sums = {0, 0xfffffffffffffff6ull};	// -10: sums wrap as two's complement
	EXPECT_EQ(ask("qVtice:probes:sums"), "+" + frame("0,fffffffffffffff6"));
	EXPECT_EQ(ask("qVtice:probes:counts"), "+" + frame("3,4"));
	EXPECT_EQ(ask("qVtice:probes:sums:1"), "+" + frame("E16"));
}

TEST_F(RspProbes, UnreadableReadsComeBackPerAddressApartFromTheCounts)
{
	m.probe_counts = {3, 4};
	m.probe_unreadable = {0, 4};
	EXPECT_EQ(ask("qVtice:probes:unreadable"), "+" + frame("0,4"));
	EXPECT_EQ(ask("qVtice:probes:counts"), "+" + frame("3,4"));
	EXPECT_EQ(ask("qVtice:probes:unreadable:0"), "+" + frame("E16"));
}

TEST_F(RspProbes, HistBucketsComeBackForOneAddressAllOfThem)
{
	m.probe_counts = {3, 4};
	m.probe_hists.resize(2);
	m.probe_hists[1][0] = 1;
	m.probe_hists[1][14] = 2;
	m.probe_hists[1][VTICE_FETCH_HIST_BUCKETS - 1] = ~0ull;	// the longest number there can be
	std::string want = "1";
	for (int b = 1; b < VTICE_FETCH_HIST_BUCKETS; b++)
		want += b == 14 ? ",2" : b == VTICE_FETCH_HIST_BUCKETS - 1 ? ",ffffffffffffffff" : ",0";
	EXPECT_EQ(ask("qVtice:probes:hist:1"), "+" + frame(want));
	EXPECT_EQ(ask("qVtice:probes:hist:2"), "+" + frame("E16")) << "no third address";
	EXPECT_EQ(ask("qVtice:probes:hist:"), "+" + frame("E16"));
	EXPECT_EQ(ask("qVtice:probes:hist:1,2"), "+" + frame("E16"));
	EXPECT_EQ(ask("qVtice:probes:hist:ffffffffffffffffff"), "+" + frame("E16")) << "past 64 bits";
}

TEST_F(RspProbes, KeyedSlotsComeBackForOneAddressWithTheKeysOfThoseCounting)
{
	m.probe_counts = {3};
	m.probe_keys.resize(1);
	m.probe_keys[0][0] = {{0x6f6270747673ull, 0}, 7, 0x1000};	// "vtprobe"'s first 6 bytes, say; a sum
	m.probe_keys[0][2] = {{~0ull, ~0ull}, ~0ull, ~0ull};		// the longest slot there can be
	std::string want = "7:6f6270747673:0:1000,0,ffffffffffffffff:ffffffffffffffff:ffffffffffffffff:ffffffffffffffff";
	for (int s = 3; s < VTICE_FETCH_KEYED_SLOTS; s++)
		want += ",0";
	EXPECT_EQ(ask("qVtice:probes:keys:0"), "+" + frame(want));
	EXPECT_EQ(ask("qVtice:probes:keys:1"), "+" + frame("E16")) << "no second address";
	EXPECT_EQ(ask("qVtice:probes:keys:"), "+" + frame("E16"));
}

TEST_F(RspProbes, TheSyscallTrapTakesItsFilterAndStringSlots)
{
	// pid 0x7b, comm "cat", slots: openat (257) copies argument 1's string (N = 2)
	EXPECT_EQ(ask("QVtice:syscalls:arm:7b,2101,0,63617400000000000000000000000000"), "+" + frame("OK"));
	EXPECT_TRUE(m.syscall_trap == (FakeMachine::SyscallTrap{true, 0x7b, "cat", 0x2101, 0}));
	m.syscalls_seen = 0x10;
	m.syscalls_recorded = 4;
	EXPECT_EQ(ask("qVtice:syscalls"), "+" + frame("2,10,4")) << "both CPUs armed";
	EXPECT_EQ(ask("QVtice:syscalls:off"), "+" + frame("OK"));
	EXPECT_FALSE(m.syscall_trap.on);
	EXPECT_EQ(ask("qVtice:syscalls"), "+" + frame("0,10,4"));
	EXPECT_TRUE(m.probe_ops.empty()) << "the trap is not the probes'";
}

// NRS: the 64 bytes of the set, eight little-endian words; read (0) and
// openat (257) chosen.
TEST_F(RspProbes, TheSyscallTrapTakesTheSyscallsItRecords)
{
	std::string nrs(128, '0');
	nrs[1] = '1';		// byte 0 = 0x01: syscall 0
	nrs[4 * 16 + 1] = '2';	// word 4's byte 0 = 0x02: syscall 4 * 64 + 1 = 257
	EXPECT_EQ(ask("QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000," + nrs), "+" + frame("OK"));
	EXPECT_EQ(m.syscall_trap.numbers, (std::vector<uint64_t>{1, 0, 0, 0, 2, 0, 0, 0}));
	EXPECT_EQ(ask("QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000"), "+" + frame("OK"));
	EXPECT_TRUE(m.syscall_trap.on);
	EXPECT_TRUE(m.syscall_trap.numbers.empty()) << "without NRS: every syscall";
	for (const std::string &bad : std::vector<std::string>{
		     "QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000," + nrs + "00",
		     "QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000," + nrs.substr(2),
		     "QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000,",
		     "QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000;" + nrs})
		EXPECT_EQ(ask(bad), "+" + frame("E16")) << bad;
}

TEST_F(RspProbes, ATrapTheKernelSideOwnsIsBusy)
{
	m.syscall_error = -16;
	EXPECT_EQ(ask("QVtice:syscalls:arm:0,0,0,00000000000000000000000000000000"), "+" + frame("E10"));
	EXPECT_FALSE(m.syscall_trap.on);
}

TEST_F(RspProbes, MalformedSyscallPacketsAreRefusedAndReachNothing)
{
	for (const char *bad :
	     {"QVtice:syscalls:arm:0,0,0,6261", "QVtice:syscalls:arm:100000000,0,0,00000000000000000000000000000000",
	      "QVtice:syscalls:arm:0,0,00000000000000000000000000000000",
	      "QVtice:syscalls:arm:0,0,0,61616161616161616161616161616161",	// comm without its NUL
	      "QVtice:syscalls:arm:0,0,0,0000000000000000000000000000000000", "QVtice:syscalls:offx",
	      "QVtice:syscalls:on", "qVtice:syscalls:1"})
		EXPECT_EQ(ask(bad), "+" + frame("E16")) << bad;
	EXPECT_FALSE(m.syscall_trap.on);
	EXPECT_TRUE(m.syscall_trap.comm.empty());
}

TEST_F(RspProbes, TheProfilerTakesItsRateStackAndFilter)
{
	// 99 Hz, 2 KiB of stack, pid 0x7b, comm "cat"
	EXPECT_EQ(ask("QVtice:profile:arm:63,800,7b,63617400000000000000000000000000"), "+" + frame("OK"));
	EXPECT_TRUE(m.profiler == (FakeMachine::Profiler{true, 99, 0x800, 0x7b, "cat"}));
	m.profile_samples = 0x1f;
	EXPECT_EQ(ask("qVtice:profile"), "+" + frame("2,1f")) << "both CPUs sampling";
	EXPECT_EQ(ask("QVtice:profile:off"), "+" + frame("OK"));
	EXPECT_FALSE(m.profiler.on);
	EXPECT_EQ(ask("qVtice:profile"), "+" + frame("0,1f"));
	EXPECT_TRUE(m.probe_ops.empty() && !m.syscall_trap.on) << "the profiler is neither the probes' nor the trap's";
}

TEST_F(RspProbes, AProfilerTheKernelSideRunsIsBusy)
{
	m.profile_error = -16;
	EXPECT_EQ(ask("QVtice:profile:arm:63,0,0,00000000000000000000000000000000"), "+" + frame("E10"));
	EXPECT_FALSE(m.profiler.on);
}

TEST_F(RspProbes, MalformedProfilePacketsAreRefusedAndReachNothing)
{
	for (const char *bad :
	     {"QVtice:profile:arm:63,0,0,6261", "QVtice:profile:arm:100000000,0,0,00000000000000000000000000000000",
	      "QVtice:profile:arm:63,100000000,0,00000000000000000000000000000000",
	      "QVtice:profile:arm:63,0,100000000,00000000000000000000000000000000",
	      "QVtice:profile:arm:63,0,00000000000000000000000000000000",
	      "QVtice:profile:arm:63,0,0,61616161616161616161616161616161",	// comm without its NUL
	      "QVtice:profile:offx", "QVtice:profile:on", "qVtice:profile:1", "qVtice:profilex"})
		EXPECT_EQ(ask(bad), "+" + frame("E16")) << bad;
	EXPECT_FALSE(m.profiler.on);
	EXPECT_TRUE(m.profiler.comm.empty());
}

TEST_F(RspProbes, MalformedArmingIsRefusedAndReachesNothing)
{
	for (const char *bad : {"QVtice:probes:arm:1,0,0,6261", "QVtice:probes:arm:100000000,0,0,"
			       "00000000000000000000000000000000", "QVtice:probes:add:1,2", "QVtice:probes:add:1,2,0,3",
			       "QVtice:probes:bogus", "QVtice:probes:offx", "QVtice:probes:fetch:1:zz"})
		EXPECT_EQ(ask(bad), "+" + frame("E16")) << bad;
	EXPECT_TRUE(m.probe_ops.empty());
}

TEST_F(RspProbes, ARingIsReadWholeAgainUntilItIsTaken)
{
	put_record(1, 0x2324247d2a2a2323ull, 0x7d7d7d7d7d7d7d7dull);	// bytes that travel escaped
	put_record(1, 2, 3);
	m.ring_lost[1] = 5;
	EXPECT_EQ(ask("qVtice:ring:1"), "+" + frame("2,5"));
	for (int pass = 0; pass < 2; pass++) {
		std::string doc;
		for (unsigned off = 0; off < 4096;) {
			char q[64];
			std::snprintf(q, sizeof(q), "qXfer:vtice-ring:read:1:%x,%x", off, 7u);
			std::string r = ask(q);
			ASSERT_GE(r.size(), 5u) << r;
			std::string plain = unescape(r.substr(3, r.size() - 6));
			doc += plain;
			off += plain.size();
			if (r[2] == 'l')
				break;
		}
		ASSERT_EQ(doc.size(), 2 * sizeof(vtice_record)) << "pass " << pass;
		EXPECT_EQ(std::memcmp(doc.data(), &m.ring[1][0], sizeof(vtice_record)), 0);
		EXPECT_EQ(std::memcmp(doc.data() + sizeof(vtice_record), &m.ring[1][1], sizeof(vtice_record)), 0);
	}
	EXPECT_EQ(ask("QVtice:ring:consume:1,1"), "+" + frame("OK"));
	EXPECT_EQ(ask("qVtice:ring:1"), "+" + frame("1,5"));
	EXPECT_EQ(ask("QVtice:ring:consume:1,10"), "+" + frame("OK")) << "taking more than there is takes all";
	EXPECT_EQ(ask("qXfer:vtice-ring:read:1:0,100"), "+" + frame("l"));
	EXPECT_EQ(ask("qVtice:ring:2"), "+" + frame("E16")) << "no CPU 2";
	EXPECT_EQ(ask("QVtice:ring:consume:0"), "+" + frame("E16"));
}

TEST_F(RspProbes, AStubWithoutProbesDoesNotKnowThePackets)
{
	vt_dbg_target_ops none = FakeMachine::ops;
	none.probe_op = nullptr;
	vt_rsp_init(&rsp, &none, &m, [](void *, u8 b) { g_out += (char)b; });
	EXPECT_EQ(ask("qSupported").find("QVtice"), std::string::npos);
	EXPECT_EQ(ask("QVtice:probes:off"), "+" + frame(""));
	EXPECT_EQ(ask("qVtice:ring:0"), "+" + frame(""));
	EXPECT_EQ(ask("QVtice:syscalls:off"), "+" + frame(""));
	EXPECT_EQ(ask("qVtice:syscalls"), "+" + frame(""));
}
