// kallsyms recovery against tables written by kallsyms_writer.cpp.
#include <gtest/gtest.h>

#include <random>

#include "kallsyms_writer.hpp"

using namespace vtice::symbols;
using namespace vtice::symbols::testing;

namespace {

std::vector<FakeSymbol> without_percpu(std::vector<FakeSymbol> symbols)
{
	symbols.erase(symbols.begin(), symbols.begin() + 3);
	return symbols;
}

// Every symbol written comes back with its address, type and name.
void expect_same(const std::vector<FakeSymbol> &written, const KallsymsRecovery &got)
{
	ASSERT_EQ(got.table.size(), written.size());
	EXPECT_EQ(got.layout.num_syms, written.size());
	for (const FakeSymbol &symbol : written) {
		const Symbol *found = got.table.find(symbol.name);
		ASSERT_NE(found, nullptr) << symbol.name;
		EXPECT_EQ(found->address, symbol.address) << symbol.name;
		EXPECT_EQ(found->type, symbol.type) << symbol.name;
	}
}

Bytes surround(const Bytes &tables, std::size_t before, std::size_t after, unsigned seed)
{
	std::mt19937 random(seed);
	Bytes out(before);
	for (auto &b : out)
		b = static_cast<std::uint8_t>(random());
	out.insert(out.end(), tables.begin(), tables.end());
	for (std::size_t i = 0; i < after; i++)
		out.push_back(static_cast<std::uint8_t>(random()));
	return out;
}

struct LayoutCase {
	FakeLayout layout;
	KallsymsAddressMode mode;
	unsigned marker_width;
	const char *style;
};

std::string layout_case_name(const ::testing::TestParamInfo<LayoutCase> &info)
{
	static const char *const layouts[] = {"classic", "v62", "v64"};
	static const char *const modes[] = {"absolute", "relative", "percpu"};
	return std::string(layouts[static_cast<int>(info.param.layout)]) + "_" +
	       modes[static_cast<int>(info.param.mode)] + "_markers" + std::to_string(info.param.marker_width);
}

class symbols_kallsyms_layouts : public ::testing::TestWithParam<LayoutCase> {};

}  // namespace

TEST_P(symbols_kallsyms_layouts, RecoversEverySymbolAndReportsTheLayout)
{
	const LayoutCase &c = GetParam();
	auto symbols = make_fake_symbols(1000);
	if (c.mode == KallsymsAddressMode::relative)
		symbols = without_percpu(symbols);
	WriterOptions options;
	options.layout = c.layout;
	options.mode = c.mode;
	options.marker_width = c.marker_width;
	WrittenTables written = write_kallsyms(symbols, options);
	Bytes image = surround(written.bytes, 4096, 4096, 1);

	auto got = recover_kallsyms_tables(image, 0xffffffff82000000ull);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	expect_same(symbols, *got);
	EXPECT_EQ(got->layout.style(), c.style);
	EXPECT_EQ(got->layout.mode, c.mode);
	EXPECT_EQ(got->layout.marker_width, c.marker_width);
	EXPECT_EQ(got->layout.token_table, 4096 + written.token_table);
	EXPECT_EQ(got->layout.names, 4096 + written.names);
	EXPECT_EQ(got->layout.addresses, 4096 + written.addresses);
	EXPECT_FALSE(got->partial);
}

INSTANTIATE_TEST_SUITE_P(
	AllOrders, symbols_kallsyms_layouts,
	::testing::Values(LayoutCase{FakeLayout::classic, KallsymsAddressMode::absolute_percpu, 8, "classic"},
			  LayoutCase{FakeLayout::v62, KallsymsAddressMode::absolute_percpu, 4, "6.2-style"},
			  LayoutCase{FakeLayout::v64, KallsymsAddressMode::absolute_percpu, 4, "6.4-style"},
			  LayoutCase{FakeLayout::v62, KallsymsAddressMode::relative, 4, "6.2-style"},
			  LayoutCase{FakeLayout::v64, KallsymsAddressMode::relative, 4, "6.4-style"},
			  LayoutCase{FakeLayout::classic, KallsymsAddressMode::absolute, 8, "classic"},
			  LayoutCase{FakeLayout::v64, KallsymsAddressMode::absolute, 4, "6.4-style"}),
	layout_case_name);

