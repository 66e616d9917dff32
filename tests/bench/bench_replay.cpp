// Replay speed on a synthetic recording of 1 Mi steps shaped like the
// recorded openat (docs/replay.md): each step changes rip and one other
// register, writes 8 bytes on a 16 KiB stack and reads 8 bytes of a 64 KiB
// heap. Goal (issue 25): a seek to a random point in 1 M steps within 10 ms.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "replay_engine.hpp"

namespace {

using namespace vtice::replay;

constexpr std::size_t kSteps = std::size_t(1) << 20;

std::vector<std::uint8_t> le64(std::uint64_t v)
{
	std::vector<std::uint8_t> out(8);
	std::memcpy(out.data(), &v, 8);
	return out;
}

Recording synthetic()
{
	Recording r;
	for (const char *name : {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
				 "r12", "r13", "r14", "r15", "rip"})
		r.registers.push_back({name, 64, "int64", "general"});
	r.initial.assign(r.registers.size() * 8, 0);
	std::mt19937_64 rng(1);
	for (std::size_t i = 0; i < kSteps; i++) {
		Step s;
		s.registers.push_back({16, le64(0xffffffff81000000ull + i * 4)});
		s.registers.push_back({static_cast<std::uint16_t>(rng() % 16), le64(rng())});
		std::uint64_t stack = 0xffffc90000000000ull + (rng() % 2048) * 8;
		s.memory.push_back({AccessKind::Write, stack, le64(rng()), le64(rng())});
		s.memory.push_back({AccessKind::Read, 0xffff888000000000ull + (rng() % 8192) * 8, le64(rng()), {}});
		r.steps.push_back(std::move(s));
	}
	return r;
}

Replay &replay()
{
	static Replay instance(synthetic());
	return instance;
}

void BM_ReplayOpen(benchmark::State &state)
{
	for (auto _ : state) {
		state.PauseTiming();
		Recording recording = synthetic();  // built outside the timing; moved in, as open_replay does
		state.ResumeTiming();
		Replay r(std::move(recording));
		benchmark::DoNotOptimize(r.steps());
	}
	state.counters["steps"] = static_cast<double>(kSteps);
}
BENCHMARK(BM_ReplayOpen)->Unit(benchmark::kMillisecond)->Iterations(1);

// A seek to a random step, then what gdb asks at a stop: the registers and
// 64 bytes of stack.
void BM_SeekRandom(benchmark::State &state)
{
	Replay &r = replay();
	std::mt19937_64 rng(2);
	for (auto _ : state) {
		r.seek(rng() % (kSteps + 1));
		benchmark::DoNotOptimize(r.reg("rip"));
		benchmark::DoNotOptimize(r.read(0xffffc90000000000ull + (rng() % 2040) * 8, 64));
	}
}
BENCHMARK(BM_SeekRandom)->Unit(benchmark::kMicrosecond);

// reverse-stepi over and over: each step back is a seek one step back.
void BM_ReverseStep(benchmark::State &state)
{
	Replay &r = replay();
	r.seek(kSteps);
	for (auto _ : state) {
		r.seek(r.position() ? r.position() - 1 : kSteps);
		benchmark::DoNotOptimize(r.reg("rip"));
	}
}
BENCHMARK(BM_ReverseStep)->Unit(benchmark::kMicrosecond);

// last-write over the whole recording for one stack slot.
void BM_LastWrite(benchmark::State &state)
{
	Replay &r = replay();
	std::mt19937_64 rng(3);
	for (auto _ : state)
		benchmark::DoNotOptimize(r.last_write(0xffffc90000000000ull + (rng() % 2048) * 8, 8, kSteps));
}
BENCHMARK(BM_LastWrite)->Unit(benchmark::kMicrosecond);

}  // namespace
