// The RSP client against a scripted fake stub: bad checksums, NAKs,
// truncated and oversized replies, disconnects and unknown stop replies must
// give a clear error and leave the client (or target) usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <memory>
#include <thread>
#include <unistd.h>

#include "fake_stub.hpp"
#include "rsp/client.hpp"
#include "rsp/rsp_target.hpp"
#include "vtice/interrupts.hpp"

using namespace vtice::dbg;
using namespace vtice::dbg::rsp;
using vtice::dbg::test::FakeStub;

namespace {

ClientOptions quick()
{
	ClientOptions o;
	o.reply_timeout_ms = 500;
	return o;
}

// Answers the packets RspTarget::connect sends, then defers to extra.
FakeStub::Script minimal_stub(std::function<std::string(const std::string &)> extra)
{
	return [extra](const std::string &p) -> std::string {
		if (p.rfind("qSupported", 0) == 0)
			return "+" + FakeStub::packet("PacketSize=100;qXfer:features:read+;multiprocess+");
		if (p.rfind("qXfer:features:read:target.xml:", 0) == 0)
			return "+" + FakeStub::packet("l<target><reg name=\"rip\" bitsize=\"64\"/>"
						      "<reg name=\"rsp\" bitsize=\"64\"/></target>");
		if (p == "vCont?")
			return "+" + FakeStub::packet("vCont;c;C;s;S");
		if (p == "qqemu.PhyMemMode")
			return "+" + FakeStub::packet("");
		return extra(p);
	};
}

}  // namespace

TEST(RspClient, RetransmitsAfterNak)
{
	std::atomic<int> seen{0};
	FakeStub stub([&](const std::string &p) -> std::string {
		if (p == "-")
			return "";
		if (seen++ == 0)
			return "-";  // reject the first copy
		return "+" + FakeStub::packet("OK");
	});
	Client client(stub.client_transport(), quick());
	auto reply = client.request("Z0,1000,1");
	ASSERT_TRUE(reply.ok()) << reply.error().message;
	EXPECT_EQ(*reply, "OK");
	EXPECT_EQ(client.stats().naks_received, 1u);
	EXPECT_EQ(stub.received().size(), 2u);
}

TEST(RspClient, GivesUpAfterRepeatedNaks)
{
	FakeStub stub([](const std::string &p) -> std::string { return p == "-" ? "" : "-"; });
	Client client(stub.client_transport(), quick());
	auto reply = client.request("g");
	ASSERT_FALSE(reply.ok());
	EXPECT_NE(reply.error().message.find("NAK"), std::string::npos);
}

TEST(RspClient, NaksBadChecksumAndAcceptsTheRetry)
{
	FakeStub stub([](const std::string &p) -> std::string {
		if (p == "-")
			return FakeStub::packet("1234");
		return "+$1234#00";  // wrong checksum first
	});
	Client client(stub.client_transport(), quick());
	auto reply = client.request("m0,2");
	ASSERT_TRUE(reply.ok()) << reply.error().message;
	EXPECT_EQ(*reply, "1234");
	EXPECT_EQ(client.stats().naks_sent, 1u);
	EXPECT_EQ(stub.naks_received(), 1);
}

TEST(RspClient, PersistentlyCorruptReplyIsAnError)
{
	FakeStub stub([](const std::string &) -> std::string { return "+$1234#00"; });
	Client client(stub.client_transport(), quick());
	auto reply = client.request("m0,2");
	ASSERT_FALSE(reply.ok());
	EXPECT_NE(reply.error().message.find("checksum"), std::string::npos);
	EXPECT_TRUE(client.connected());
}

TEST(RspClient, TruncatedReplyTimesOutThenRecovers)
{
	std::atomic<int> n{0};
	FakeStub stub([&](const std::string &p) -> std::string {
		if (p == "-")
			return "";
		if (n++ == 0)
			return "+$12";  // never finished
		return "#9a" + std::string("+") + FakeStub::packet("OK");
	});
	Client client(stub.client_transport(), quick());
	auto first = client.request("m0,2");
	ASSERT_FALSE(first.ok());
	EXPECT_NE(first.error().message.find("no reply"), std::string::npos);
	// The stub finishes the old packet (bad checksum) and answers the new one.
	auto second = client.request("?");
	ASSERT_TRUE(second.ok()) << second.error().message;
	EXPECT_EQ(*second, "OK");
}

