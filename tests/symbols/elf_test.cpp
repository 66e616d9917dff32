// ELF .symtab, sections and DWARF lines on a program compiled at test time;
// expected addresses come from nm, expected lines from the source below.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "symbols/bzimage.hpp"
#include "symbols/loader.hpp"

using namespace vtice::symbols;

namespace {

const char kSource[] =
	"int helper_value = 42;\n"                          // line 1
	"static int local_fn(int x) {\n"                    // line 2
	"\treturn x * 3;\n"                                 // line 3
	"}\n"                                               // line 4
	"int global_fn(int y) {\n"                          // line 5
	"\treturn local_fn(y) + helper_value;\n"            // line 6
	"}\n"                                               // line 7
	"int main(void) { return global_fn(1); }\n";        // line 8

class symbols_elf : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		dir_ = ::testing::TempDir() + "vtice_elf_test";
		std::system(("mkdir -p " + dir_).c_str());
		std::ofstream(dir_ + "/prog.c") << kSource;
		std::string cc = "cc -g -O0 -fno-pie -no-pie -o " + dir_ + "/prog " + dir_ + "/prog.c 2>/dev/null";
		built_ = std::system(cc.c_str()) == 0;
		if (built_)
			nm_ = run_nm(dir_ + "/prog");
	}

	void SetUp() override
	{
		if (!built_)
			GTEST_SKIP() << "no C compiler (cc) to build the test program";
	}

	// name -> (address, letter), from binutils' nm.
	static std::map<std::string, std::pair<std::uint64_t, char>> run_nm(const std::string &path)
	{
		std::map<std::string, std::pair<std::uint64_t, char>> out;
		FILE *pipe = popen(("nm " + path).c_str(), "r");
		if (!pipe)
			return out;
		char line[512];
		while (std::fgets(line, sizeof(line), pipe)) {
			unsigned long long address;
			char type, name[400];
			if (std::sscanf(line, "%llx %c %399s", &address, &type, name) == 3)
				out[name] = {address, type};
		}
		pclose(pipe);
		return out;
	}

	static inline std::string dir_;
	static inline bool built_ = false;
	static inline std::map<std::string, std::pair<std::uint64_t, char>> nm_;
};

}  // namespace

TEST_F(symbols_elf, SymtabAgreesWithNm)
{
	auto loaded = load_symbols(dir_ + "/prog");
	ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
	EXPECT_EQ(loaded->kind, SourceKind::elf_symtab);
	for (const char *name : {"main", "global_fn", "local_fn", "helper_value"}) {
		ASSERT_TRUE(nm_.count(name)) << name;
		const Symbol *symbol = loaded->table->find(name);
		ASSERT_NE(symbol, nullptr) << name;
		EXPECT_EQ(symbol->address, nm_[name].first) << name;
		EXPECT_EQ(symbol->type, nm_[name].second) << name;
	}
	auto hit = loaded->table->lookup(nm_["global_fn"].first + 3);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "global_fn");
	EXPECT_EQ(hit->offset, 3u);
}

TEST_F(symbols_elf, DwarfLinesMatchTheSource)
{
	auto loaded = load_symbols(dir_ + "/prog");
	ASSERT_TRUE(loaded.ok());
	ASSERT_TRUE(loaded->lines) << "no DWARF found";
	auto line = loaded->lines->lookup(nm_["local_fn"].first);
	ASSERT_TRUE(line);
	EXPECT_EQ(line->line, 2);
	EXPECT_NE(line->file.find("prog.c"), std::string::npos);
	EXPECT_EQ(loaded->lines->lookup(nm_["main"].first)->line, 8);
	EXPECT_FALSE(loaded->lines->lookup(0x10));
}

