// Syscall record groups (include/uapi/vtice/records.h) -> events -> calls ->
// lines. Expected numbers and names are the x86-64 ABI's (257 = openat,
// 39 = getpid), errno texts glibc's.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "syscall_events.hpp"

using namespace vtice::trace;

namespace {

vtice_record head(uint16_t type, uint32_t more, uint64_t nr, uint64_t arg, uint16_t cpu = 0)
{
	vtice_record r{};
	r.type = type;
	r.cpu = cpu;
	r.flags = more;
	r.tsc = 1000;
	r.u.syscall.nr = nr;
	r.u.syscall.arg = arg;
	return r;
}

vtice_record data(uint32_t kind, uint64_t a, uint64_t b)
{
	vtice_record r{};
	r.type = VTICE_REC_SYSCALL_DATA;
	r.flags = kind;
	r.u.raw[0] = a;
	r.u.raw[1] = b;
	return r;
}

void add_task(std::vector<vtice_record> &v, uint32_t pid, uint64_t task, const char *comm)
{
	v.push_back(data(VTICE_SYSCALL_DATA_TASK, pid | (uint64_t)pid << 32, task));
	uint64_t c[2] = {};
	std::strncpy(reinterpret_cast<char *>(c), comm, 15);
	v.push_back(data(VTICE_SYSCALL_DATA_COMM, c[0], c[1]));
}

std::vector<vtice_record> enter(uint64_t nr, std::array<uint64_t, 6> a, uint32_t pid, uint64_t task,
				const char *comm)
{
	std::vector<vtice_record> v{head(VTICE_REC_SYSCALL_ENTER, 5, nr, a[0]),
				    data(VTICE_SYSCALL_DATA_ARGS12, a[1], a[2]),
				    data(VTICE_SYSCALL_DATA_ARGS34, a[3], a[4]),
				    data(VTICE_SYSCALL_DATA_ARG5, a[5], 0)};
	add_task(v, pid, task, comm);
	return v;
}

std::vector<vtice_record> leave(uint64_t ret, uint32_t pid, uint64_t task, const char *comm)
{
	std::vector<vtice_record> v{head(VTICE_REC_SYSCALL_EXIT, 2, VTICE_SYSCALL_NR_UNKNOWN, ret)};
	add_task(v, pid, task, comm);
	return v;
}

std::vector<vtice_record> cat(std::vector<std::vector<vtice_record>> parts)
{
	std::vector<vtice_record> out;
	for (auto &p : parts)
		out.insert(out.end(), p.begin(), p.end());
	return out;
}

std::vector<std::string> lines(const std::vector<vtice_record> &recs, SyscallDecodeStats &st)
{
	SyscallPairer pairer;
	std::vector<std::string> out;
	for (auto &ev : decode_syscall_records(recs, st))
		for (auto &call : pairer.add(ev))
			out.push_back(format_syscall_call(call));
	for (auto &call : pairer.unfinished())
		out.push_back(format_syscall_call(call));
	return out;
}

TEST(SyscallEvents, EntryAndExitMakeOneStraceLikeLine)
{
	SyscallDecodeStats st;
	auto out = lines(cat({enter(257, {(uint64_t)-100, 0x7ffd1000, 0x80000, 0, 0, 0}, 42, 0xa000, "vtsys"),
			      leave(3, 42, 0xa000, "vtsys")}),
			 st);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], "vtsys(42) openat(-100, 0x7ffd1000, 0x80000, 0) = 3");
	EXPECT_EQ(st.events, 2u);
	EXPECT_EQ(st.malformed, 0u);
}

TEST(SyscallEvents, ErrorsPrintLikeStrace)
{
	SyscallDecodeStats st;
	auto out = lines(cat({enter(257, {}, 7, 0xb000, "t"), leave((uint64_t)-2, 7, 0xb000, "t")}), st);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], "t(7) openat(0, 0, 0, 0) = -1 ENOENT (No such file or directory)");
}

TEST(SyscallEvents, CallsOfTwoTasksInterleavedPairByTask)
{
	SyscallDecodeStats st;
	auto out = lines(cat({enter(0, {3, 0x1000, 10}, 1, 0xa000, "a"), enter(39, {}, 2, 0xb000, "b"),
			      leave(2, 2, 0xb000, "b"), leave(10, 1, 0xa000, "a")}),
			 st);
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(out[0], "b(2) getpid() = 2");
	EXPECT_EQ(out[1], "a(1) read(3, 0x1000, 10) = 10");
}

