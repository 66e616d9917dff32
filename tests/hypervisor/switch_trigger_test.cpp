// The switch trigger's place (hypervisor/debug/switch_trigger.c):
//  - encodings by hand against the SDM (Vol. 2B MOV 89 /r; Vol. 2A 2.2.1.6
//    RIP-relative addressing, Table 2-3 SIB with no base and no index);
//  - Debian 6.1's own __switch_to, against binutils: nm names the function
//    and the per-CPU variables, objdump says which instruction stores to
//    current_task.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "symbols/elf_image.hpp"
#include "../symbols/kernel_dir.hpp"
#include "../console/command_output.hpp"

extern "C" {
#include "../../hypervisor/core/os.h"
#include "../../hypervisor/debug/switch_trigger.h"
}

namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint64_t kIp = 0xffffffff810311a4ull;	// where 6.1 has its store

// The store's GS-relative address, or nullopt; *reg gets its source register.
std::optional<u64> gs_store(const Bytes &b, std::uint64_t ip, u32 *reg = nullptr)
{
	vt_gs_store st{};
	if (!vt_insn_gs_store(b.data(), static_cast<std::uint32_t>(b.size()), ip, &st))
		return std::nullopt;
	if (reg)
		*reg = st.reg;
	return st.gs_offset;
}

TEST(GsStore, RipRelativeWrapsToTheZeroBasedOffset)
{
	// mov %rbx,%gs:0x7efee9d4(%rip): 0xffffffff810311ab + 0x7efee9d4 = 0x1fb80 (mod 2^64).
	u32 reg = 99;
	EXPECT_EQ(gs_store({0x65, 0x48, 0x89, 0x1d, 0xd4, 0xe9, 0xfe, 0x7e}, kIp, &reg), 0x1fb80u);
	EXPECT_EQ(reg, 3u) << "ModRM.reg 011: RBX";
}

TEST(GsStore, AbsoluteDisp32ThroughSibWithNeitherBaseNorIndex)
{
	// mov %rax,%gs:0x1fb80: ModRM 04 (mod 00, rm 100 = SIB), SIB 25 (index 100, base 101).
	EXPECT_EQ(gs_store({0x65, 0x48, 0x89, 0x04, 0x25, 0x80, 0xfb, 0x01, 0x00}, kIp), 0x1fb80u);
	// A negative disp32 is sign-extended, as the CPU does in 64-bit mode.
	EXPECT_EQ(gs_store({0x65, 0x48, 0x89, 0x04, 0x25, 0x00, 0x00, 0x00, 0x80}, kIp), 0xffffffff80000000ull);
	// Index 100 is "none" whatever the scale (SIB E5: scale 8): still disp32 alone.
	EXPECT_EQ(gs_store({0x65, 0x48, 0x89, 0x04, 0xe5, 0x80, 0xfb, 0x01, 0x00}, kIp), 0x1fb80u);
}

TEST(GsStore, HighRegistersTakeRexR)
{
	// mov %r12,%gs:...(%rip): REX 4C (W and R), ModRM.reg 100.
	u32 reg = 99;
	EXPECT_TRUE(gs_store({0x65, 0x4c, 0x89, 0x25, 0xd4, 0xe9, 0xfe, 0x7e}, kIp, &reg));
	EXPECT_EQ(reg, 12u);
}

TEST(GsStore, EverythingElseIsRefused)
{
	const std::vector<Bytes> others = {
		{0x48, 0x89, 0x1d, 0xd4, 0xe9, 0xfe, 0x7e},		// no GS: an ordinary global
		{0x65, 0x48, 0x8b, 0x1d, 0xd4, 0xe9, 0xfe, 0x7e},	// a load (8B), not a store
		{0x65, 0x89, 0x1d, 0xd4, 0xe9, 0xfe, 0x7e},		// 32 bits: no REX.W
		{0x65, 0x66, 0x48, 0x89, 0x1d, 0xd4, 0xe9, 0xfe, 0x7e},	// an operand-size prefix
		{0x65, 0x67, 0x48, 0x89, 0x1d, 0xd4, 0xe9, 0xfe, 0x7e},	// 32-bit addressing
		{0x65, 0x48, 0x89, 0x5b, 0x08},				// mod 01: off a base register
		{0x65, 0x48, 0x89, 0x04, 0x24},				// SIB with a base (RSP)
		{0x65, 0x48, 0x89, 0x04, 0x05, 0, 0, 0, 0},		// SIB with an index (RAX) and no base
		{0x65, 0x4a, 0x89, 0x04, 0x25, 0, 0, 0, 0},		// index 100 with REX.X: R12, not none
		{0x65, 0x48, 0x89, 0xd8},				// register to register
	};
	for (const Bytes &b : others)
		EXPECT_FALSE(gs_store(b, kIp)) << "bytes " << b.size() << " long, opcode " << int(b[2]);
}