TEST_F(symbols_elf, SectionsAndVirtualAddresses)
{
	auto loaded = load_symbols(dir_ + "/prog");
	ASSERT_TRUE(loaded.ok());
	ASSERT_TRUE(loaded->image);
	const ElfImage &image = *loaded->image;
	const ElfSection *text = image.section(".text");
	ASSERT_NE(text, nullptr);
	EXPECT_EQ(image.section_bytes(*text).size(), text->size);
	// helper_value's initial value is in .data: read it by virtual address.
	auto bytes = image.at_vaddr(nm_["helper_value"].first, 4);
	ASSERT_EQ(bytes.size(), 4u);
	EXPECT_EQ(*read_le<std::uint32_t>(bytes, 0), 42u);
	EXPECT_TRUE(image.at_vaddr(0x10, 4).empty());
}

TEST_F(symbols_elf, TruncatedElfIsAnErrorOrAPrefix)
{
	auto whole = read_file(dir_ + "/prog");
	ASSERT_TRUE(whole.ok());
	for (std::size_t cut : {std::size_t{3}, std::size_t{40}, std::size_t{100}, whole->size() / 2, whole->size() - 1}) {
		auto bytes = std::make_shared<const Bytes>(whole->begin(), whole->begin() + cut);
		auto loaded = load_symbols_from(bytes, "cut");
		if (!loaded.ok()) {
			EXPECT_FALSE(loaded.error().message.empty());
		}
	}
}

TEST_F(symbols_elf, BzImageWithXzPayloadIsInflated)
{
	// The payload is compressed by the xz tool, not by anything under test.
	std::string xz = dir_ + "/prog.xz";
	if (std::system(("xz --format=xz --check=crc32 -k -c " + dir_ + "/prog > " + xz).c_str()) != 0)
		GTEST_SKIP() << "xz tool missing";
	auto elf = read_file(dir_ + "/prog");
	auto payload = read_file(xz);
	ASSERT_TRUE(elf.ok() && payload.ok());
	Bytes image(1024 + 0x100, 0);  // 1 setup sector + boot sector, then 0x100 bytes of code
	image[0x1f1] = 1;
	image[0x1fe] = 0x55;
	image[0x1ff] = 0xaa;
	std::memcpy(&image[0x202], "HdrS", 4);
	image[0x206] = 0x0f;
	image[0x207] = 0x02;
	std::uint32_t payload_offset = 0x100, length = static_cast<std::uint32_t>(payload->size() + 4);
	std::memcpy(&image[0x248], &payload_offset, 4);
	std::memcpy(&image[0x24c], &length, 4);
	image.insert(image.end(), payload->begin(), payload->end());
	std::uint32_t inflated = static_cast<std::uint32_t>(elf->size());
	image.insert(image.end(), reinterpret_cast<std::uint8_t *>(&inflated), reinterpret_cast<std::uint8_t *>(&inflated) + 4);

	auto info = parse_bzimage(image);
	ASSERT_TRUE(info.ok()) << info.error().to_string();
	EXPECT_EQ(info->compression, "xz");
	auto out = extract_bzimage(image);
	ASSERT_TRUE(out.ok()) << out.error().to_string();
	EXPECT_EQ(*out, *elf);
	auto loaded = load_symbols_from(std::make_shared<const Bytes>(image), "bz");
	ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
	EXPECT_EQ(loaded->table->address_of("main"), nm_["main"].first);

	Bytes truncated(image.begin(), image.end() - static_cast<long>(payload->size() / 2));
	auto cut = extract_bzimage(truncated);
	ASSERT_FALSE(cut.ok());
	EXPECT_NE(cut.error().message.find("truncated"), std::string::npos) << cut.error().message;
	Bytes corrupt = image;
	corrupt[1024 + 0x100 + payload->size() / 2] ^= 0x40;
	EXPECT_FALSE(extract_bzimage(corrupt).ok());
}

TEST(symbols_loader, MissingFileAndUnknownContent)
{
	auto missing = load_symbols("/nonexistent/vmlinuz");
	ASSERT_FALSE(missing.ok());
	EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
	auto text = load_symbols_from(std::make_shared<const Bytes>(Bytes(5000, 'x')), "junk");
	ASSERT_FALSE(text.ok());
	EXPECT_NE(text.error().message.find("not an ELF, bzImage"), std::string::npos);
}