TEST(RspClient, OversizedReplyIsRejected)
{
	ClientOptions o = quick();
	o.max_payload = 64;
	FakeStub stub([](const std::string &p) -> std::string {
		return p == "-" ? "" : "+" + FakeStub::packet(std::string(200, 'a'));
	});
	Client client(stub.client_transport(), o);
	auto reply = client.request("g");
	ASSERT_FALSE(reply.ok());
	EXPECT_NE(reply.error().message.find("longer than 64"), std::string::npos);
	EXPECT_FALSE(client.send(std::string(100, 'x')).ok());
}

TEST(RspClient, DisconnectMidReplyIsReported)
{
	FakeStub stub([](const std::string &) -> std::string { return "+$00112233<close>"; });
	Client client(stub.client_transport(), quick());
	auto reply = client.request("g");
	ASSERT_FALSE(reply.ok());
	EXPECT_NE(reply.error().message.find("closed the connection"), std::string::npos);
	EXPECT_NE(reply.error().message.find("middle of a reply"), std::string::npos);
	EXPECT_FALSE(client.connected());
	auto again = client.request("?");
	ASSERT_FALSE(again.ok());
	EXPECT_NE(again.error().message.find("closed"), std::string::npos);
}

TEST(RspClient, ConsoleOutputAndGarbageAreSkipped)
{
	FakeStub stub([](const std::string &) -> std::string {
		return "+junk\r\n" + FakeStub::packet("O68690a") + FakeStub::packet("OK");
	});
	Client client(stub.client_transport(), quick());
	std::string console;
	client.set_console([&](std::string_view text) { console.append(text); });
	auto reply = client.request("qRcmd,68");
	ASSERT_TRUE(reply.ok()) << reply.error().message;
	EXPECT_EQ(*reply, "OK");
	EXPECT_EQ(console, "hi\n");
	EXPECT_EQ(client.stats().garbage_bytes, 6u);
}

TEST(RspClient, RunLengthReplyIsExpanded)
{
	FakeStub stub([](const std::string &) -> std::string { return "+$0* #5a"; });
	// checksum of "0* " = 0x30 + 0x2a + 0x20 = 0x7a
	Client client(stub.client_transport(), quick());
	auto reply = client.request("m0,2");
	ASSERT_FALSE(reply.ok());  // 0x5a is wrong on purpose: NAK, no retry answer
	FakeStub good([](const std::string &) -> std::string { return "+$0* #7a"; });
	Client client2(good.client_transport(), quick());
	auto ok = client2.request("m0,2");
	ASSERT_TRUE(ok.ok()) << ok.error().message;
	EXPECT_EQ(*ok, "0000");
}

TEST(RspTargetFake, UnknownStopReplyKeepsTargetUsable)
{
	std::atomic<int> conts{0};
	FakeStub stub(minimal_stub([&](const std::string &p) -> std::string {
		if (p == "vCont;c")
			return "+" + FakeStub::packet("Q05") + FakeStub::packet("T05thread:p01.01;swbreak:;");
		if (p == "g")
			return "+" + FakeStub::packet("00100081ffffffff0000000000000000");
		return "+" + FakeStub::packet("");
	}));
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	ASSERT_TRUE((*target)->resume(ResumeAction::Continue).ok());
	auto bad = (*target)->wait_stop(500);
	ASSERT_FALSE(bad.ok());
	EXPECT_NE(bad.error().message.find("unknown stop reply 'Q05'"), std::string::npos);
	auto good = (*target)->wait_stop(500);
	ASSERT_TRUE(good.ok()) << good.error().message;
	ASSERT_TRUE(good->has_value());
	EXPECT_TRUE((*good)->swbreak);
	auto regs = (*target)->read_registers();
	ASSERT_TRUE(regs.ok()) << regs.error().message;
	EXPECT_EQ(*regs->get(*(*target)->layout().find("rip")), 0xffffffff81001000ull);
}

