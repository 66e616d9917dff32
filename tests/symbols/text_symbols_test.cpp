#include <gtest/gtest.h>

#include "symbols/text_symbols.hpp"

using namespace vtice::symbols;

TEST(symbols_text, SystemMap)
{
	auto got = parse_symbol_text("0000000000000000 A fixed_percpu_data\n"
				     "ffffffff81000000 T _text\n"
				     "ffffffff81000000 T startup_64\r\n"
				     "ffffffff81363fa0 t do_sys_openat2\n"
				     "ffffffff81364000 T after\n");
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	EXPECT_EQ(got->flavor, TextFlavor::system_map);
	EXPECT_EQ(got->lines, 5u);
	EXPECT_EQ(got->table.address_of("do_sys_openat2"), 0xffffffff81363fa0u);
	EXPECT_EQ(got->table.address_of("startup_64"), 0xffffffff81000000u);
	EXPECT_EQ(got->table.lookup(0xffffffff81363fa4)->name, "do_sys_openat2");
	EXPECT_FALSE(got->partial);
}

TEST(symbols_text, ProcKallsymsWithModules)
{
	auto got = parse_symbol_text("ffffffff81000000 T _text\n"
				     "ffffffffc0a01000 t ext4_fill_super\t[ext4]\n"
				     "ffffffffc0a02000 T ext4_iget\t[ext4]\n");
	ASSERT_TRUE(got.ok());
	EXPECT_EQ(got->flavor, TextFlavor::kallsyms);
	EXPECT_EQ(got->table.lookup(0xffffffffc0a01010)->name, "ext4:ext4_fill_super");
	EXPECT_EQ(got->table.address_of("ext4:ext4_iget"), 0xffffffffc0a02000u);
}

TEST(symbols_text, DebianPlaceholderSystemMapIsExplained)
{
	auto got = parse_symbol_text("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n");
	ASSERT_FALSE(got.ok());
	EXPECT_NE(got.error().message.find("placeholder"), std::string::npos);
}

TEST(symbols_text, UnprivilegedKallsymsIsExplained)
{
	auto got = parse_symbol_text("0000000000000000 T _text\n0000000000000000 T _stext\n");
	ASSERT_FALSE(got.ok());
	EXPECT_NE(got.error().message.find("kptr_restrict"), std::string::npos);
}

TEST(symbols_text, BadLineKeepsThePrefixAndNamesTheLine)
{
	std::string text = "ffffffff81000000 T _text\nffffffff81000010 T second\nffffffff8100zz20 T broken\n"
			   "ffffffff81000030 T after\n";
	auto got = parse_symbol_text(text);
	ASSERT_TRUE(got.ok());
	EXPECT_EQ(got->lines, 2u);
	ASSERT_TRUE(got->partial);
	EXPECT_NE(got->partial->message.find("line 3"), std::string::npos);
	EXPECT_EQ(got->partial->offset, text.find("ffffffff8100zz20"));
	EXPECT_FALSE(got->table.address_of("after"));
}

TEST(symbols_text, GarbageIsAnError)
{
	EXPECT_FALSE(parse_symbol_text("").ok());
	EXPECT_FALSE(parse_symbol_text("hello world\n").ok());
	EXPECT_FALSE(parse_symbol_text(std::string("ffffffff81000000 T a\0b\n", 24)).ok());
	std::string text = "ffffffff81000000 T _text\n";
	EXPECT_TRUE(looks_like_symbol_text(std::span(reinterpret_cast<const std::uint8_t *>(text.data()), text.size())));
}

TEST(symbols_text, TruncationKeepsOnlyWholeLines)
{
	std::string text = "ffffffff81000000 T _text\nffffffffc0a01000 t f\t[ext4]\nffffffff81000010 T s\n";
	for (std::size_t cut = 0; cut < text.size(); cut++) {
		auto got = parse_symbol_text(std::string_view(text).substr(0, cut));
		if (!got.ok())
			continue;
		if (text[cut - 1] != '\n') {
			EXPECT_TRUE(got->partial) << cut;
		}
		for (const Symbol &symbol : got->table.symbols()) {
			std::string_view name = got->table.name(symbol);
			EXPECT_TRUE(name == "_text" || name == "f" || name == "s") << name;
		}
	}
}

TEST(symbols_text, CrlfFileIsDetectedAsSymbolText)
{
	const std::string text = "ffffffff81000000 T _text\r\n"
				 "ffffffff81363fa0 t do_sys_openat2\r\n";
	auto bytes = std::span(reinterpret_cast<const std::uint8_t *>(text.data()), text.size());
	EXPECT_TRUE(looks_like_symbol_text(bytes));
	auto got = parse_symbol_text(text);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	EXPECT_EQ(got->table.address_of("do_sys_openat2"), 0xffffffff81363fa0u);
}