// Two stores of the same per-CPU pointer would leave the trigger's place in doubt.
TEST(SwitchTriggerFind, OneStoreOnlyAndTheTextMustDecode)
{
	const std::uint64_t gs = 0xffff88807fc00000ull, ptr = gs + 0x1fb80;
	const Bytes store = {0x65, 0x48, 0x89, 0x04, 0x25, 0x80, 0xfb, 0x01, 0x00};
	Bytes text = {0x90};
	text.insert(text.end(), store.begin(), store.end());
	text.push_back(0xc3);
	u64 trigger = 0;
	ASSERT_EQ(vt_switch_trigger_find(text.data(), text.size(), 0x1000, gs, ptr, &trigger), 0);
	EXPECT_EQ(trigger, 0x1001u) << "the store itself";
	EXPECT_EQ(vt_switch_trigger_find(text.data(), text.size(), 0x1000, gs, ptr + 8, &trigger), -VT_ENOENT);
	Bytes twice = text;
	twice.insert(twice.begin(), store.begin(), store.end());
	EXPECT_EQ(vt_switch_trigger_find(twice.data(), twice.size(), 0x1000, gs, ptr, &trigger), -VT_EINVAL);
	Bytes cut(store.begin(), store.end() - 1);
	EXPECT_EQ(vt_switch_trigger_find(cut.data(), cut.size(), 0x1000, gs, ptr, &trigger), -VT_EINVAL);
}

struct KernelSymbols {
	std::uint64_t switch_to = 0, size = 0;
	std::uint64_t current_task = 0, top_of_stack = 0;
};

std::uint64_t hex_value(const std::string &s)
{
	return std::stoull(s, nullptr, 16);
}

// nm -S: "ADDR SIZE TYPE NAME" for __switch_to, "ADDR TYPE NAME" lines otherwise.
KernelSymbols read_symbols(const std::filesystem::path &dbg)
{
	KernelSymbols k;
	std::istringstream in(vtice::test::command_output(
		"nm -S '" + dbg.string() + "' | grep -wE '__switch_to|current_task|cpu_current_top_of_stack'"));
	for (std::string line; std::getline(in, line);) {
		std::istringstream f(line);
		std::vector<std::string> w;
		for (std::string word; f >> word;)
			w.push_back(word);
		if (w.size() == 4 && w[3] == "__switch_to") {
			k.switch_to = hex_value(w[0]);
			k.size = hex_value(w[1]);
		} else if (w.size() >= 3 && w.back() == "current_task") {
			k.current_task = hex_value(w[0]);
		} else if (w.size() >= 3 && w.back() == "cpu_current_top_of_stack") {
			k.top_of_stack = hex_value(w[0]);
		}
	}
	return k;
}

// objdump's word for it: the instruction that stores to <name>.
std::uint64_t objdump_store(const std::filesystem::path &dbg, const KernelSymbols &k,
				  const std::string &name)
{
	char range[96];
	std::snprintf(range, sizeof(range), "--start-address=%#llx --stop-address=%#llx",
		      static_cast<unsigned long long>(k.switch_to),
		      static_cast<unsigned long long>(k.switch_to + k.size));
	std::istringstream in(vtice::test::command_output("objdump -d --no-show-raw-insn " +
							  std::string(range) + " '" + dbg.string() + "'"));
	const std::regex insn("^\\s*([0-9a-f]+):\\s+(.*)$");
	for (std::string line; std::getline(in, line);) {
		std::smatch m;
		if (!std::regex_match(line, m, insn))
			continue;
		const std::string text = m[2];
		if (text.rfind("mov ", 0) == 0 && text.find(",%gs:") != std::string::npos &&
		    text.find("<" + name + ">") != std::string::npos)
			return hex_value(m[1]);
	}
	return 0;
}

TEST(SwitchTriggerFind, DebianKernelsSwitchToAgreesWithObjdump)
{
	int checked = 0;
	for (const auto &dir : vtice::symbols::testing::debian_kernel_dirs()) {
		const auto dbg = dir / "vmlinux-dbg";
		if (!std::filesystem::exists(dbg))
			continue;	// 6.12: no symbol table here; the Bochs runs check it live
		KernelSymbols k = read_symbols(dbg);
		ASSERT_TRUE(k.switch_to && k.size && k.current_task && k.top_of_stack) << dbg;
		auto file = vtice::symbols::open_file((dir / "vmlinux").string());
		ASSERT_TRUE(file.ok()) << file.error().to_string();
		auto image = vtice::symbols::ElfImage::parse(*file);
		ASSERT_TRUE(image.ok()) << image.error().to_string();
		auto text = image->at_vaddr(k.switch_to, k.size);
		ASSERT_EQ(text.size(), k.size);
		const std::uint64_t gs = 0xffff88807fc00000ull;	// any CPU's: only the sum counts
		for (const auto &[name, var] : {std::pair{std::string("current_task"), k.current_task},
						 std::pair{std::string("cpu_current_top_of_stack"), k.top_of_stack}}) {
			std::uint64_t expected = objdump_store(dbg, k, name);
			u64 trigger = 0;
			ASSERT_NE(expected, 0u) << "objdump shows no store to " << name << " in " << dbg;
			ASSERT_EQ(vt_switch_trigger_find(text.data(), static_cast<std::uint32_t>(text.size()),
							 k.switch_to, gs, gs + var, &trigger), 0) << name;
			EXPECT_EQ(trigger, expected) << name << " in " << dir.filename();
		}
		checked++;
	}
	if (!checked)
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux-dbg (make kernel-debug)";
}

}  // namespace