TEST(SyscallEvents, ExitWithoutEntryAndEntryWithoutExitAreShownAsSuch)
{
	SyscallDecodeStats st;
	auto out = lines(cat({leave(0, 5, 0xc000, "x"), enter(59, {}, 5, 0xc000, "x"), enter(39, {}, 5, 0xc000, "x")}),
			 st);
	ASSERT_EQ(out.size(), 3u);
	EXPECT_EQ(out[0], "x(5) <... resumed> = 0");
	EXPECT_EQ(out[1], "x(5) execve(0, 0, 0) = ? <unfinished>") << "returned through IRET";
	EXPECT_EQ(out[2], "x(5) getpid() = ? <unfinished>");
}

TEST(SyscallEvents, LargeReturnValuesAreHexAndUnknownNumbersNamed)
{
	SyscallDecodeStats st;
	auto out = lines(cat({enter(9, {}, 1, 0xa000, "m"), leave(0x7f0012340000, 1, 0xa000, "m"),
			      enter(4000, {1, 2, 3, 4, 5, 6}, 1, 0xa000, "m"), leave(0, 1, 0xa000, "m")}),
			 st);
	ASSERT_EQ(out.size(), 2u);
	EXPECT_EQ(out[0], "m(1) mmap(0, 0, 0, 0, 0, 0) = 0x7f0012340000");
	EXPECT_EQ(out[1], "m(1) syscall_4000(1, 2, 3, 4, 5, 6) = 0");
}

TEST(SyscallEvents, LostRecordsAreCountedAndMalformedGroupsDropped)
{
	SyscallDecodeStats st;
	vtice_record lost{};
	lost.type = VTICE_REC_LOST;
	lost.u.lost.count = 12;
	auto recs = cat({{lost}, enter(39, {}, 1, 0xa000, "g")});
	recs.pop_back();	// the group is cut short
	auto bad_kind = cat({{head(VTICE_REC_SYSCALL_EXIT, 1, 0, 0), data(99, 0, 0)}});
	auto too_many = cat({{head(VTICE_REC_SYSCALL_EXIT, 200, 0, 0)}});
	recs = cat({recs, bad_kind, too_many, leave(1, 1, 0xa000, "g")});
	auto events = decode_syscall_records(recs, st);
	EXPECT_EQ(st.lost, 12u);
	EXPECT_EQ(st.malformed, 3u);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_FALSE(events[0].enter);
}

// records.h: a PROBE_HIT's ARG5 carries R9 and RAX (the return value at a
// fn:NAME:return site); a syscall entry's second word is 0 and means nothing.
TEST(SyscallEvents, AProbeHitCarriesRaxBesideR9)
{
	std::vector<vtice_record> hit{head(VTICE_REC_PROBE_HIT, 0, 0xffffffff81234622ull, 7),
				      data(VTICE_SYSCALL_DATA_ARGS12, 1, 2), data(VTICE_SYSCALL_DATA_ARGS34, 3, 4),
				      data(VTICE_SYSCALL_DATA_ARG5, 5, 0xfffffffffffffff2ull)};
	hit[0].flags = 3;
	SyscallDecodeStats st;
	auto events = decode_syscall_records(hit, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].args[5], 5u);
	EXPECT_EQ(events[0].ret, 0xfffffffffffffff2ull);
	EXPECT_EQ(events[0].args[0], 7u) << "RDI stays arg0";
}

