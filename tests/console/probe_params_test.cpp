// args->NAME's parameters from the Debian kernel's own BTF (kernel_params),
// against pfunct (dwarves' reader of the same BTF) on the same vmlinux:
// the names in order, and the width and sign of each C base type and
// pointer pfunct prints.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../symbols/kernel_dir.hpp"
#include "command_output.hpp"
#include "probe_params.hpp"

namespace {

struct Declared {
	std::string type, name;
};

// pfunct -P: "long int do_sys_openat2(int dfd, const char  * filename, struct open_how * how);"
std::vector<Declared> pfunct_params(const std::string &image, const std::string &function)
{
	std::string text = vtice::test::command_output("pfunct -F btf -P -f " + function + " " + image);
	std::vector<Declared> out;
	auto open = text.find('('), close = text.rfind(')');
	if (open == std::string::npos || close == std::string::npos || close <= open + 1)
		return out;
	std::string list = text.substr(open + 1, close - open - 1);
	for (std::size_t start = 0; start < list.size();) {
		std::size_t comma = list.find(", ", start);
		std::string one = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
		std::size_t last = one.find_last_of(" *");
		out.push_back({one.substr(0, last + 1), one.substr(last + 1)});
		start = comma == std::string::npos ? list.size() : comma + 2;
	}
	return out;
}

// Widths of the C base types as x86-64's ABI has them.
const std::map<std::string, std::pair<std::uint32_t, bool>> kBaseTypes = {
	{"int ", {4, true}}, {"unsigned int ", {4, false}}, {"long int ", {8, true}},
	{"long unsigned int ", {8, false}}, {"short int ", {2, true}}, {"short unsigned int ", {2, false}},
	{"char ", {1, true}}, {"unsigned char ", {1, false}}, {"_Bool ", {1, false}},
};

}  // namespace

TEST(ProbeParams, NamesAndWidthsMatchPfunct)
{
	auto dirs = vtice::symbols::testing::debian_kernel_dirs();
	if (dirs.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	if (std::system("pfunct --version >/dev/null 2>&1") != 0)
		GTEST_SKIP() << "pfunct (Debian's pahole package) is not installed";
	for (const auto &dir : dirs) {
		std::string image = (dir / "vmlinux").string();
		SCOPED_TRACE(image);
		auto lookup = vtice::console::kernel_params(std::make_shared<vtice::console::KernelBtf>(image));
		unsigned widths_checked = 0;
		// getname_flags lost its third argument in 6.8: each kernel's own BTF counts.
		for (const char *function : {"do_sys_openat2", "vfs_read", "ksys_write", "getname_flags",
					     "schedule_timeout", "do_filp_open", "kmem_cache_free", "tcp_sendmsg",
					     "do_nanosleep"}) {
			auto declared = pfunct_params(image, function);
			ASSERT_FALSE(declared.empty()) << "pfunct shows no parameters of " << function;
			auto params = lookup(function);
			ASSERT_TRUE(params) << params.error().message;
			ASSERT_EQ(params->size(), declared.size()) << function;
			for (std::size_t i = 0; i < declared.size(); i++) {
				const auto &p = (*params)[i];
				EXPECT_EQ(p.name, declared[i].name) << function << " argument " << i;
				auto base = kBaseTypes.find(declared[i].type);
				if (declared[i].type.find('*') != std::string::npos) {
					EXPECT_EQ(p.bytes, 8u) << function << " " << p.name;
					widths_checked++;
				} else if (base != kBaseTypes.end()) {
					EXPECT_EQ(p.bytes, base->second.first) << function << " " << p.name;
					EXPECT_EQ(p.is_signed, base->second.second) << function << " " << p.name;
					widths_checked++;
				}
			}
		}
		EXPECT_GE(widths_checked, 12u) << "most parameters are pointers or base types";
		auto missing = lookup("no_such_function_here");
		ASSERT_FALSE(missing);
		EXPECT_NE(missing.error().message.find("no function no_such_function_here"), std::string::npos);
	}
}

TEST(ProbeParams, AMissingBtfSaysSoAtEveryQuestion)
{
	auto lookup = vtice::console::kernel_params(std::make_shared<vtice::console::KernelBtf>("/nonexistent/btf"));
	for (int i = 0; i < 2; i++) {
		auto params = lookup("vfs_read");
		ASSERT_FALSE(params);
		EXPECT_NE(params.error().message.find("no kernel BTF to name arguments by"), std::string::npos)
			<< params.error().message;
	}
}
