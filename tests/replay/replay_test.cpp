// The replay engine, the recording's file chunks and the replay stub, on
// recordings built here by hand: every expected value below follows from
// the steps as written, not from running the code under test.
#include <gtest/gtest.h>

#include <cstring>

#include "navigation.hpp"
#include "recording.hpp"
#include "rsp/packet.hpp"
#include "replay_engine.hpp"
#include "rsp_server.hpp"
#include "trace_file.hpp"

namespace vtice::replay {
namespace {

std::vector<std::uint8_t> le64(std::uint64_t v)
{
	std::vector<std::uint8_t> out(8);
	std::memcpy(out.data(), &v, 8);
	return out;
}

// Registers rax, rip, rsp. Step 0 writes aa->bb at 0x3000; step 1 sets
// rax = 5 and reads 0x3000; step 2 writes bb->cc at 0x3000 and leaves an
// exception frame's bytes 11 22 at 0x4000 whose old bytes are unknown.
Recording three_steps()
{
	Recording r;
	r.registers = {{"rax", 64, "int64", "general"}, {"rip", 64, "code_ptr", "general"},
		       {"rsp", 64, "data_ptr", "general"}};
	for (std::uint64_t v : {1ull, 0x1000ull, 0x2000ull})
		for (std::uint8_t b : le64(v))
			r.initial.push_back(b);
	std::vector<std::uint8_t> stack(16);
	for (int i = 0; i < 16; i++)
		stack[i] = static_cast<std::uint8_t>(i);
	r.memory.push_back({0x2000, stack});
	std::vector<std::uint8_t> aa(4, 0xaa), bb(4, 0xbb), cc(4, 0xcc);
	Step s0, s1, s2;
	s0.registers.push_back({1, le64(0x1003)});
	s0.memory.push_back({AccessKind::Write, 0x3000, aa, bb});
	s1.registers.push_back({0, le64(5)});
	s1.registers.push_back({1, le64(0x1006)});
	s1.memory.push_back({AccessKind::Read, 0x3000, bb, {}});
	s2.registers.push_back({1, le64(0x1009)});
	s2.memory.push_back({AccessKind::Write, 0x3000, bb, cc});
	s2.memory.push_back({AccessKind::WriteUnknownOld, 0x4000, {}, {0x11, 0x22}});
	r.steps = {s0, s1, s2};
	return r;
}

// A REP string instruction steps once per iteration with the pc standing
// still; the trace's instruction clock counts it once, when the pc moves on.
TEST(Replay, InstructionClockCountsARepInstructionOnce)
{
	Recording r;
	r.registers = {{"rip", 64, "code_ptr", "general"}};
	r.initial = le64(0x1000);
	for (std::uint64_t next : {0x1002ull, 0x1002ull, 0x1002ull, 0x1004ull, 0x1008ull}) {
		Step step;
		if (next != 0x1002 || r.steps.empty())
			step.registers.push_back({0, le64(next)});
		r.steps.push_back(step);
	}
	Replay replay(std::move(r));
	const std::uint64_t want[] = {0, 1, 1, 1, 2, 3};
	for (std::size_t k = 0; k <= replay.steps(); k++)
		EXPECT_EQ(replay.instructions_at(k), want[k]) << "position " << k;
}

TEST(Replay, RegistersAtEveryPosition)
{
	Replay replay(three_steps());
	ASSERT_EQ(replay.steps(), 3u);
	const std::uint64_t rax[] = {1, 1, 5, 5}, rip[] = {0x1000, 0x1003, 0x1006, 0x1009};
	for (std::size_t k : {3u, 0u, 2u, 1u, 3u}) {
		replay.seek(k);
		EXPECT_EQ(replay.reg("rax"), rax[k]) << k;
		EXPECT_EQ(replay.reg("rip"), rip[k]) << k;
		EXPECT_EQ(replay.pc_at(k), rip[k]);
		EXPECT_EQ(replay.reg("rsp"), 0x2000u);
	}
	EXPECT_FALSE(replay.reg("rbx"));
}

TEST(Replay, MemoryAsItWasAndNothingGuessed)
{
	Replay replay(three_steps());
	auto at = [&](std::size_t k, std::uint64_t address, std::size_t len) {
		replay.seek(k);
		return replay.read(address, len);
	};
	EXPECT_EQ(at(0, 0x3000, 4), std::vector<std::uint8_t>(4, 0xaa));  // the first write's old bytes
	EXPECT_EQ(at(1, 0x3000, 4), std::vector<std::uint8_t>(4, 0xbb));
	EXPECT_EQ(at(2, 0x3000, 4), std::vector<std::uint8_t>(4, 0xbb));
	EXPECT_EQ(at(3, 0x3000, 4), std::vector<std::uint8_t>(4, 0xcc));
	EXPECT_EQ(at(3, 0x4000, 2), (std::vector<std::uint8_t>{0x11, 0x22}));
	EXPECT_TRUE(at(2, 0x4000, 2).empty()) << "the old bytes of an exception frame are not known";
	EXPECT_EQ(at(1, 0x2000, 16).size(), 16u);
	EXPECT_EQ(at(1, 0x200e, 4), (std::vector<std::uint8_t>{14, 15})) << "a read stops at the first unknown byte";
	EXPECT_TRUE(at(0, 0x5000, 1).empty());
}

TEST(Replay, WhoWroteAnAddress)
{
	Replay replay(three_steps());
	EXPECT_EQ(replay.last_write(0x3000, 4, 3), 2u);
	EXPECT_EQ(replay.last_write(0x3002, 1, 2), 0u);
	EXPECT_FALSE(replay.last_write(0x3000, 4, 0));
	EXPECT_FALSE(replay.last_write(0x2000, 16, 3));
	EXPECT_TRUE(replay.step_writes(0, 0x3003, 8));
	EXPECT_FALSE(replay.step_writes(1, 0x3000, 4));
	EXPECT_TRUE(replay.step_reads(1, 0x2ffd, 4));
}

TEST(Replay, SeeksAcrossCheckpointsBothWays)
{
	Recording r = three_steps();
	r.steps.clear();
	for (std::uint64_t i = 1; i <= 5000; i++) {
		Step s;
		s.registers.push_back({0, le64(i * 7)});
		r.steps.push_back(s);
	}
	Replay replay(std::move(r));
	for (std::size_t k : {4999u, 5u, 2048u, 2047u, 5000u, 0u, 1025u, 1024u, 3333u}) {
		replay.seek(k);
		EXPECT_EQ(replay.reg("rax"), k ? k * 7 : 1) << k;
	}
	replay.seek(99999);
	EXPECT_EQ(replay.position(), 5000u);
}

TEST(ReplayFile, RoundTripMakesAVersion2File)
{
	trace::TraceWriter writer(trace::TraceHeader{});
	add_recording(writer, three_steps());
	auto bytes = writer.finish();
	EXPECT_EQ(bytes[8] | bytes[9] << 8, 2) << "a file with a recording is format version 2";
	auto data = trace::read_trace(bytes);
	ASSERT_TRUE(data);
	ASSERT_FALSE(data->error) << data->error->message;
	auto loaded = load_recording(*data);
	ASSERT_TRUE(loaded) << loaded.error().message;
	Recording want = three_steps();
	ASSERT_EQ(loaded->steps.size(), want.steps.size());
	EXPECT_EQ(loaded->initial, want.initial);
	EXPECT_EQ(loaded->registers.size(), 3u);
	EXPECT_EQ(loaded->registers[1].type, "code_ptr");
	EXPECT_EQ(loaded->steps[2].memory[1].after, want.steps[2].memory[1].after);
	EXPECT_EQ(loaded->steps[1].registers[0].value, le64(5));
	EXPECT_EQ(loaded->memory[0].bytes, want.memory[0].bytes);
}

TEST(ReplayFile, APlainTraceStaysVersion1AndHasNoRecording)
{
	trace::TraceWriter writer(trace::TraceHeader{});
	auto bytes = writer.finish();
	EXPECT_EQ(bytes[8], 1);
	auto data = trace::read_trace(bytes);
	ASSERT_TRUE(data);
	auto loaded = load_recording(*data);
	ASSERT_FALSE(loaded);
	EXPECT_NE(loaded.error().message.find("no step recording"), std::string::npos);
}

// A version 1 header in front of a REPLAY chunk: what an edited or
// damaged file looks like; the reader names the chunk.
TEST(ReplayFile, AReplayChunkInAVersion1FileIsRefused)
{
	trace::TraceWriter writer(trace::TraceHeader{});
	add_recording(writer, three_steps());
	auto bytes = writer.finish();
	trace::TraceHeader v1;
	auto plain = trace::TraceWriter(v1).finish();
	std::copy(plain.begin(), plain.begin() + trace::kHeaderSize, bytes.begin());  // version 1, good CRC
	auto data = trace::read_trace(bytes);
	ASSERT_TRUE(data);
	ASSERT_TRUE(data->error);
	EXPECT_NE(data->error->message.find("REPLAY_REGISTERS chunk in a version 1 file"), std::string::npos);
}

TEST(ReplayFile, ABadRegisterIndexNamesTheChunkAndOffset)
{
	Recording r = three_steps();
	r.steps[1].registers[0].index = 7;
	r.steps[1].registers[0].value = le64(5);
	trace::TraceWriter writer(trace::TraceHeader{});
	add_recording(writer, r);
	auto data = trace::read_trace(writer.finish());
	ASSERT_TRUE(data);
	auto loaded = load_recording(*data);
	ASSERT_FALSE(loaded);
	EXPECT_NE(loaded.error().message.find("REPLAY_STEPS chunk: register index 7 of 3"), std::string::npos)
		<< loaded.error().message;
	EXPECT_TRUE(loaded.error().offset);
}

TEST(ReplayFile, EveryTruncationIsAnErrorNotACrash)
{
	trace::TraceWriter writer(trace::TraceHeader{});
	add_recording(writer, three_steps());
	auto bytes = writer.finish();
	for (std::size_t len = trace::kHeaderSize; len < bytes.size(); len++) {
		auto data = trace::read_trace(std::span(bytes.data(), len));
		ASSERT_TRUE(data);
		EXPECT_TRUE(data->error) << len;
		(void)load_recording(*data);
	}
}

// Code at 0x1000: call 0x1010; at 0x1010: nop; ret. Then the nop after the call.
Recording call_and_return()
{
	Recording r = three_steps();
	r.steps.clear();
	r.memory.clear();
	std::vector<std::uint8_t> code(0x20, 0x90);
	const std::uint8_t call[] = {0xe8, 0x0b, 0x00, 0x00, 0x00};  // 0x1005 + 0xb = 0x1010
	std::copy(std::begin(call), std::end(call), code.begin());
	code[0x11] = 0xc3;
	r.code.push_back({0x1000, code});
	for (std::uint64_t pc : {0x1010ull, 0x1011ull, 0x1005ull, 0x1006ull}) {
		Step s;
		s.registers.push_back({1, le64(pc)});
		r.steps.push_back(s);
	}
	return r;
}

TEST(Navigator, FinishAndReverseFinishFollowTheCall)
{
	Replay replay(call_and_return());
	Disassembler disassembler;
	Navigator nav(replay, disassembler);
	const int depth[] = {0, 1, 1, 0, 0};
	for (std::size_t k = 0; k <= 4; k++)
		EXPECT_EQ(nav.depth(k), depth[k]) << k;
	EXPECT_EQ(nav.finish(1), 3u);
	EXPECT_EQ(nav.reverse_finish(2), 0u);
	EXPECT_EQ(nav.next(0), 3u);
	EXPECT_EQ(nav.reverse_next(3), 0u);
	EXPECT_EQ(nav.call_stack(2), std::vector<std::size_t>{0});
	EXPECT_EQ(nav.find_pc(0x1011, 0, true), 2u);
	EXPECT_EQ(nav.find_pc(0x1000, 4, false), 0u);
	EXPECT_FALSE(nav.find_pc(0x1234, 0, true));
}

// The call at 0x1000 (call_and_return's code), with an interrupt whose
// handler at 0x1018 is an iretq. The frame's saved RIP says whether the
// call ran first (SDM Vol. 3A 6.14.2): the call's own address when the
// interrupt came before it (let in at a VM entry), its target when a trap
// came after it.
Recording interrupted_call(std::uint64_t saved_rip)
{
	Recording r = call_and_return();
	r.code[0].bytes[0x18] = 0x48;  // iretq
	r.code[0].bytes[0x19] = 0xcf;
	std::vector<std::uint8_t> frame = le64(saved_rip);
	for (std::uint64_t word : {0x10ull, 0x246ull, 0x2000ull, 0x18ull})
		for (std::uint8_t b : le64(word))
			frame.push_back(b);
	Step deliver;
	deliver.registers.push_back({1, le64(0x1018)});
	deliver.memory.push_back({AccessKind::WriteUnknownOld, 0x1fd8, {}, frame});
	Step iret;
	iret.registers.push_back({1, le64(saved_rip)});
	r.steps.insert(r.steps.begin(), {deliver, iret});
	if (saved_rip == 0x1010)
		r.steps.erase(r.steps.begin() + 2);	// the call ran before the trap
	return r;
}

TEST(Navigator, AnInterruptBeforeACallIsNotTheCall)
{
	Replay replay(interrupted_call(0x1000));
	Disassembler disassembler;
	Navigator nav(replay, disassembler);
	ASSERT_EQ(replay.steps(), 6u);
	// pcs: 0x1000 (delivered), 0x1018 iretq, 0x1000 call, 0x1010, 0x1011 ret, 0x1005
	const int depth[] = {0, 0, 0, 1, 1, 0, 0};
	for (std::size_t k = 0; k <= 6; k++)
		EXPECT_EQ(nav.depth(k), depth[k]) << k;
	EXPECT_EQ(nav.call_stack(4), std::vector<std::size_t>{2});
	EXPECT_EQ(nav.finish(3), 5u);
}

TEST(Navigator, ACallAndThenATrapIsTheCall)
{
	Replay replay(interrupted_call(0x1010));
	Disassembler disassembler;
	Navigator nav(replay, disassembler);
	ASSERT_EQ(replay.steps(), 5u);
	// pcs: 0x1000 call (then the trap), 0x1018 iretq, 0x1010, 0x1011 ret, 0x1005
	const int depth[] = {0, 1, 1, 1, 0, 0};
	for (std::size_t k = 0; k <= 5; k++)
		EXPECT_EQ(nav.depth(k), depth[k]) << k;
	EXPECT_EQ(nav.call_stack(3), std::vector<std::size_t>{0});
}

TEST(Navigator, WhenFindsWhereARegisterBecomesAValue)
{
	Replay replay(three_steps());
	Disassembler disassembler;
	Navigator nav(replay, disassembler);
	EXPECT_EQ(nav.find_register("rax", 5, 0, true), 2u);
	EXPECT_EQ(nav.find_register("rax", 5, 3, false), 2u);
	EXPECT_FALSE(nav.find_register("rax", 5, 2, true)) << "it holds 5 from step 2 on, it does not become 5 again";
	EXPECT_FALSE(nav.find_register("nope", 5, 0, true));
}

std::string handle(ReplayStub &stub, const std::string &packet)
{
	bool ended = false;
	return stub.handle(packet, ended);
}

TEST(ReplayStub, ReverseStepsAndTheEdgesOfTheLog)
{
	Replay replay(three_steps());
	ReplayStub stub(replay);
	EXPECT_NE(handle(stub, "qSupported:multiprocess+").find("ReverseStep+;ReverseContinue+"), std::string::npos);
	EXPECT_NE(handle(stub, "bs").find("replaylog:begin;"), std::string::npos);
	EXPECT_EQ(replay.position(), 0u);
	EXPECT_EQ(handle(stub, "s"), "T05thread:1;");
	EXPECT_EQ(replay.position(), 1u);
	EXPECT_NE(handle(stub, "c").find("replaylog:end;"), std::string::npos);
	EXPECT_EQ(replay.position(), 3u);
	EXPECT_EQ(handle(stub, "bs"), "T05thread:1;");
	EXPECT_EQ(replay.position(), 2u);
}

TEST(ReplayStub, WatchpointsStopAtTheWriterInBothDirections)
{
	Replay replay(three_steps());
	ReplayStub stub(replay);
	EXPECT_EQ(handle(stub, "Z2,3000,4"), "OK");
	EXPECT_EQ(handle(stub, "c"), "T05watch:3000;thread:1;");
	EXPECT_EQ(replay.position(), 1u) << "forwards, the stop is after the writing step";
	replay.seek(3);
	EXPECT_EQ(handle(stub, "bc"), "T05watch:3000;thread:1;");
	EXPECT_EQ(replay.position(), 2u) << "backwards, at the writing step";
	EXPECT_EQ(handle(stub, "bc"), "T05watch:3000;thread:1;");
	EXPECT_EQ(replay.position(), 0u) << "step 1 only reads it";
	EXPECT_EQ(handle(stub, "z2,3000,4"), "OK");
	EXPECT_EQ(handle(stub, "Z3,3000,4"), "OK");
	EXPECT_EQ(handle(stub, "c"), "T05rwatch:3000;thread:1;");
	EXPECT_EQ(replay.position(), 2u);
}

// add [0x3000], 1 reads and writes: a read watchpoint and a write
// watchpoint both see it; the value before and after are both kept.
TEST(ReplayStub, AReadModifyWriteSetsOffReadAndWriteWatchpoints)
{
	Recording r = three_steps();
	r.steps[0].memory[0].kind = AccessKind::ReadWrite;
	Replay replay(std::move(r));
	EXPECT_TRUE(replay.step_reads(0, 0x3000, 4));
	EXPECT_TRUE(replay.step_writes(0, 0x3000, 4));
	replay.seek(0);
	EXPECT_EQ(replay.read(0x3000, 4), std::vector<std::uint8_t>(4, 0xaa));
	replay.seek(1);
	EXPECT_EQ(replay.read(0x3000, 4), std::vector<std::uint8_t>(4, 0xbb));
	ReplayStub stub(replay);
	replay.seek(0);
	EXPECT_EQ(handle(stub, "Z3,3000,4"), "OK");
	EXPECT_EQ(handle(stub, "c"), "T05rwatch:3000;thread:1;");
	EXPECT_EQ(replay.position(), 1u);
}

TEST(ReplayStub, BreakpointsRegistersAndMemory)
{
	Replay replay(three_steps());
	ReplayStub stub(replay);
	EXPECT_EQ(handle(stub, "Z0,1006,1"), "OK");
	EXPECT_EQ(handle(stub, "c"), "T05swbreak:;thread:1;");
	EXPECT_EQ(replay.position(), 2u);
	// gdb's amd64 core feature (its features/i386/64bit-core.xml) is 276
	// bytes: 16 general registers and rip of 8, eflags and six selectors of
	// 4, st0-7 of 10, eight x87 control registers of 4. The recording has
	// rax, rip and rsp (24 of them); the other 37 come after, unavailable.
	std::string g = handle(stub, "g");
	EXPECT_EQ(g.substr(0, 48), "0500000000000000" "0610000000000000" "0020000000000000");
	EXPECT_EQ(g.substr(48), std::string(2 * (276 - 24), 'x'));
	EXPECT_EQ(handle(stub, "p1"), "0610000000000000");
	EXPECT_EQ(handle(stub, "p3"), std::string(16, 'x')) << "rbx, the first register the recording lacks";
	EXPECT_EQ(handle(stub, "p28"), "E00") << "past the 40 registers served (3 + 37)";
	EXPECT_EQ(handle(stub, "m3000,4"), "bbbbbbbb");
	EXPECT_EQ(handle(stub, "m3002,8"), "bbbb") << "a short read up to the first unknown byte";
	EXPECT_EQ(handle(stub, "m5000,4"), "E14") << "never a guess";
	EXPECT_EQ(handle(stub, "M3000,1:00"), "E01");
	EXPECT_EQ(handle(stub, "P0=00"), "E01");
	EXPECT_EQ(handle(stub, "mzz"), "E01");
	EXPECT_EQ(handle(stub, "Z0,nothex,1"), "E01");
	std::string xml = stub.target_xml();
	EXPECT_NE(xml.find("<architecture>i386:x86-64</architecture>"), std::string::npos);
	EXPECT_NE(xml.find("name=\"rip\" bitsize=\"64\" type=\"code_ptr\" regnum=\"1\""), std::string::npos);
	// Offset and length are hex (0xa = 10 bytes).
	EXPECT_EQ(handle(stub, "qXfer:features:read:target.xml:0,a"), "m" + xml.substr(0, 10));
	char end[32];
	std::snprintf(end, sizeof(end), "%zx,a", xml.size());
	EXPECT_EQ(handle(stub, std::string("qXfer:features:read:target.xml:") + end), "l");
}

TEST(ReplayStub, MonitorCommandsTellAndMoveThePosition)
{
	Replay replay(three_steps());
	ReplayStub stub(replay);
	auto hex = [](const std::string &text) { return dbg::rsp::to_hex(std::string_view(text)); };
	EXPECT_EQ(handle(stub, "qRcmd," + hex("goto 2")), hex("step 2\n"));
	EXPECT_EQ(replay.position(), 2u);
	EXPECT_EQ(handle(stub, "qRcmd," + hex("position")), hex("step 2 of 3, instruction 2\n"));
	EXPECT_EQ(handle(stub, "qRcmd," + hex("goto 9")), hex("goto: a step from 0 to 3\n"));
	EXPECT_EQ(replay.position(), 2u);
	// How vtice attach tells a recording from the hypervisor's stub (RspTarget::identify_stub).
	EXPECT_EQ(handle(stub, "qRcmd," + hex("vtice")), hex("vtice serve-replay: a recording of 3 steps\n"));
}

}  // namespace
}  // namespace vtice::replay
