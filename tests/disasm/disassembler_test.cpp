// The disassembler against GNU as (bytes) and objdump (independent peer).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "assemble.hpp"
#include "disassembler.hpp"

namespace vtice {
namespace {

constexpr std::uint64_t kBase = 0xffffffff81000000ull;

// Every branch kind, direct and indirect, plus RIP-relative and plain data ops.
const char *kBranchSource = R"(
	.text
	.globl f
f:	call g
	call *%rax
	call *8(%rax)
	jmp 1f
1:	jmp *%rbx
	jmp *0x10(%rip)
	je f
	jne g
	jg 2f
2:	loop f
	loope f
	loopne f
	jrcxz f
	jecxz f
	syscall
	sysretq
	sysenter
	int $0x80
	int3
	iretq
	mov 0x10(%rip), %rax
	lea g(%rip), %rdi
	movl $1, (%rax)
	add %rbx, %rcx
	push %rbp
	nop
	ret
g:	ret $8
	ret
)";

test::Assembled assemble_or_die(const char *source)
{
	std::string error;
	auto object = test::assemble(source, kBase, error);
	if (!object)
		ADD_FAILURE() << "as/ld failed: " << error;
	return object ? *object : test::Assembled{};
}

std::vector<Instruction> decode_all(const Disassembler &dis, const test::Assembled &object)
{
	std::vector<Instruction> out;
	std::span<const std::uint8_t> text(object.text);
	std::uint64_t offset = 0;
	while (offset < text.size()) {
		auto insn = dis.decode(text.subspan(offset), object.text_address + offset);
		if (!insn) {
			ADD_FAILURE() << insn.error().to_string();
			break;
		}
		out.push_back(*insn);
		offset += insn->length;
	}
	return out;
}

std::string squeeze(std::string text)
{
	text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
	std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
	return text;
}

// Spellings where binutils and Zydis differ for the same opcode (condition
// code synonyms from the SDM's Jcc table, and the operand-size suffix).
std::string canonical_mnemonic(const std::string &mnemonic)
{
	static const std::map<std::string, std::string> synonyms = {
		{"je", "jz"}, {"jne", "jnz"}, {"jg", "jnle"}, {"sysretq", "sysret"},
	};
	auto it = synonyms.find(mnemonic);
	return it == synonyms.end() ? mnemonic : it->second;
}

struct Split {
	std::string mnemonic, operands;
};

Split split_formatted(const std::string &text)
{
	std::string body = text.substr(0, text.find("  ;"));
	body = body.substr(0, body.find("  #"));
	size_t space = body.find(' ');
	if (space == std::string::npos)
		return {body, ""};
	return {body.substr(0, space), body.substr(space + 1)};
}

void compare_with_objdump(Syntax syntax)
{
	auto object = assemble_or_die(kBranchSource);
	Disassembler dis(syntax);
	auto ours = decode_all(dis, object);
	auto peer = test::objdump(object, syntax == Syntax::Att);
	ASSERT_EQ(ours.size(), peer.size());
	for (size_t i = 0; i < ours.size(); i++) {
		SCOPED_TRACE(peer[i].mnemonic + " " + peer[i].operands);
		EXPECT_EQ(ours[i].address, peer[i].address);
		Split mine = split_formatted(dis.format(ours[i]));
		EXPECT_EQ(canonical_mnemonic(mine.mnemonic), canonical_mnemonic(peer[i].mnemonic));
		if (peer[i].target) {
			ASSERT_TRUE(ours[i].target.has_value());
			EXPECT_EQ(*ours[i].target, *peer[i].target);
		} else {
			EXPECT_EQ(squeeze(mine.operands), squeeze(peer[i].operands));
		}
	}
}

TEST(Disassembler, MatchesObjdumpIntel) { compare_with_objdump(Syntax::Intel); }
TEST(Disassembler, MatchesObjdumpAtt) { compare_with_objdump(Syntax::Att); }

TEST(Disassembler, ClassifiesEveryBranchKind)
{
	auto object = assemble_or_die(kBranchSource);
	Disassembler dis;
	auto ours = decode_all(dis, object);
	auto peer = test::objdump(object, false);
	ASSERT_EQ(ours.size(), peer.size());
	const std::map<std::string, std::pair<BranchKind, bool>> expected = {
		{"call", {BranchKind::Call, false}}, {"jmp", {BranchKind::Jmp, false}},
		{"je", {BranchKind::Jcc, false}},    {"jne", {BranchKind::Jcc, false}},
		{"jg", {BranchKind::Jcc, false}},    {"loop", {BranchKind::Jcc, false}},
		{"loope", {BranchKind::Jcc, false}}, {"loopne", {BranchKind::Jcc, false}},
		{"jrcxz", {BranchKind::Jcc, false}}, {"jecxz", {BranchKind::Jcc, false}},
		{"syscall", {BranchKind::Syscall, true}}, {"sysretq", {BranchKind::Sysret, true}},
		{"sysenter", {BranchKind::Syscall, true}}, {"int", {BranchKind::Int, true}},
		{"int3", {BranchKind::Int, true}},   {"iretq", {BranchKind::Iret, true}},
		{"ret", {BranchKind::Ret, true}},    {"mov", {BranchKind::None, false}},
		{"lea", {BranchKind::None, false}},  {"add", {BranchKind::None, false}},
		{"push", {BranchKind::None, false}}, {"nop", {BranchKind::None, false}},
	};
	std::set<BranchKind> seen;
	for (size_t i = 0; i < ours.size(); i++) {
		SCOPED_TRACE(peer[i].mnemonic + " " + peer[i].operands);
		auto want = expected.find(peer[i].mnemonic);
		ASSERT_NE(want, expected.end());
		bool peer_indirect = peer[i].operands.find('*') != std::string::npos ||
				     (!peer[i].target && (peer[i].mnemonic == "call" || peer[i].mnemonic == "jmp"));
		EXPECT_EQ(ours[i].branch, want->second.first);
		EXPECT_EQ(ours[i].indirect, want->second.second || peer_indirect);
		EXPECT_EQ(ours[i].target.has_value(), peer[i].target.has_value());
		seen.insert(ours[i].branch);
	}
	EXPECT_EQ(seen.size(), 9u);  // None and all eight branch kinds
}

// The instructions a TF-stepping tracer must not run inside a branch step
// (disassembler.hpp): named here by objdump's mnemonic and operands.
TEST(Disassembler, TfHazardsAreTheInstructionsThatReadOrLoadRflags)
{
	auto object = assemble_or_die(".text\n pushfq\n popfq\n iretq\n int $0x80\n hlt\n syscall\n sysretq\n"
				      " sysenter\n mov %ax, %ss\n mov %ax, %ds\n int3\n push %rax\n cli\n"
				      " sti\n lahf\n ret\n");
	Disassembler dis;
	auto ours = decode_all(dis, object);
	auto peer = test::objdump(object, false);
	ASSERT_EQ(ours.size(), peer.size());
	const std::set<std::string> hazards = {"pushf", "pushfq", "popf", "popfq", "iretq", "int",
					       "hlt", "syscall", "sysretq", "sysenter"};
	for (size_t i = 0; i < ours.size(); i++) {
		SCOPED_TRACE(peer[i].mnemonic + " " + peer[i].operands);
		bool to_ss = peer[i].mnemonic == "mov" && peer[i].operands.starts_with("ss,");  // Intel syntax
		EXPECT_EQ(ours[i].tf_hazard, hazards.count(peer[i].mnemonic) > 0 || to_ss);
	}
}

Symbolizer symbolizer_from(const test::Assembled &object)
{
	return [&object](std::uint64_t address) -> std::optional<SymbolHit> {
		std::optional<SymbolHit> best;
		for (const auto &[name, start] : object.symbols) {
			if (start <= address && address < start + 0x100 && (!best || start > best->start))
				best = SymbolHit{name, start, address - start};
		}
		return best;
	};
}

TEST(Disassembler, SymbolizesBranchTargetsAndRipRelative)
{
	auto object = assemble_or_die(".text\nf: call g\n lea g+8(%rip), %rdi\n jne f\n ret\ng: ret\n");
	auto symbolize = symbolizer_from(object);
	std::uint64_t g = object.symbols.at("g");
	char g8[32];
	std::snprintf(g8, sizeof(g8), "0x%llx", static_cast<unsigned long long>(g + 8));
	Disassembler intel(Syntax::Intel), att(Syntax::Att);
	auto insns = decode_all(intel, object);
	ASSERT_EQ(insns.size(), 5u);
	EXPECT_EQ(intel.format(insns[0], symbolize), "call g");
	EXPECT_EQ(att.format(insns[0], symbolize), "call g");
	EXPECT_EQ(*insns[1].rip_relative, g + 8);
	std::string lea = intel.format(insns[1], symbolize);
	EXPECT_EQ(lea.substr(lea.find("  ;")), std::string("  ; ") + g8 + " <g+0x8>");
	std::string lea_att = att.format(insns[1], symbolize);
	EXPECT_EQ(lea_att.substr(lea_att.find("  #")), std::string("  # ") + g8 + " <g+0x8>");
	EXPECT_EQ(intel.format(insns[2], symbolize), "jnz f");
	EXPECT_EQ(att.format(insns[3]), "ret");
	// Without a symbolizer the target is a plain address, as objdump prints it.
	char target[32];
	std::snprintf(target, sizeof(target), "call 0x%llx", static_cast<unsigned long long>(g));
	EXPECT_EQ(intel.format(insns[0]), target);
}

TEST(Disassembler, HandEncodedBranches)
{
	Disassembler dis;
	// e8 rel32: call to next + 0x10; c3: ret; ff d0: call rax; 0f 05: syscall.
	const std::uint8_t call[] = {0xe8, 0x10, 0x00, 0x00, 0x00};
	auto insn = dis.decode(call, 0x1000);
	ASSERT_TRUE(insn.ok());
	EXPECT_EQ(insn->branch, BranchKind::Call);
	EXPECT_EQ(insn->length, 5);
	EXPECT_EQ(*insn->target, 0x1015u);
	EXPECT_FALSE(insn->indirect);
	const std::uint8_t call_rax[] = {0xff, 0xd0};
	insn = dis.decode(call_rax, 0x1000);
	ASSERT_TRUE(insn.ok());
	EXPECT_EQ(insn->branch, BranchKind::Call);
	EXPECT_TRUE(insn->indirect);
	EXPECT_FALSE(insn->target);
	const std::uint8_t jmp_back[] = {0xeb, 0xfe};  // jmp $
	insn = dis.decode(jmp_back, 0x2000);
	ASSERT_TRUE(insn.ok());
	EXPECT_EQ(*insn->target, 0x2000u);
}

TEST(Disassembler, TruncatedBytesAreAnError)
{
	Disassembler dis;
	const std::uint8_t call[] = {0xe8, 0x10, 0x00, 0x00, 0x00};
	for (size_t n = 0; n < sizeof(call); n++) {
		auto insn = dis.decode(std::span(call, n), 0x1000);
		ASSERT_FALSE(insn.ok()) << n;
		EXPECT_NE(insn.error().message.find("truncated instruction at 0x1000"), std::string::npos)
			<< insn.error().message;
	}
}

TEST(Disassembler, InvalidBytesAreAnError)
{
	Disassembler dis;
	const std::uint8_t push_es[] = {0x06};  // valid in 32-bit mode only
	auto insn = dis.decode(push_es, 0x1000);
	ASSERT_FALSE(insn.ok());
	EXPECT_NE(insn.error().message.find("invalid instruction at 0x1000"), std::string::npos);
	const std::uint8_t too_many_prefixes[16] = {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
						    0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90};
	EXPECT_FALSE(dis.decode(too_many_prefixes, 0x1000).ok());
}

TEST(Disassembler, BranchKindNames)
{
	EXPECT_STREQ(branch_kind_name(BranchKind::Jcc), "jcc");
	EXPECT_STREQ(branch_kind_name(BranchKind::Iret), "iret");
}

}  // namespace
}  // namespace vtice
