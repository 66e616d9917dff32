// The debugger's ORC unwinder (symbols/' tables and step, the debugger's
// frame walk) over hand-built tables and a synthetic stack. Entry encodings
// follow arch/x86/include/asm/orc_types.h (6.1: sp_reg:4, bp_reg:4, type:2,
// end:1 in the flags halfword).
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "orc_unwinder.hpp"
#include "symbols/symbol_table.hpp"

using namespace vtice::dbg;
using vtice::Result;
using vtice::make_error;

namespace {

constexpr unsigned kRegSp = 5, kRegPrevSp = 1, kRegBp = 4;
constexpr unsigned kCall = 0, kRegs = 1;

struct TableBuilder {
	std::vector<std::uint8_t> ips, entries;
	std::uint64_t base = 0xffffffff82c00000ull;

	void add(std::uint64_t ip, std::int16_t sp_offset, unsigned sp_reg, unsigned type,
		 std::int16_t bp_offset = 0, unsigned bp_reg = 0, bool end = false)
	{
		std::uint64_t at = base + ips.size();
		std::int32_t rel = static_cast<std::int32_t>(ip - at);
		auto *r = reinterpret_cast<std::uint8_t *>(&rel);
		ips.insert(ips.end(), r, r + 4);
		std::uint16_t flags = static_cast<std::uint16_t>(sp_reg | bp_reg << 4 | type << 8 | (end ? 1u << 10 : 0));
		std::uint8_t e[6];
		std::memcpy(e, &sp_offset, 2);
		std::memcpy(e + 2, &bp_offset, 2);
		std::memcpy(e + 4, &flags, 2);
		entries.insert(entries.end(), e, e + 6);
	}
	// The tables go into fake guest memory at base / base + 1 MiB; symbols
	// point the loader at them, as kallsyms does for a live kernel.
	Result<OrcUnwinder> build()
	{
		std::uint64_t entries_at = base + 0x100000;
		vtice::symbols::SymbolTable names;
		names.add(base, 'R', "__start_orc_unwind_ip");
		names.add(base + ips.size(), 'R', "__stop_orc_unwind_ip");
		names.add(entries_at, 'R', "__start_orc_unwind");
		names.finalize();
		auto read = [this, entries_at](std::uint64_t a, std::span<std::uint8_t> out) {
			const std::vector<std::uint8_t> &src = a >= entries_at ? entries : ips;
			std::uint64_t off = a - (a >= entries_at ? entries_at : base);
			if (off + out.size() > src.size())
				return false;
			std::memcpy(out.data(), src.data() + off, out.size());
			return true;
		};
		auto table = vtice::symbols::OrcTable::load(names, read);
		if (!table)
			return table.error();
		return OrcUnwinder(std::move(*table));
	}
};

struct Stack {
	std::map<std::uint64_t, std::uint64_t> words;
	MemoryReader reader()
	{
		return [this](std::uint64_t a) -> Result<std::uint64_t> {
			auto it = words.find(a);
			if (it == words.end())
				return make_error("unmapped");
			return it->second;
		};
	}
};

// Three functions: f (at entry), g (frame of 0x20 with bp saved), and an
// entry stub whose pt_regs came from user mode.
constexpr std::uint64_t F = 0xffffffff81001000, G = 0xffffffff81002000, ENTRY = 0xffffffff81c00000;

}  // namespace