TEST(symbols_kallsyms, NamesLongerThan127TokensUseTheTwoByteLength)
{
	auto symbols = make_fake_symbols(300);
	// 'q' and 'z' occur in no token, so each is one code: 200 codes.
	symbols[100].name = std::string(200, 'q') + "z";
	auto got = recover_kallsyms_tables(write_kallsyms(symbols, {}).bytes, 0);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	expect_same(symbols, *got);
}

TEST(symbols_kallsyms, SmallKernelWithEmptyTokens)
{
	auto symbols = make_fake_symbols(40);
	WriterOptions options;
	options.empty_unused_tokens = true;
	auto got = recover_kallsyms_tables(write_kallsyms(symbols, options).bytes, 0);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	expect_same(symbols, *got);
}

TEST(symbols_kallsyms, WindowStartingOffAlignmentUsesTheBaseAddress)
{
	auto symbols = make_fake_symbols(600);
	Bytes image = surround(write_kallsyms(symbols, {}).bytes, 4096, 64, 2);
	// The window starts 3 bytes into the dump; its base address says so.
	std::span<const std::uint8_t> window(image.data() + 3, image.size() - 3);
	auto got = recover_kallsyms_tables(window, 0xffffffff82000003ull);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	expect_same(symbols, *got);
}

TEST(symbols_kallsyms, LookupsThroughTheRecoveredTable)
{
	auto symbols = make_fake_symbols(500);
	auto table = recover_kallsyms(write_kallsyms(symbols, {}).bytes, 0);
	ASSERT_TRUE(table.ok());
	const FakeSymbol &s = symbols[200], &next = symbols[201];
	auto hit = table->lookup(s.address + (next.address - s.address) - 1);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, s.name);
	EXPECT_EQ(hit->offset, next.address - s.address - 1);
	table->set_slide(0x200000);
	EXPECT_EQ(table->address_of(s.name), s.address + 0x200000);
	EXPECT_EQ(table->lookup(s.address + 0x200000)->name, s.name);
}

TEST(symbols_kallsyms, NoTablesIsAClearError)
{
	Bytes noise = surround({}, 1 << 16, 0, 3);
	auto got = recover_kallsyms_tables(noise, 0);
	ASSERT_FALSE(got.ok());
	EXPECT_NE(got.error().message.find("no kallsyms token table"), std::string::npos);
	EXPECT_FALSE(recover_kallsyms_tables({}, 0).ok());
}

TEST(symbols_kallsyms, TruncationGivesAnErrorOrACorrectPrefix)
{
	auto symbols = make_fake_symbols(800);
	for (FakeLayout layout : {FakeLayout::v62, FakeLayout::v64}) {
		WriterOptions options;
		options.layout = layout;
		Bytes tables = write_kallsyms(symbols, options).bytes;
		for (std::size_t cut = 0; cut < tables.size(); cut += 97) {
			auto got = recover_kallsyms_tables(std::span(tables.data(), cut), 0);
			if (!got.ok()) {
				EXPECT_FALSE(got.error().message.empty());
				continue;
			}
			// Whatever is returned must be exactly what was written.
			for (const Symbol &symbol : got->table.symbols()) {
				const FakeSymbol *original = nullptr;
				for (const FakeSymbol &s : symbols)
					if (s.name == got->table.name(symbol))
						original = &s;
				ASSERT_NE(original, nullptr) << "cut " << cut;
				EXPECT_EQ(original->address, symbol.address);
			}
			EXPECT_TRUE(got->table.size() == symbols.size() || got->partial) << "cut " << cut;
		}
	}
}

TEST(symbols_kallsyms, BitFlipsNeverCrash)
{
	auto symbols = make_fake_symbols(700);
	Bytes tables = write_kallsyms(symbols, {}).bytes;
	std::mt19937 random(4);
	for (int round = 0; round < 300; round++) {
		Bytes flipped = tables;
		for (int k = 0; k < 4; k++)
			flipped[random() % flipped.size()] ^= static_cast<std::uint8_t>(1u << (random() % 8));
		auto got = recover_kallsyms_tables(flipped, 0);
		if (got.ok()) {
			EXPECT_LE(got->table.size(), symbols.size());
		}
	}
}
