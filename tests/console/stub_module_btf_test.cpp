// args-> of a module's function through a debug session
// (console/stub_module_btf.hpp): the kernel's list btf_modules laid out in
// a target's memory at pahole's offsets in Debian's 6.1 vmlinux, with the
// raw BTF of Debian's msr.ko (objcopy's dump of its .BTF section) where the
// kernel keeps it; the parameters msr_ioctl has in the kernel's source
// (arch/x86/kernel/msr.c: msr_ioctl(struct file *file, unsigned int ioc,
// unsigned long arg)); lists that loop, a module the kernel keeps no BTF
// of, and a size that is not BTF's.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../symbols/kernel_dir.hpp"
#include "memory_target.hpp"
#include "probe_params.hpp"
#include "stub_module_btf.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

constexpr std::uint64_t kHead = 0xffffffff82c1d2a0ull;	// btf_modules
constexpr std::uint64_t kCpuid = 0xffff888004a10000ull, kMsr = 0xffff888004a20000ull;	// struct btf_module
constexpr std::uint64_t kCpuidBtf = 0xffff888004b10000ull, kMsrBtf = 0xffff888004b20000ull;	// struct btf
constexpr std::uint64_t kMsrData = 0xffffc90000a30000ull;

// The .BTF section of the kernel package's msr.ko, as objcopy dumps it.
std::vector<std::uint8_t> msr_btf(const std::filesystem::path &kernel_dir)
{
	std::error_code error;
	auto ko = symbols::testing::debian_module(kernel_dir, "msr");
	if (!ko)
		return {};
	std::string tmp = "/tmp/vtice-msr-btf-" + std::to_string(getpid());
	std::string dump = "objcopy --dump-section .BTF=" + tmp + ".btf " + tmp + ".ko " + tmp + ".out";
	std::vector<std::uint8_t> bytes;
	if (symbols::testing::unpack_module(*ko, tmp + ".ko") && std::system(dump.c_str()) == 0) {
		std::ifstream in(tmp + ".btf", std::ios::binary);
		bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
	}
	for (const char *suffix : {".ko", ".btf", ".out"})
		std::filesystem::remove(tmp + suffix, error);
	return bytes;
}

// The progress a long read shows, kept.
class ProgressLog final : public dbg::Output {
public:
	void write(std::string_view) override {}
	void progress(std::string_view line) override { lines.emplace_back(line); }
	std::vector<std::string> lines;
};

class StubModuleBtf : public ::testing::Test {
protected:
	std::string vmlinux;
	test::GuestMemory mem;
	std::unique_ptr<dbg::Session> session;
	ProgressLog log;
	long list = -1, btf = -1, name = -1, data = -1, data_size = -1;
	std::vector<std::uint8_t> blob;

	void SetUp() override
	{
		auto dir = symbols::testing::debian_kernel_dir();
		if (!dir)
			GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
		if (test::command_output("command -v pahole").empty())
			GTEST_SKIP() << "pahole (Debian's pahole package) is not installed";
		vmlinux = (*dir / "vmlinux").string();
		list = test::pahole_offset("btf_module", "list", vmlinux);
		btf = test::pahole_offset("btf_module", "btf", vmlinux);
		name = pahole_array_offset("btf", "name");
		data = test::pahole_offset("btf", "data", vmlinux);
		data_size = test::pahole_offset("btf", "data_size", vmlinux);
		ASSERT_TRUE(list >= 0 && btf >= 0 && name >= 0 && data >= 0 && data_size >= 0)
			<< "pahole shows struct btf_module's and struct btf's fields";
		blob = msr_btf(*dir);
		ASSERT_GT(blob.size(), 24u) << "objcopy dumps msr.ko's .BTF";
		session = std::make_unique<dbg::Session>(std::make_unique<test::MemoryTarget>(mem));
		session->set_symbols(std::make_unique<dbg::SymbolList>(
			std::vector<dbg::SymbolList::Entry>{{kHead, "btf_modules", 'd'}}, "test"));
	}