TEST(RspTargetFake, MemoryErrorsAndUnsupportedPackets)
{
	FakeStub stub(minimal_stub([](const std::string &p) -> std::string {
		if (p.rfind("m", 0) == 0)
			return "+" + FakeStub::packet("E14");
		if (p.rfind("Z1", 0) == 0)
			return "+" + FakeStub::packet("");
		if (p == "g")
			return "+" + FakeStub::packet("zz");
		return "+" + FakeStub::packet("");
	}));
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	auto mem = (*target)->read_memory(0xffffffff81000000ull, 16);
	ASSERT_FALSE(mem.ok());
	EXPECT_NE(mem.error().message.find("0xffffffff81000000"), std::string::npos);
	auto z1 = (*target)->insert_breakpoint(BreakKind::Hardware, 0x1000, 1);
	ASSERT_FALSE(z1.ok());
	EXPECT_NE(z1.error().message.find("not supported"), std::string::npos);
	auto regs = (*target)->read_registers();
	ASSERT_FALSE(regs.ok());
	EXPECT_NE(regs.error().message.find("malformed 'g' reply"), std::string::npos);
}

// A stub that does not offer ReverseStep+/ReverseContinue+ is never sent
// bs or bc; the error says how to get a target that runs backwards.
TEST(RspTargetFake, ReverseActionsNeedAStubThatOffersThem)
{
	FakeStub stub(minimal_stub([](const std::string &) -> std::string { return "+" + FakeStub::packet(""); }));
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	EXPECT_FALSE((*target)->features().reverse);
	auto back = (*target)->resume(ResumeAction::ReverseStep);
	ASSERT_FALSE(back.ok());
	EXPECT_NE(back.error().message.find("cannot run backwards"), std::string::npos);
	for (const std::string &p : stub.received())
		EXPECT_TRUE(p != "bs" && p != "bc") << p;
}

TEST(RspTargetFake, ReverseActionsAreBsAndBc)
{
	FakeStub stub([](const std::string &p) -> std::string {
		if (p.rfind("qSupported", 0) == 0)
			return "+" + FakeStub::packet("PacketSize=100;ReverseStep+;ReverseContinue+");
		if (p == "bs" || p == "bc")
			return "+" + FakeStub::packet("T05replaylog:begin;");
		return "+" + FakeStub::packet("");
	});
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	EXPECT_TRUE((*target)->features().reverse);
	ASSERT_TRUE((*target)->resume(ResumeAction::ReverseContinue).ok());
	auto stop = (*target)->wait_stop(2000);
	ASSERT_TRUE(stop.ok() && stop->has_value());
	EXPECT_EQ((**stop).replay_log, "begin");
	auto received = stub.received();
	EXPECT_NE(std::find(received.begin(), received.end(), "bc"), received.end());
}

TEST(RspTransport, BadTargetsAreClearErrors)
{
	auto spec = connect_transport("no-port-here");
	ASSERT_FALSE(spec.ok());
	EXPECT_NE(spec.error().message.find("not host:port, tcp:host:port, unix:PATH or /dev/"), std::string::npos);
	auto port = connect_transport("localhost:65536");
	ASSERT_FALSE(port.ok());
	EXPECT_NE(port.error().message.find("not a number in 1..65535"), std::string::npos);
	auto missing = connect_transport("unix:/nonexistent/vtice.sock");
	ASSERT_FALSE(missing.ok());
	EXPECT_NE(missing.error().message.find("unix:/nonexistent/vtice.sock"), std::string::npos);
	auto tty = connect_transport("/dev/nonexistent-tty");
	ASSERT_FALSE(tty.ok());
	EXPECT_NE(tty.error().message.find("cannot open /dev/nonexistent-tty"), std::string::npos);
}

TEST(RspTransport, InterruptReachesTheStubWhileWaiting)
{
	std::atomic<bool> interrupted{false};
	FakeStub stub(minimal_stub([&](const std::string &p) -> std::string {
		if (p == "\x03") {
			interrupted = true;
			return FakeStub::packet("T02thread:p01.01;");
		}
		if (p == "vCont;c")
			return "+";  // runs until interrupted
		return "+" + FakeStub::packet("");
	}));
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	ASSERT_TRUE((*target)->resume(ResumeAction::Continue).ok());
	auto none = (*target)->wait_stop(50);
	ASSERT_TRUE(none.ok());
	EXPECT_FALSE(none->has_value());  // still running
	std::thread other([&] { (void)(*target)->interrupt(); });
	auto stop = (*target)->wait_stop(2000);
	other.join();
	ASSERT_TRUE(stop.ok()) << stop.error().message;
	ASSERT_TRUE(stop->has_value());
	EXPECT_EQ((*stop)->signal, 2);
	EXPECT_TRUE(interrupted);
}

