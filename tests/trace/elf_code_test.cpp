// ElfCodeSource against objcopy/objdump: a small linked snippet, and the
// real Debian vmlinux (skipped when tools/kernel.sh has not unpacked it).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "assemble.hpp"
#include "code_source.hpp"
#include "disassembler.hpp"

namespace vtice::trace {
namespace {

TEST(ElfCodeSource, ServesTheLinkedTextAtItsAddress)
{
	std::string error;
	auto object = test::assemble(".text\nf: call g\n nop\ng: ret\n", 0xffffffff81000000ull, error);
	ASSERT_TRUE(object) << error;
	auto source = ElfCodeSource::open(object->elf_path, 0);
	ASSERT_TRUE(source.ok()) << source.error().to_string();
	auto bytes = source->read(object->text_address, 64);
	ASSERT_GE(bytes.size(), object->text.size());
	EXPECT_TRUE(std::equal(object->text.begin(), object->text.end(), bytes.begin()));
	EXPECT_TRUE(source->read(0x1000, 1).empty());
	// A KASLR slide moves everything.
	auto slid = ElfCodeSource::open(object->elf_path, 0x200000);
	ASSERT_TRUE(slid.ok());
	EXPECT_TRUE(slid->read(object->text_address, 1).empty());
	EXPECT_EQ(slid->read(object->text_address + 0x200000, 1)[0], object->text[0]);
}

TEST(ElfCodeSource, RejectsWhatIsNotAnElfImage)
{
	auto missing = ElfCodeSource::open("/nonexistent/vmlinux", 0);
	ASSERT_FALSE(missing.ok());
	EXPECT_NE(missing.error().message.find("/nonexistent/vmlinux: No such file"), std::string::npos);
	auto text = ElfCodeSource::open(std::string(VTICE_TEST_DATA) + "/fixtures/calls/snippet.S", 0);
	ASSERT_FALSE(text.ok());
	EXPECT_NE(text.error().message.find("not an ELF file"), std::string::npos);
}

std::string vmlinux_path()
{
	std::string dir = test::run_command(std::string(VTICE_TEST_DATA) + "/../tools/kernel.sh " + VTICE_KERNEL_DIR +
					    " 2>/dev/null | tail -1");
	while (!dir.empty() && dir.back() == '\n')
		dir.pop_back();
	return dir + "/vmlinux";
}

// The first 64 KiB of the real kernel text: every instruction objdump finds
// has the same length and, for direct branches, the same target.
TEST(ElfCodeSource, RealVmlinuxDecodesLikeObjdump)
{
	std::string path = vmlinux_path();
	if (!std::filesystem::exists(path))
		GTEST_SKIP() << "no unpacked Debian kernel at " << VTICE_KERNEL_DIR << " (run tools/kernel.sh)";
	auto source = ElfCodeSource::open(path, 0);
	ASSERT_TRUE(source.ok()) << source.error().to_string();
	std::string listing = test::run_command("objdump -d --no-show-raw-insn --start-address=0xffffffff81000000 "
						"--stop-address=0xffffffff81010000 " + path);
	std::istringstream lines(listing);
	std::string line;
	Disassembler dis;
	std::size_t compared = 0, branches = 0;
	std::vector<std::pair<std::uint64_t, std::string>> rows;
	while (std::getline(lines, line)) {
		size_t colon = line.find(":\t");
		if (colon == std::string::npos || line.find(' ') < colon)
			continue;
		rows.emplace_back(std::stoull(line.substr(0, colon), nullptr, 16), line.substr(colon + 2));
	}
	ASSERT_GT(rows.size(), 1000u);
	for (size_t i = 0; i + 1 < rows.size(); i++) {
		// objdump cuts the last instruction at --stop-address into .byte/(bad) rows.
		auto cut = [](const std::string &text) { return text.rfind(".byte", 0) == 0 || text == "(bad)"; };
		if (cut(rows[i].second) || cut(rows[i + 1].second))
			continue;
		auto insn = dis.decode(source->read(rows[i].first, 15), rows[i].first);
		ASSERT_TRUE(insn.ok()) << rows[i].second << ": " << insn.error().to_string();
		EXPECT_EQ(insn->next(), rows[i + 1].first) << rows[i].second;
		bool direct = insn->target && (insn->branch == BranchKind::Call || insn->branch == BranchKind::Jmp ||
					      insn->branch == BranchKind::Jcc);
		if (direct) {
			std::istringstream fields(rows[i].second);
			std::string mnemonic, target;
			fields >> mnemonic >> target;
			EXPECT_EQ(*insn->target, std::stoull(target, nullptr, 16)) << rows[i].second;
			branches++;
		}
		compared++;
	}
	EXPECT_GT(branches, 100u);
	RecordProperty("instructions_compared", static_cast<int>(compared));
}

}  // namespace
}  // namespace vtice::trace