TEST(Orc, UnwindsCallFramesAndStopsAtUserRegs)
{
	TableBuilder b;
	b.add(F, 8, kRegSp, kCall);                    // f+0: CFA = sp + 8
	b.add(F + 0x40, 0, 0, kCall);                  // terminator after f (sp_reg undefined)
	b.add(G, 8, kRegSp, kCall);
	b.add(G + 0x10, 0x28, kRegSp, kCall, -16, kRegPrevSp);  // g+0x10..: CFA = sp + 0x28, bp at CFA-16
	b.add(G + 0x80, 0, 0, kCall);
	b.add(ENTRY, 0, kRegSp, kRegs);                // pt_regs at sp
	auto built = b.build();
	ASSERT_TRUE(built.ok()) << built.error().message;
	const OrcUnwinder &unwinder = *built;

	Stack s;
	std::uint64_t sp0 = 0xffffc90000010f00;
	s.words[sp0] = G + 0x35;                 // f's return address, into g
	std::uint64_t cfa_g = sp0 + 8 + 0x28;    // g's frame: 0x20 locals + return
	s.words[cfa_g - 16] = 0x1234;            // saved bp
	s.words[cfa_g - 8] = ENTRY + 0x50;       // g's return address, into the entry stub
	std::uint64_t regs = cfa_g;              // pt_regs right there
	s.words[regs + 128] = 0x401000;          // ip
	s.words[regs + 136] = 0x33;              // cs: user mode
	s.words[regs + 152] = 0x7ffc0000;        // sp

	UnwindRegs r;
	r.ip = F;
	r.sp = sp0;
	auto frames = unwinder.unwind(r, s.reader(), 16);
	ASSERT_TRUE(frames.ok()) << frames.error().message;
	ASSERT_EQ(frames->size(), 3u);
	EXPECT_EQ((*frames)[0].pc, F);
	EXPECT_EQ((*frames)[1].pc, G + 0x35);
	EXPECT_EQ((*frames)[1].sp, sp0 + 8);
	EXPECT_EQ((*frames)[2].pc, ENTRY + 0x50);
	EXPECT_EQ((*frames)[2].sp, cfa_g);
	for (const auto &f : *frames)
		EXPECT_TRUE(f.reliable);
}

TEST(Orc, MissingDataStopsWithANote)
{
	TableBuilder b;
	b.add(F, 8, kRegSp, kCall);
	b.add(F + 0x40, 0, 0, kCall);
	auto built = b.build();
	ASSERT_TRUE(built.ok()) << built.error().message;
	const OrcUnwinder &unwinder = *built;
	Stack s;
	s.words[0x1000] = 0xffffffff8100f000;  // return into a place with no ORC data
	UnwindRegs r;
	r.ip = F;
	r.sp = 0x1000;
	auto frames = unwinder.unwind(r, s.reader(), 16);
	ASSERT_TRUE(frames.ok());
	ASSERT_EQ(frames->size(), 2u);
	EXPECT_NE((*frames)[1].note.find("unwind stopped"), std::string::npos);
	// No data for the first frame at all is an error.
	r.ip = 0xffffffff80000000;
	EXPECT_FALSE(unwinder.unwind(r, s.reader(), 16).ok());
}

namespace {

// A module's tables as the console's source hands them out (the stub's
// walk of the kernel's list is tested in tests/console/module_orc_test.cpp).
struct ModuleTables final : ModuleSource {
	std::optional<vtice::symbols::OrcTable> table;
	std::optional<std::string> error;
	std::vector<std::uint64_t> asked;

	Result<const vtice::symbols::OrcTable *> table_for(std::uint64_t ip) override
	{
		asked.push_back(ip);
		if (error)
			return make_error(*error);
		return table && table->covers(ip) ? &*table : nullptr;
	}
	std::optional<vtice::SymbolHit> symbolize(std::uint64_t) override { return std::nullopt; }
	std::optional<std::uint64_t> lookup(std::string_view) override { return std::nullopt; }
};

constexpr std::uint64_t M = 0xffffffffc0a00000;  // a module's function

// f (kernel) called from m (a module, frame of 0x18) called from g, called from the entry code.
struct ThroughAModule {
	OrcUnwinder kernel = *[] {
		TableBuilder b;
		b.add(F, 8, kRegSp, kCall);
		b.add(F + 0x40, 0, 0, kCall);
		b.add(G, 8, kRegSp, kCall);
		b.add(G + 0x10, 0x28, kRegSp, kCall, -16, kRegPrevSp);
		b.add(G + 0x80, 0, 0, kCall);
		b.add(ENTRY, 0, kRegSp, kRegs);
		b.add(ENTRY + 0x100, 0, 0, kCall);  // the kernel's text goes on
		return b.build();
	}();
	std::shared_ptr<ModuleTables> modules = std::make_shared<ModuleTables>();
	Stack s;
	std::uint64_t sp0 = 0xffffc90000010f00;