// records.h: a PROBE_HIT armed with a stack carries REGS (RBP, RSP) and
// up to VTICE_STACK_RECORDS_MAX STACK records; a syscall's group carries neither.
TEST(SyscallEvents, AProbeHitCarriesItsStackASyscallDoesNot)
{
	std::vector<vtice_record> hit{head(VTICE_REC_PROBE_HIT, 0, 0xffffffff81234564ull, 7),
				      data(VTICE_SYSCALL_DATA_ARGS12, 1, 2), data(VTICE_SYSCALL_DATA_ARGS34, 3, 4),
				      data(VTICE_SYSCALL_DATA_ARG5, 5, 0)};
	add_task(hit, 9, 0xa000, "dd");
	for (uint64_t slot = 0; slot < VTICE_PROBE_VALUES_MAX; slot++)	// a fetch program's values
		hit.push_back(data(VTICE_SYSCALL_DATA_VALUE, 100 + slot, slot | (slot == 2 ? VTICE_PROBE_VALUE_UNREADABLE : 0)));
	for (int i = 0; i < VTICE_PROBE_STR_MAX / 16; i++)	// a string with no NUL in reach
		hit.push_back(data(VTICE_SYSCALL_DATA_STRING, 0x4242424242424242ull, 0x4242424242424242ull));
	for (int i = 0; i < VTICE_GPRS_RECORDS; i++)
		hit.push_back(data(VTICE_SYSCALL_DATA_GPRS, 0, 0));
	hit.push_back(data(VTICE_SYSCALL_DATA_REGS, 0xbbbb, 0xffffc90000107e00ull));
	for (uint64_t i = 0; i < VTICE_STACK_RECORDS_MAX; i++)
		hit.push_back(data(VTICE_SYSCALL_DATA_STACK, 2 * i, 2 * i + 1));
	hit[0].flags = static_cast<uint32_t>(hit.size() - 1);
	ASSERT_EQ(hit.size(), static_cast<size_t>(VTICE_PROBE_GROUP_MAX)) << "the largest group there is";
	SyscallDecodeStats st;
	auto events = decode_syscall_records(hit, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(st.malformed, 0u);
	EXPECT_TRUE(events[0].probe_hit);
	EXPECT_EQ(events[0].rbp, 0xbbbbu);
	EXPECT_EQ(events[0].rsp, 0xffffc90000107e00ull);
	ASSERT_EQ(events[0].stack.size(), VTICE_STACK_RECORDS_MAX * 16u);
	uint64_t word = 0;
	std::memcpy(&word, events[0].stack.data() + 8 * 201, 8);
	EXPECT_EQ(word, 201u) << "the words in the order the records hold them";
	EXPECT_EQ(events[0].values, (std::array<uint64_t, VTICE_PROBE_VALUES_MAX>{100, 101, 102, 103}));
	EXPECT_EQ(events[0].values_unreadable, 1u << 2) << "slot 2's read faulted";

	auto one_more = hit;
	one_more.push_back(data(VTICE_SYSCALL_DATA_STACK, 0, 0));
	one_more[0].flags++;
	auto syscall_with_stack = cat({{head(VTICE_REC_SYSCALL_ENTER, 1, 39, 0), data(VTICE_SYSCALL_DATA_STACK, 0, 0)}});
	auto exit_with_regs = cat({{head(VTICE_REC_SYSCALL_EXIT, 1, 0, 0), data(VTICE_SYSCALL_DATA_REGS, 0, 0)}});
	SyscallDecodeStats bad;
	EXPECT_TRUE(decode_syscall_records(cat({one_more, syscall_with_stack, exit_with_regs}), bad).empty());
	EXPECT_EQ(bad.malformed, 3u);
}

// records.h: a VALUE record names its slot; a slot out of range, given
// twice, in a syscall's group or with unknown bits makes the group malformed.
TEST(SyscallEvents, ValueRecordsAreCheckedSlotBySlot)
{
	auto hit_with = [](std::vector<vtice_record> values) {
		std::vector<vtice_record> g{head(VTICE_REC_PROBE_HIT, 0, 0xffffffff81234564ull, 0)};
		g.insert(g.end(), values.begin(), values.end());
		g[0].flags = static_cast<uint32_t>(g.size() - 1);
		return g;
	};
	SyscallDecodeStats st;
	auto good = decode_syscall_records(hit_with({data(VTICE_SYSCALL_DATA_VALUE, 7, 3)}), st);
	ASSERT_EQ(good.size(), 1u);
	EXPECT_EQ(good[0].values[3], 7u);
	EXPECT_EQ(good[0].values_unreadable, 0u);
	SyscallDecodeStats bad;
	auto syscall_with_value =
		cat({{head(VTICE_REC_SYSCALL_ENTER, 1, 39, 1), data(VTICE_SYSCALL_DATA_VALUE, 1, 0)}});
	EXPECT_TRUE(decode_syscall_records(
			    cat({hit_with({data(VTICE_SYSCALL_DATA_VALUE, 1, VTICE_PROBE_VALUES_MAX)}),
				 hit_with({data(VTICE_SYSCALL_DATA_VALUE, 1, 0), data(VTICE_SYSCALL_DATA_VALUE, 2, 0)}),
				 hit_with({data(VTICE_SYSCALL_DATA_VALUE, 1, 1u << 9)}), syscall_with_value}),
			    bad)
			    .empty());
	EXPECT_EQ(bad.malformed, 4u);
}

// records.h: a watch probe's hit is a PROBE_HIT whose flags carry the
// access beside the count, with one WATCH record (the instruction, the byte).
TEST(SyscallEvents, AWatchHitCarriesItsAccessInstructionAndByte)
{
	std::vector<vtice_record> hit{head(VTICE_REC_PROBE_HIT, 0, 0xffffffff81300004ull, 1),
				      data(VTICE_SYSCALL_DATA_ARGS12, 2, 3), data(VTICE_SYSCALL_DATA_ARGS34, 4, 5),
				      data(VTICE_SYSCALL_DATA_ARG5, 6, 7),
				      data(VTICE_SYSCALL_DATA_WATCH, 0xffffffff81300000ull, 0xffffffff82b4b8a0ull)};
	hit[0].flags = 4 | VTICE_PROBE_HIT_WRITE;
	SyscallDecodeStats st;
	auto events = decode_syscall_records(hit, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].watch_access, VTICE_PROBE_HIT_WRITE);
	EXPECT_EQ(events[0].nr, 0xffffffff81300004ull) << "RIP after the access";
	EXPECT_EQ(events[0].watch_ip, 0xffffffff81300000ull);
	EXPECT_EQ(events[0].watch_addr, 0xffffffff82b4b8a0ull);

	auto no_watch_record = hit;	// the access bits promise a WATCH record
	no_watch_record.pop_back();
	no_watch_record[0].flags = 3 | VTICE_PROBE_HIT_READ;
	auto no_access = hit;		// ...and a WATCH record needs them
	no_access[0].flags = 4;
	auto two = hit;
	two.push_back(data(VTICE_SYSCALL_DATA_WATCH, 0, 0));
	two[0].flags++;
	auto on_a_syscall = cat({{head(VTICE_REC_SYSCALL_ENTER, 1, 0, 0), data(VTICE_SYSCALL_DATA_WATCH, 0, 0)}});
	SyscallDecodeStats bad;
	EXPECT_TRUE(decode_syscall_records(cat({no_watch_record, no_access, two, on_a_syscall}), bad).empty());
	EXPECT_EQ(bad.malformed, 4u);
}

