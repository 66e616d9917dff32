// Expressions against hand-computed values.
#include <gtest/gtest.h>

#include <map>

#include "expr.hpp"

using namespace vtice::dbg;
using vtice::Result;
using vtice::make_error;

namespace {

ExprContext context()
{
	ExprContext ctx;
	ctx.reg = [](std::string_view name) -> Result<std::uint64_t> {
		static const std::map<std::string, std::uint64_t, std::less<>> regs = {
			{"rax", 5}, {"rdi", 0xffffff9c}, {"rsp", 0xffffc90000637b10}};
		auto it = regs.find(name);
		if (it == regs.end())
			return make_error("no register named '" + std::string(name) + "'");
		return it->second;
	};
	ctx.mem = [](std::uint64_t address, unsigned size) -> Result<std::uint64_t> {
		if (address != 0xffffc90000637b10)
			return make_error("cannot read memory");
		std::uint64_t v = 0x1122334455667788;
		return size == 8 ? v : v & ((1ull << (8 * size)) - 1);
	};
	ctx.sym = [](std::string_view name) -> std::optional<std::uint64_t> {
		if (name == "do_sys_openat2")
			return 0xffffffff81363fa0;
		return std::nullopt;
	};
	return ctx;
}

std::uint64_t eval(const char *text)
{
	auto r = evaluate_expression(text, context());
	EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error().to_string());
	return r.ok() ? *r : 0xdead;
}

std::string error_of(const char *text, std::uint64_t *offset = nullptr)
{
	auto r = evaluate_expression(text, context());
	EXPECT_FALSE(r.ok()) << text << " should fail";
	if (r.ok())
		return "";
	if (offset)
		*offset = r.error().offset.value_or(~0ull);
	return r.error().message;
}

}  // namespace

TEST(Expr, ArithmeticAndPrecedence)
{
	EXPECT_EQ(eval("1 + 2 * 3"), 7u);
	EXPECT_EQ(eval("(1 + 2) * 3"), 9u);
	EXPECT_EQ(eval("0x10 - 1"), 15u);
	EXPECT_EQ(eval("1 << 4 | 1"), 17u);
	EXPECT_EQ(eval("7 & 3 == 3"), 1u);  // C: == binds tighter than &
	EXPECT_EQ(eval("-1"), ~0ull);
	EXPECT_EQ(eval("~0 >> 60"), 15u);
	EXPECT_EQ(eval("10 % 4"), 2u);
	EXPECT_EQ(eval("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 4 || 0"), 0u);
	EXPECT_EQ(eval("!0 + !5"), 1u);
}

TEST(Expr, RegistersSymbolsMemory)
{
	EXPECT_EQ(eval("$rax + 1"), 6u);
	EXPECT_EQ(eval("$rdi == 0xffffff9c"), 1u);
	EXPECT_EQ(eval("do_sys_openat2+0x10"), 0xffffffff81363fb0u);
	EXPECT_EQ(eval("*$rsp"), 0x1122334455667788u);
	EXPECT_EQ(eval("*(u32*)$rsp"), 0x55667788u);
	EXPECT_EQ(eval("*(u8*)$rsp == 0x88 && $rax != 0"), 1u);
}

// gdb's spellings of the same reads: C integer types (LP64 sizes) and &name.
TEST(Expr, CIntegerPointerCastsAndAddressOf)
{
	EXPECT_EQ(eval("*(char *)$rsp"), 0x88u);
	EXPECT_EQ(eval("*(unsigned short*)$rsp"), 0x7788u);
	EXPECT_EQ(eval("*( int * )$rsp"), 0x55667788u);
	EXPECT_EQ(eval("*(unsigned long long *)$rsp"), 0x1122334455667788u);
	EXPECT_EQ(eval("*(long*)$rsp"), 0x1122334455667788u);
	EXPECT_EQ(eval("*(uint16_t *)$rsp"), 0x7788u);
	EXPECT_EQ(eval("&do_sys_openat2 + 0x10"), 0xffffffff81363fb0u);
	EXPECT_NE(error_of("& 5").find("'&' takes a symbol name"), std::string::npos);
	EXPECT_FALSE(evaluate_expression("*(long short *)$rsp", context()).ok());
	EXPECT_FALSE(evaluate_expression("*(long long long *)$rsp", context()).ok());
	auto cast = integer_pointer_cast("(unsigned char *) rest");
	ASSERT_TRUE(cast);
	EXPECT_EQ(cast->size, 1u);
	EXPECT_EQ(cast->length, 17u);  // "(unsigned char *)"
	EXPECT_FALSE(integer_pointer_cast("(struct file *)x"));
}