	ThroughAModule()
	{
		TableBuilder m;
		m.base = 0xffffffffc0a08000ull;
		m.add(M, 8, kRegSp, kCall);
		m.add(M + 0x8, 0x20, kRegSp, kCall);  // after sub $0x18, %rsp
		m.add(M + 0x40, 0, 0, kCall);
		modules->table = m.build()->table();
		s.words[sp0] = M + 0x15;                 // f returns into m
		std::uint64_t cfa_m = sp0 + 8 + 0x20;
		s.words[cfa_m - 8] = G + 0x35;           // m returns into g
		std::uint64_t cfa_g = cfa_m + 0x28;
		s.words[cfa_g - 16] = 0x1234;            // g's saved bp
		s.words[cfa_g - 8] = ENTRY + 0x50;       // g returns into the entry code
		for (std::uint64_t at = 0; at < 168; at += 8)  // pt_regs from user mode
			s.words[cfa_g + at] = 0;
		s.words[cfa_g + 128] = 0x401000;
		s.words[cfa_g + 136] = 0x33;
		s.words[cfa_g + 152] = 0x7ffc0000;
		kernel.set_modules(modules);
	}

	Result<std::vector<Frame>> unwind()
	{
		UnwindRegs r;
		r.ip = F;
		r.sp = sp0;
		return kernel.unwind(r, s.reader(), 16);
	}
};

}  // namespace

// A stack that passes through a module's text unwinds with that module's
// tables, which the unwinder asks its source for only at the module's frames.
TEST(Orc, AModulesFramesUnwindWithTheTablesItsSourceGives)
{
	ThroughAModule t;
	auto frames = t.unwind();
	ASSERT_TRUE(frames.ok()) << frames.error().message;
	ASSERT_EQ(frames->size(), 4u);
	EXPECT_EQ((*frames)[1].pc, M + 0x15);
	EXPECT_EQ((*frames)[2].pc, G + 0x35);
	EXPECT_EQ((*frames)[2].sp, t.sp0 + 8 + 0x20);
	EXPECT_EQ((*frames)[3].pc, ENTRY + 0x50);
	for (const auto &f : *frames)
		EXPECT_EQ(f.note.find("unwind stopped"), std::string::npos) << f.note;
	EXPECT_EQ(t.modules->asked, std::vector<std::uint64_t>{M + 0x14}) << "the call's byte, not the return address";
}

TEST(Orc, AModuleWhoseTablesCannotBeHadEndsTheWalkSayingWhy)
{
	ThroughAModule t;
	t.modules->error = "vtice_spin's ORC tables: cannot read 0xffffffffc0a08000";
	auto frames = t.unwind();
	ASSERT_TRUE(frames.ok()) << frames.error().message;
	ASSERT_EQ(frames->size(), 2u);
	EXPECT_NE((*frames)[1].note.find("unwind stopped: vtice_spin's ORC tables"), std::string::npos)
		<< (*frames)[1].note;
	t.modules->error.reset();
	t.modules->table.reset();
	frames = t.unwind();
	ASSERT_TRUE(frames.ok());
	ASSERT_EQ(frames->size(), 2u) << "no module's text: the kernel's table says there is no entry";
	EXPECT_NE((*frames)[1].note.find("unwind stopped"), std::string::npos);
}

TEST(Orc, UnreadableTablesAreErrors)
{
	TableBuilder b;
	b.add(F, 8, kRegSp, kCall);
	b.entries.resize(2);  // the entries array is cut short in "memory"
	auto built = b.build();
	ASSERT_FALSE(built.ok());
	EXPECT_NE(built.error().message.find("ORC"), std::string::npos) << built.error().message;
}

TEST(StackScan, MarksTextWordsAsGuesses)
{
	Stack s;
	s.words[0x2000] = 0x10;
	s.words[0x2008] = 0xffffffff81234567;
	s.words[0x2010] = 0xffff888000000000;
	s.words[0x2018] = 0xffffffff81000010;
	auto frames = scan_stack(0x2000, 0x2020, s.reader(),
				 [](std::uint64_t a) { return a >= 0xffffffff81000000 && a < 0xffffffff82000000; }, 8);
	ASSERT_EQ(frames.size(), 2u);
	EXPECT_EQ(frames[0].pc, 0xffffffff81234567u);
	EXPECT_FALSE(frames[0].reliable);
	EXPECT_EQ(frames[1].pc, 0xffffffff81000010u);
}