TEST(RspTargetFake, NoAckModeBinaryReadAndWrite)
{
	// Offers no-ack mode, 'x' reads (binary-upload) and 'X' writes; after
	// QStartNoAckMode neither side sends '+'.
	std::atomic<bool> no_ack{false};
	std::string written;
	FakeStub stub([&](const std::string &p) -> std::string {
		std::string ack = no_ack ? "" : "+";
		if (p.rfind("qSupported", 0) == 0)
			return ack + FakeStub::packet("PacketSize=1000;qXfer:features:read+;QStartNoAckMode+;binary-upload+");
		if (p == "QStartNoAckMode") {
			no_ack = true;
			return "+" + FakeStub::packet("OK");  // the ack of this packet is the last one
		}
		if (p.rfind("qXfer:features:read:target.xml:", 0) == 0)
			return ack + FakeStub::packet("l<target><reg name=\"rip\" bitsize=\"64\"/></target>");
		if (p.rfind("x1000,", 0) == 0)
			return ack + FakeStub::packet(std::string("b\x24\x23\x7d\x2a\x00", 6));  // '$#}*' + NUL, escaped on the wire
		if (p.rfind("X1000,0:", 0) == 0)
			return ack + FakeStub::packet("OK");
		if (p.rfind("X1000,", 0) == 0) {
			written = p.substr(p.find(':') + 1);
			return ack + FakeStub::packet("OK");
		}
		return ack + FakeStub::packet("");
	});
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	EXPECT_TRUE((*target)->features().no_ack);
	EXPECT_TRUE((*target)->features().binary_read);
	auto bytes = (*target)->read_memory(0x1000, 5);
	ASSERT_TRUE(bytes.ok()) << bytes.error().message;
	EXPECT_EQ(*bytes, (std::vector<std::uint8_t>{'$', '#', '}', '*', 0}));
	ASSERT_TRUE((*target)->write_memory(0x1000, {'}', '$', 0x90}).ok());
	EXPECT_TRUE((*target)->features().binary_write);
	// The fake stub's FrameReader keeps escapes; unescaped they are the bytes.
	auto plain = unescape_binary(written);
	ASSERT_TRUE(plain.ok());
	EXPECT_EQ(*plain, (std::vector<std::uint8_t>{'}', '$', 0x90}));
	EXPECT_EQ(written.size(), 5u);  // two bytes needed escaping
}

// Issue 22: garbage or stale packets that keep coming must not extend the
// wait for an acknowledgement (each frame used to restart it).
TEST(RspClient, GarbageDoesNotExtendTheAckDeadline)
{
	std::atomic<bool> stop{false};
	FakeStub stub([&](const std::string &p) -> std::string {
		if (p != "?")
			return "";
		std::string junk;
		for (int i = 0; i < 40 && !stop; i++)
			junk += FakeStub::packet("S05") + std::string(64, '\0');
		return junk;
	});
	ClientOptions options;
	options.reply_timeout_ms = 300;
	Client client(stub.client_transport(), options);
	auto start = std::chrono::steady_clock::now();
	auto reply = client.request("?");
	auto waited = std::chrono::steady_clock::now() - start;
	stop = true;
	ASSERT_FALSE(reply.ok());
	EXPECT_NE(reply.error().message.find("no acknowledgement"), std::string::npos) << reply.error().message;
	EXPECT_LT(waited, std::chrono::milliseconds(1500));
}

namespace {

// A stub that answers the first read late: with the reply to the next
// request, before that request's ack (late_before_ack) or after it.
FakeStub::Script late_reply_stub(bool late_before_ack)
{
	auto count = std::make_shared<int>(0);
	return [count, late_before_ack](const std::string &p) -> std::string {
		if (p == "-" || p == "\x03")
			return "";
		if ((*count)++ == 0)
			return "+";  // the reply to the first request never comes in time
		std::string late = FakeStub::packet("11111111");
		std::string right = FakeStub::packet("22222222");
		return late_before_ack ? late + "+" + right : "+" + late + right;
	};
}

}  // namespace