TEST(Expr, ErrorsNameTheOffset)
{
	std::uint64_t at = 0;
	EXPECT_NE(error_of("$rax + $nope", &at).find("no register named 'nope'"), std::string::npos);
	EXPECT_EQ(at, 7u);
	EXPECT_NE(error_of("missing_sym + 1", &at).find("unknown symbol 'missing_sym'"), std::string::npos);
	EXPECT_EQ(at, 0u);
	EXPECT_NE(error_of("1 / 0").find("division by zero"), std::string::npos);
	EXPECT_NE(error_of("(1 + 2").find("missing ')'"), std::string::npos);
	EXPECT_NE(error_of("1 2", &at).find("unexpected"), std::string::npos);
	EXPECT_EQ(at, 2u);
	EXPECT_NE(error_of("*0x10").find("cannot read memory"), std::string::npos);
	EXPECT_NE(error_of("0x").find("number without digits"), std::string::npos);
	EXPECT_NE(error_of("12ab").find("bad digit"), std::string::npos);
	EXPECT_NE(error_of("0x1ffffffffffffffff").find("64 bits"), std::string::npos);
	EXPECT_NE(error_of("").find("ends early"), std::string::npos);
	EXPECT_NE(error_of("1 +").find("ends early"), std::string::npos);
	EXPECT_NE(error_of("$").find("register name expected"), std::string::npos);
	std::string deep(500, '(');
	EXPECT_FALSE(evaluate_expression(deep, context()).ok());
	std::string negs(500, '-');
	EXPECT_FALSE(evaluate_expression(negs + "1", context()).ok());
}

#include "symbol_source.hpp"

TEST(KallsymsText, ParsesAndSymbolizes)
{
	auto t = parse_kallsyms_text("0000000000000000 A fixed_percpu_data\r\n"
				     "ffffffff81000000 T _text\n"
				     "ffffffff81000000 T startup_64\n"
				     "ffffffff81363fa0 t do_sys_openat2\n"
				     "ffffffff81364630 T __x64_sys_openat\n"
				     "ffffffffc0002000 t helper\t[ext4]\n",
				     "test");
	ASSERT_TRUE(t.ok()) << t.error().message;
	EXPECT_EQ((*t)->size(), 6u);
	EXPECT_EQ(*(*t)->lookup("do_sys_openat2"), 0xffffffff81363fa0u);
	EXPECT_EQ(*(*t)->lookup("helper"), 0xffffffffc0002000u);
	auto hit = (*t)->symbolize(0xffffffff81363fb0);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "do_sys_openat2");
	EXPECT_EQ(hit->offset, 0x10u);
	EXPECT_FALSE((*t)->symbolize(0x401000));  // user space is never a kernel symbol
	auto slid = (*t)->slid(0x800000);
	EXPECT_EQ(*slid->lookup("do_sys_openat2"), 0xffffffff81b63fa0u);
	EXPECT_EQ(*slid->lookup("fixed_percpu_data"), 0u);  // per-cpu offsets do not slide
}

// addr: and fn: probes go on code only: the type letter of the symbol
// that covers the address says (a text alias at the same address counts).
TEST(KallsymsText, TellsCodeFromData)
{
	auto t = parse_kallsyms_text("ffffffff81363fa0 t do_sys_openat2\n"
				     "ffffffff81364630 T __x64_sys_openat\n"
				     "ffffffff82a079c0 D jiffies\n"
				     "ffffffff82a079c0 D jiffies_64\n"
				     "ffffffff82a07a00 d other_data\n"
				     "ffffffff82c00000 D alias_data\n"
				     "ffffffff82c00000 T alias_code\n",
				     "test");
	ASSERT_TRUE(t.ok()) << t.error().message;
	EXPECT_TRUE((*t)->text_at(0xffffffff81363fa0));
	EXPECT_TRUE((*t)->text_at(0xffffffff81363fbc));	// inside it
	EXPECT_FALSE((*t)->text_at(0xffffffff82a079c0));
	EXPECT_FALSE((*t)->text_at(0xffffffff82a079c8));
	EXPECT_TRUE((*t)->text_at(0xffffffff82c00004));
	EXPECT_FALSE((*t)->text_at(0x401000));	// nothing covers user space
}

TEST(KallsymsText, ErrorsNameTheLine)
{
	auto bad = parse_kallsyms_text("ffffffff81000000 T _text\nnot a symbol line\n", "f");
	ASSERT_FALSE(bad.ok());
	EXPECT_NE(bad.error().message.find("line 2"), std::string::npos);
	EXPECT_EQ(bad.error().offset, 25u);
	EXPECT_FALSE(parse_kallsyms_text("zzzzzzzz T x\n", "f").ok());
	EXPECT_FALSE(parse_kallsyms_text("", "f").ok());
}
