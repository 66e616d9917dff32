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
		// ctest runs each test case as its own process, in parallel: every
		// process compiles into a directory of its own.
		std::string templ = ::testing::TempDir() + "vtice_elf_test.XXXXXX";
		if (!mkdtemp(templ.data()))
			return;
		dir_ = templ;
		std::ofstream(dir_ + "/prog.c") << kSource;
		std::string cc = "cc -g -O0 -fno-pie -no-pie -o " + dir_ + "/prog " + dir_ + "/prog.c 2>/dev/null";
		built_ = std::system(cc.c_str()) == 0;
		if (built_)
			nm_ = run_nm(dir_ + "/prog");
	}

	static void TearDownTestSuite()
	{
		if (!dir_.empty())
			std::system(("rm -rf " + dir_).c_str());
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

namespace {

// A bzImage around a payload: 1 setup sector + boot sector, 0x100 bytes of
// protected-mode code, the payload, then the inflated size as the kernel's
// build appends it (Documentation/x86/boot.rst field offsets).
Bytes make_bzimage(const Bytes &payload, std::uint32_t inflated_size)
{
	Bytes image(1024 + 0x100, 0);
	image[0x1f1] = 1;
	image[0x1fe] = 0x55;
	image[0x1ff] = 0xaa;
	std::memcpy(&image[0x202], "HdrS", 4);
	image[0x206] = 0x0f;
	image[0x207] = 0x02;
	std::uint32_t payload_offset = 0x100, length = static_cast<std::uint32_t>(payload.size() + 4);
	std::memcpy(&image[0x248], &payload_offset, 4);
	std::memcpy(&image[0x24c], &length, 4);
	std::size_t at = image.size();
	image.resize(at + payload.size() + 4);
	if (!payload.empty())
		std::memcpy(&image[at], payload.data(), payload.size());
	std::memcpy(&image[at + payload.size()], &inflated_size, 4);
	return image;
}

}  // namespace

// The payloads are made by the compressors' own command-line tools, not by
// anything under test.
TEST_F(symbols_elf, BzImagePayloadsOfEveryCompressorAreInflated)
{
	struct Tool {
		const char *kind;
		const char *command;
	};
	const Tool tools[] = {{"xz", "xz --format=xz --check=crc32 -c"}, {"gzip", "gzip -9 -c"},
			      {"lz4", "lz4 -l -9 -c"}, {"zstd", "zstd -19 -q -c"}};
	auto elf = read_file(dir_ + "/prog");
	ASSERT_TRUE(elf.ok());
	int ran = 0;
	for (const Tool &tool : tools) {
		std::string out = dir_ + "/prog." + tool.kind;
		if (std::system((std::string(tool.command) + " " + dir_ + "/prog > " + out + " 2>/dev/null").c_str()) != 0)
			continue;  // tool missing
		ran++;
		auto payload = read_file(out);
		ASSERT_TRUE(payload.ok());
		Bytes image = make_bzimage(*payload, static_cast<std::uint32_t>(elf->size()));
		auto info = parse_bzimage(image);
		ASSERT_TRUE(info.ok()) << info.error().to_string();
		EXPECT_EQ(info->compression, tool.kind);
		auto inflated = extract_bzimage(image);
		ASSERT_TRUE(inflated.ok()) << tool.kind << ": " << inflated.error().to_string();
		EXPECT_EQ(*inflated, *elf) << tool.kind;
		auto loaded = load_symbols_from(std::make_shared<const Bytes>(image), "bz");
		ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
		EXPECT_EQ(loaded->table->address_of("main"), nm_["main"].first);

		// Half the payload: the header no longer fits; a cut stream with a
		// consistent header is a truncated stream.
		Bytes half(image.begin(), image.end() - static_cast<long>(payload->size() / 2));
		EXPECT_FALSE(extract_bzimage(half).ok()) << tool.kind;
		Bytes cut = make_bzimage(Bytes(payload->begin(), payload->begin() + static_cast<long>(payload->size() / 2)),
					 static_cast<std::uint32_t>(elf->size()));
		auto cut_result = extract_bzimage(cut);
		ASSERT_FALSE(cut_result.ok()) << tool.kind;
		EXPECT_NE(cut_result.error().message.find("truncated"), std::string::npos)
			<< tool.kind << ": " << cut_result.error().message;
		Bytes corrupt = image;
		for (std::size_t i = 0; i < 16; i++)
			corrupt[1024 + 0x100 + payload->size() / 2 + i] ^= 0x5a;
		auto corrupt_result = extract_bzimage(corrupt);
		if (corrupt_result.ok()) {  // lz4 and gzip-less formats carry no checksum
			EXPECT_NE(*corrupt_result, *elf) << tool.kind;
		}
	}
	if (ran == 0)
		GTEST_SKIP() << "no compressor tools (xz, gzip, lz4, zstd) installed";
}

TEST(symbols_loader, UnsupportedCompressionIsNamed)
{
	Bytes payload(32, 0);
	std::memcpy(payload.data(), "BZh9", 4);
	auto got = extract_bzimage(make_bzimage(payload, 1000));
	ASSERT_FALSE(got.ok());
	EXPECT_NE(got.error().message.find("bzip2"), std::string::npos) << got.error().message;
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