// A request given up on (here by Ctrl-C) owes its reply: when it comes late,
// it is skipped, never taken as the reply to the next request.
TEST(RspClient, AReplyGivenUpOnIsNotTakenForTheNext)
{
	for (bool before_ack : {false, true}) {
		vtice::interrupts::reset_for_tests();
		vtice::interrupts::begin_command(-1);
		FakeStub stub(late_reply_stub(before_ack));
		Client client(stub.client_transport(), quick());
		vtice::interrupts::raise_ctrl_c();
		auto first = client.request("m1000,4");
		ASSERT_FALSE(first.ok());
		EXPECT_NE(first.error().message.find("interrupted (Ctrl-C)"), std::string::npos) << first.error().message;
		auto second = client.request("m2000,4");
		ASSERT_TRUE(second.ok()) << second.error().message;
		EXPECT_EQ(*second, "22222222") << (before_ack ? "late reply before the ack" : "late reply after the ack");
	}
	vtice::interrupts::reset_for_tests();
}

// Ctrl-C lets a reply that is about to come finish: only a wait longer than
// the patience is given up.
TEST(RspClient, CtrlCWaitsOutAQuickReply)
{
	vtice::interrupts::reset_for_tests();
	vtice::interrupts::begin_command(-1);
	FakeStub stub([](const std::string &p) -> std::string {
		if (p == "-")
			return "";
		return "+" + FakeStub::packet("OK");
	});
	Client client(stub.client_transport(), quick());
	vtice::interrupts::raise_ctrl_c();
	auto reply = client.request("?");
	ASSERT_TRUE(reply.ok()) << reply.error().message;
	EXPECT_TRUE(vtice::interrupts::ctrl_c_pending()) << "the Ctrl-C is left for the command to act on";
	vtice::interrupts::reset_for_tests();
}

TEST(RspTransport, TargetSpecsAreCheckedBeforeAnythingOpens)
{
	struct Case {
		const char *text, *error;
	} bad[] = {{"", "empty"}, {"unix:", "names no socket"}, {"localhost: 1234", "blank"},
		   {"localhost:0", "1..65535"}, {"localhost:99999", "1..65535"}, {"localhost:12a", "1..65535"},
		   {"host:", "not host:port"}};
	for (const auto &c : bad) {
		auto spec = parse_target_spec(c.text);
		ASSERT_FALSE(spec.ok()) << c.text;
		EXPECT_NE(spec.error().message.find(c.error), std::string::npos) << c.text << ": " << spec.error().message;
	}
	auto v6 = parse_target_spec("[::1]:1234");
	ASSERT_TRUE(v6.ok());
	EXPECT_EQ(v6->host, "::1");
	EXPECT_EQ(v6->port, "1234");
	auto local = parse_target_spec(":1234");
	ASSERT_TRUE(local.ok());
	EXPECT_EQ(local->host, "127.0.0.1");
	EXPECT_EQ(parse_target_spec("unix:/run/s")->kind, TargetSpec::Kind::Unix);
	EXPECT_EQ(parse_target_spec("/dev/ttyS0")->kind, TargetSpec::Kind::Path);
}

// A regular file or directory named as the target is never opened for
// writing: the bytes of a kernel image survive `vtice attach IMAGE`.
TEST(RspTransport, ARegularFileIsNotASerialLine)
{
	char path[] = "/tmp/vtice-target-XXXXXX";
	int fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "MZ\x90\x00", 4), 4);
	close(fd);
	auto file = connect_transport(path);
	ASSERT_FALSE(file.ok());
	EXPECT_NE(file.error().message.find("regular file"), std::string::npos) << file.error().message;
	char bytes[8] = {};
	fd = open(path, O_RDONLY);
	ASSERT_EQ(read(fd, bytes, sizeof(bytes)), 4);
	close(fd);
	unlink(path);
	EXPECT_EQ(std::string(bytes, 4), std::string("MZ\x90\x00", 4));
	auto dir = connect_transport("/tmp");
	ASSERT_FALSE(dir.ok());
	EXPECT_NE(dir.error().message.find("directory"), std::string::npos) << dir.error().message;
}
