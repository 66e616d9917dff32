// The console against a stub that behaves as the kernel's kgdb does
// (kernel/debug/gdbstub.c and arch/x86/include/asm/kgdb.h of Linux 6.1):
// no qSupported, no target description, a 'g' block of 17 64-bit and 5
// 32-bit registers, 'p' for the rest, shadow threads -(cpu + 2) named
// "shadowCPU<n>", a 1024-byte packet buffer. Real kgdb cannot run here:
// Debian's kernel is built without CONFIG_KGDB (docs/debugger.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "fake_stub.hpp"
#include "rsp/rsp_target.hpp"

using namespace vtice::dbg;
using namespace vtice::dbg::rsp;
using vtice::dbg::test::FakeStub;

namespace {

constexpr std::uint64_t kRip = 0xffffffff81001234ull;
constexpr std::size_t kKgdbBufferBytes = 1024;  // BUFMAX on x86

std::string le_hex(std::uint64_t value, int bytes)
{
	std::string out;
	char pair[3];
	for (int i = 0; i < bytes; i++) {
		std::snprintf(pair, sizeof(pair), "%02x", static_cast<unsigned>((value >> (8 * i)) & 0xff));
		out += pair;
	}
	return out;
}

std::string ascii_hex(const std::string &text)
{
	std::string out;
	char pair[3];
	for (unsigned char c : text) {
		std::snprintf(pair, sizeof(pair), "%02x", c);
		out += pair;
	}
	return out;
}

// rax = 1, rbx = 2, ... r15 = 16, rip; eflags, cs, ss, ds, es.
std::string kgdb_g_block()
{
	std::string out;
	for (int i = 1; i <= 16; i++)
		out += le_hex(static_cast<std::uint64_t>(i), 8);
	out += le_hex(kRip, 8);
	for (std::uint64_t v : {0x246ull, 0x10ull, 0x18ull, 0ull, 0ull})
		out += le_hex(v, 4);
	return out;
}

std::string reply(const std::string &payload) { return "+" + FakeStub::packet(payload); }

FakeStub::Script kgdb_like()
{
	return [](const std::string &p) -> std::string {
		if (p == "?")
			return reply("S05");
		if (p == "g")
			return reply(kgdb_g_block());
		if (p == "p16")  // fs (register 22)
			return reply(le_hex(0, 4));
		if (p == "p17")  // gs
			return reply(le_hex(0, 4));
		if (p[0] == 'p')
			return reply("E22");
		if (p == "qfThreadInfo")
			return reply("mfffffffe,fffffffd,00000001,00000002");
		if (p == "qsThreadInfo")
			return reply("");
		if (p == "qThreadExtraInfo,fffffffe")
			return reply(ascii_hex("shadowCPU0"));
		if (p == "qC")
			return reply("QCfffffffe");
		if (p[0] == 'm') {
			unsigned long long address = 0, length = 0;
			std::sscanf(p.c_str() + 1, "%llx,%llx", &address, &length);
			if (length * 2 >= kKgdbBufferBytes)
				return reply("E22");
			return reply(std::string(length * 2, 'c'));
		}
		if (p == "D" || p.rfind("Hg", 0) == 0 || p.rfind("Hc", 0) == 0)
			return reply("OK");
		return reply("");  // qSupported, vCont?, qRcmd without kdb, qqemu.*
	};
}

ClientOptions quick()
{
	ClientOptions o;
	o.reply_timeout_ms = 500;
	return o;
}

}  // namespace

TEST(KgdbStub, IsIdentifiedAndUsesGdbsDefaultLayout)
{
	FakeStub stub(kgdb_like());
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	EXPECT_EQ((*target)->features().stub, "kgdb");
	EXPECT_FALSE((*target)->features().target_description);
	EXPECT_NE((*target)->describe().find("(kgdb)"), std::string::npos);
}

TEST(KgdbStub, RegistersFromTheShortGBlockAndP)
{
	FakeStub stub(kgdb_like());
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	auto regs = (*target)->read_registers();
	ASSERT_TRUE(regs.ok()) << regs.error().message;
	const RegisterLayout &layout = (*target)->layout();
	EXPECT_EQ(*regs->get(*layout.find("rip")), kRip);
	EXPECT_EQ(*regs->get(*layout.find("rax")), 1u);
	EXPECT_EQ(*regs->get(*layout.find("r15")), 16u);
	EXPECT_EQ(*regs->get(*layout.find("eflags")), 0x246u);
	EXPECT_EQ(*regs->get(*layout.find("cs")), 0x10u);
	// fs and gs lie past kgdb's 156-byte block: they must come from 'p'.
	auto sent = stub.received();
	EXPECT_NE(std::find(sent.begin(), sent.end(), "p16"), sent.end());
	EXPECT_NE(std::find(sent.begin(), sent.end(), "p17"), sent.end());
}

TEST(KgdbStub, ShadowCpuThreadsAreNegative)
{
	FakeStub stub(kgdb_like());
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	auto threads = (*target)->threads();
	ASSERT_TRUE(threads.ok()) << threads.error().message;
	EXPECT_EQ(*threads, (std::vector<int>{-2, -3, 1, 2}));
	EXPECT_TRUE((*target)->select_thread(-3).ok());
	auto sent = stub.received();
	EXPECT_EQ(sent.back(), "Hgfffffffd");
}

TEST(KgdbStub, MemoryReadsFitItsBuffer)
{
	FakeStub stub(kgdb_like());
	auto target = RspTarget::connect(stub.client_transport(), quick());
	ASSERT_TRUE(target.ok()) << target.error().message;
	auto bytes = (*target)->read_memory(0xffffffff81000000ull, 4096);
	ASSERT_TRUE(bytes.ok()) << bytes.error().message;
	EXPECT_EQ(bytes->size(), 4096u);
	EXPECT_EQ((*bytes)[0], 0xcc);
}