// A syscall's entry armed for a string (vtice_syscalls.str_nr) carries it
// after its task, up to the largest syscall group; an exit never does.
TEST(SyscallEvents, AnEntryCarriesItsStringAnExitDoesNot)
{
	std::vector<vtice_record> enter{head(VTICE_REC_SYSCALL_ENTER, 0, 257, static_cast<uint64_t>(-100)),
					data(VTICE_SYSCALL_DATA_ARGS12, 0x7ffd1000, 0), data(VTICE_SYSCALL_DATA_ARGS34, 0, 0),
					data(VTICE_SYSCALL_DATA_ARG5, 0, 0)};
	add_task(enter, 9, 0xa000, "cat");
	for (int i = 0; i < VTICE_PROBE_STR_MAX / 16; i++)	// 128 bytes, no NUL: every record root makes
		enter.push_back(data(VTICE_SYSCALL_DATA_STRING, 0x2f2f2f2f2f2f2f2full, 0x2f2f2f2f2f2f2f2full));
	enter[0].flags = static_cast<uint32_t>(enter.size() - 1);
	ASSERT_EQ(enter.size(), static_cast<size_t>(VTICE_SYSCALL_GROUP_MAX)) << "the largest syscall group";
	SyscallDecodeStats st;
	auto events = decode_syscall_records(enter, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].str, std::string(VTICE_PROBE_STR_MAX, '/'));
	EXPECT_EQ(events[0].comm, "cat");

	auto exit_with_string = cat({{head(VTICE_REC_SYSCALL_EXIT, 1, 0, 0), data(VTICE_SYSCALL_DATA_STRING, 0, 0)}});
	SyscallDecodeStats bad;
	EXPECT_TRUE(decode_syscall_records(exit_with_string, bad).empty());
	EXPECT_EQ(bad.malformed, 1u);
}