	// pahole's "char name[56]; /* 144 56 */": its offset.
	long pahole_array_offset(const std::string &type, const std::string &member)
	{
		std::string out = test::command_output("pahole -F btf -C " + type + " " + vmlinux);
		std::smatch m;
		return std::regex_search(out, m, std::regex(" " + member + "\\[\\d+\\];\\s*/\\*\\s*(\\d+)\\s"))
			       ? std::stol(m[1])
			       : -1;
	}

	void put_btf(std::uint64_t at, std::uint64_t entry, const std::string &module, std::uint64_t bytes,
		     std::uint32_t size)
	{
		mem.put_value<std::uint64_t>(entry + btf, at);
		char raw[56] = {};
		std::memcpy(raw, module.data(), module.size());
		mem.put(at + name, raw, sizeof(raw));
		mem.put_value<std::uint64_t>(at + data, bytes);
		mem.put_value<std::uint32_t>(at + data_size, size);
	}

	// btf_modules -> each entry's list node, in order, and back.
	void link(const std::vector<std::uint64_t> &entries)
	{
		std::vector<std::uint64_t> nodes{kHead};
		for (std::uint64_t e : entries)
			nodes.push_back(e + list);
		for (std::size_t i = 0; i < nodes.size(); i++)
			mem.put_value<std::uint64_t>(nodes[i], nodes[(i + 1) % nodes.size()]);
	}

	// The kernel's msr and cpuid modules, msr's BTF where the kernel keeps it.
	void load_msr_and_cpuid()
	{
		put_btf(kCpuidBtf, kCpuid, "cpuid", 0, 0);
		put_btf(kMsrBtf, kMsr, "msr", kMsrData, static_cast<std::uint32_t>(blob.size()));
		mem.put(kMsrData, blob.data(), blob.size());
		link({kCpuid, kMsr});
	}

	Result<std::vector<probes::Param>> params_of(const std::string &function, const std::string &module)
	{
		auto types = std::make_shared<ProbeTypes>(
			std::make_shared<KernelBtf>(vmlinux),
			stub_module_types(*session, [module](std::string_view, std::string_view) { return Result<std::string>(module); },
					  log));
		return kernel_params(types)(function);
	}
};

}  // namespace

TEST_F(StubModuleBtf, AModulesFunctionIsTypedByTheBtfTheKernelKeepsForIt)
{
	load_msr_and_cpuid();
	auto params = params_of("msr_ioctl", "msr");
	ASSERT_TRUE(params) << params.error().message;
	ASSERT_EQ(params->size(), 3u);
	EXPECT_EQ((*params)[0].name, "file");
	EXPECT_EQ((*params)[0].type, "struct file *") << "the kernel's struct file, under the module's ids";
	EXPECT_EQ((*params)[1].name, "ioc");
	EXPECT_EQ((*params)[1].bytes, 4u);
	EXPECT_FALSE((*params)[1].is_signed);
	EXPECT_EQ((*params)[2].name, "arg");
	EXPECT_EQ((*params)[2].bytes, 8u);
	ASSERT_FALSE(log.lines.empty()) << "the read shows its progress";
	EXPECT_EQ(log.lines.back(), "module msr's BTF: " + std::to_string(blob.size()) + " bytes of " +
					    std::to_string(blob.size()) + " bytes");
}

TEST_F(StubModuleBtf, WhatCannotBeReadSaysWhy)
{
	load_msr_and_cpuid();
	auto none = params_of("msr_ioctl", "vtice_spin");
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("the kernel keeps no BTF of module vtice_spin"), std::string::npos)
		<< none.error().message;
	put_btf(kMsrBtf, kMsr, "msr", kMsrData, 1u << 30);
	auto huge = params_of("msr_ioctl", "msr");
	ASSERT_FALSE(huge);
	EXPECT_NE(huge.error().message.find("1073741824 bytes: not BTF"), std::string::npos) << huge.error().message;
	mem.put_value<std::uint64_t>(kMsr + list, kCpuid + list);	// msr -> cpuid -> msr ...
	auto loop = params_of("msr_ioctl", "vtice_spin");
	ASSERT_FALSE(loop);
	EXPECT_NE(loop.error().message.find("does not end"), std::string::npos) << loop.error().message;
}