// GPRS records (VTICE_PROBES_MORE_REGS): RBX, RSP, RBP, R10-R15, RFLAGS in
// that order, two a record; a sixth is malformed, and a syscall has none.
TEST(SyscallEvents, AProbeHitCarriesItsOtherRegisters)
{
	std::vector<vtice_record> hit{head(VTICE_REC_PROBE_HIT, 0, 0xffffffff81234564ull, 7),
				      data(VTICE_SYSCALL_DATA_ARGS12, 1, 2), data(VTICE_SYSCALL_DATA_ARGS34, 3, 4),
				      data(VTICE_SYSCALL_DATA_ARG5, 5, 0)};
	for (uint64_t i = 0; i < VTICE_GPRS_RECORDS; i++)
		hit.push_back(data(VTICE_SYSCALL_DATA_GPRS, 100 + 2 * i, 101 + 2 * i));
	hit[0].flags = static_cast<uint32_t>(hit.size() - 1);
	SyscallDecodeStats st;
	auto events = decode_syscall_records(hit, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].more_regs[0], 100u) << "RBX";
	EXPECT_EQ(events[0].more_regs[9], 109u) << "RFLAGS";

	auto sixth = hit;
	sixth.push_back(data(VTICE_SYSCALL_DATA_GPRS, 0, 0));
	sixth[0].flags++;
	auto syscall_with_regs = cat({{head(VTICE_REC_SYSCALL_ENTER, 1, 39, 0), data(VTICE_SYSCALL_DATA_GPRS, 0, 0)}});
	SyscallDecodeStats bad;
	EXPECT_TRUE(decode_syscall_records(cat({sixth, syscall_with_regs}), bad).empty());
	EXPECT_EQ(bad.malformed, 2u);
}

// STRING records: the bytes up to the NUL root copied; without a NUL, all
// of them; more than VTICE_PROBE_STR_MAX bytes is a malformed group.
TEST(SyscallEvents, AProbeHitCarriesItsStringToItsNul)
{
	const char path[32] = "/proc/self/status";	// 17 bytes and a NUL: two records, as root makes them
	uint64_t w[4] = {};
	std::memcpy(w, path, sizeof(w));
	std::vector<vtice_record> hit{head(VTICE_REC_PROBE_HIT, 5, 0xffffffff81234564ull, 7),
				      data(VTICE_SYSCALL_DATA_ARGS12, 1, 2), data(VTICE_SYSCALL_DATA_ARGS34, 3, 4),
				      data(VTICE_SYSCALL_DATA_ARG5, 5, 0), data(VTICE_SYSCALL_DATA_STRING, w[0], w[1]),
				      data(VTICE_SYSCALL_DATA_STRING, w[2], w[3])};
	SyscallDecodeStats st;
	auto events = decode_syscall_records(hit, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].str, "/proc/self/status");

	std::vector<vtice_record> full{head(VTICE_REC_PROBE_HIT, VTICE_PROBE_STR_MAX / 16, 1, 0)};
	for (int i = 0; i < VTICE_PROBE_STR_MAX / 16; i++)
		full.push_back(data(VTICE_SYSCALL_DATA_STRING, 0x4141414141414141ull, 0x4141414141414141ull));
	events = decode_syscall_records(full, st);
	ASSERT_EQ(events.size(), 1u);
	EXPECT_EQ(events[0].str, std::string(VTICE_PROBE_STR_MAX, 'A')) << "no NUL: every byte copied";

	full.push_back(data(VTICE_SYSCALL_DATA_STRING, 0, 0));
	full[0].flags++;
	SyscallDecodeStats bad;
	EXPECT_TRUE(decode_syscall_records(full, bad).empty());
	EXPECT_EQ(bad.malformed, 1u);
}

TEST(SyscallEvents, EventsWithoutTaskPairOnTheirCpu)
{
	SyscallDecodeStats st;
	std::vector<vtice_record> recs{head(VTICE_REC_SYSCALL_ENTER, 3, 39, 0), data(1, 0, 0), data(2, 0, 0),
				       data(3, 0, 0), head(VTICE_REC_SYSCALL_EXIT, 0, 0, 77)};
	auto out = lines(recs, st);
	ASSERT_EQ(out.size(), 1u);
	EXPECT_EQ(out[0], "?(?) getpid() = 77");
}

}  // namespace
