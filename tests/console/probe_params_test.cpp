// args->NAME's parameters from the Debian kernel's own BTF (kernel_params),
// against pfunct (dwarves' reader of the same BTF) on the same vmlinux:
// the names in order, and the width and sign of each C base type and
// pointer pfunct prints. Reads through arguments (kernel_types) against
// pahole's offsets and sizes of the same fields. A loaded module's function
// (ModuleBtf): its parameters against bpftool's listing of the module's BTF.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../symbols/kernel_dir.hpp"
#include "command_output.hpp"
#include "kallsyms_modules.hpp"
#include "probe_params.hpp"
#include "probes/checker.hpp"
#include "probes/diagnostic.hpp"

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

// pahole -C: "\tstruct path                f_path;               /*    16    16 */":
// the member's offset and size, or nothing.
std::optional<std::pair<std::int32_t, std::uint32_t>> pahole_member(const std::string &image, const std::string &type,
								    const std::string &member)
{
	std::string text = vtice::test::command_output("pahole -F btf -C " + type + " " + image);
	std::string key = " " + member + ";";
	auto at = text.find(key);
	if (at == std::string::npos)
		return std::nullopt;
	int offset = 0;
	unsigned size = 0;
	if (std::sscanf(text.c_str() + at + key.size(), " /* %d %u */", &offset, &size) != 2)
		return std::nullopt;
	return std::make_pair(offset, size);
}

// pahole -C for an array member ("\tunsigned char d_iname[32]; /* 56 32 */",
// its length differs between kernels): the offset, or nothing.
std::optional<std::int32_t> pahole_array(const std::string &image, const std::string &type, const std::string &member)
{
	std::string text = vtice::test::command_output("pahole -F btf -C " + type + " " + image);
	auto at = text.find(" " + member + "[");
	auto comment = at == std::string::npos ? at : text.find("/*", at);
	int offset = 0;
	if (comment == std::string::npos || std::sscanf(text.c_str() + comment, "/* %d", &offset) != 1)
		return std::nullopt;
	return offset;
}

// pahole -C for a bitfield ("\tu8 sk_txtime_unused:6; /* 621: 2  1 */"):
// the bit it starts at, from the start of the struct.
std::optional<std::uint64_t> pahole_bitfield(const std::string &image, const std::string &type,
					     const std::string &member_and_width)
{
	std::string text = vtice::test::command_output("pahole -F btf -C " + type + " " + image);
	std::string key = " " + member_and_width + ";";
	auto at = text.find(key);
	int byte = 0, bit = 0;
	if (at == std::string::npos || std::sscanf(text.c_str() + at + key.size(), " /* %d: %d", &byte, &bit) != 2)
		return std::nullopt;
	return std::uint64_t(byte) * 8 + bit;
}

// pahole -C's "/* size: 232, ..." line: the struct's size.
std::optional<std::int32_t> pahole_size(const std::string &image, const std::string &type)
{
	std::string text = vtice::test::command_output("pahole -F btf -C " + type + " " + image);
	auto at = text.find("/* size: ");
	int size = 0;
	if (at == std::string::npos || std::sscanf(text.c_str() + at, "/* size: %d", &size) != 1)
		return std::nullopt;
	return size;
}

using vtice::probes::FetchCode;
using vtice::probes::FetchOp;
using vtice::probes::IndexWidth;

// The console's view of a kernel's BTF file, with no modules.
std::shared_ptr<vtice::console::ProbeTypes> probe_types(const std::string &btf)
{
	return std::make_shared<vtice::console::ProbeTypes>(std::make_shared<vtice::console::KernelBtf>(btf));
}

// A Debian kernel the rig unpacked, with the console's view of its BTF.
struct KernelUnderTest {
	std::string image;
	std::shared_ptr<vtice::console::ProbeTypes> btf;
	std::unique_ptr<vtice::probes::KernelTypes> types;

	vtice::probes::CheckedProgram compile(const std::string &source) const
	{
		auto p = vtice::probes::compile_program(
			source, [](std::string_view) { return std::nullopt; }, vtice::console::kernel_params(btf), types.get());
		EXPECT_TRUE(p) << source << ": " << (p ? "" : p.error().message);
		return p ? std::move(*p) : vtice::probes::CheckedProgram{};
	}

	std::vector<FetchOp> fetch(const std::string &source) const
	{
		auto p = compile(source);
		return p.program.probes.empty() ? std::vector<FetchOp>{} : p.program.probes[0].fetch;
	}
};

// Every kernel to check against pahole; none, and why, when either is missing.
std::vector<KernelUnderTest> pahole_kernels(std::string *why)
{
	std::vector<KernelUnderTest> out;
	auto dirs = vtice::symbols::testing::debian_kernel_dirs();
	if (dirs.empty()) {
		*why = "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
		return out;
	}
	if (std::system("pahole --version >/dev/null 2>&1") != 0) {
		*why = "pahole (Debian's pahole package) is not installed";
		return out;
	}
	for (const auto &dir : dirs) {
		KernelUnderTest k;
		k.image = (dir / "vmlinux").string();
		k.btf = probe_types(k.image);
		k.types = vtice::console::kernel_types(k.btf);
		out.push_back(std::move(k));
	}
	return out;
}

}  // namespace

// The fetch ops root runs for a read through an argument are the loads
// pahole's layout asks for: each field's offset (fields of embedded structs
// added up, one load per pointer), the final field's size. struct file's
// layout moved between 6.1 and 6.12 (f_path at 16, then 64): each kernel's
// own BTF counts.
TEST(ProbeTypedReads, OffsetsAndSizesMatchPahole)
{
	std::string why;
	auto kernels = pahole_kernels(&why);
	if (kernels.empty())
		GTEST_SKIP() << why;
	for (const auto &k : kernels) {
		const std::string &image = k.image;
		SCOPED_TRACE(image);
		auto compile = [&](const std::string &source) { return k.fetch(source); };
		auto f_path = pahole_member(image, "file", "f_path"), dentry = pahole_member(image, "path", "dentry");
		auto d_name = pahole_member(image, "dentry", "d_name"), name = pahole_member(image, "qstr", "name");
		auto f_flags = pahole_member(image, "file", "f_flags"), flags = pahole_member(image, "open_how", "flags");
		ASSERT_TRUE(f_path && dentry && d_name && name && f_flags && flags) << "pahole shows the fields";
		EXPECT_EQ(compile("fn:vfs_read { @[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); }"),
			  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
						{FetchCode::Add, 0, f_path->first + dentry->first},
						{FetchCode::Load, 8, 0},
						{FetchCode::Add, 0, d_name->first + name->first},
						{FetchCode::Load, 8, 0},
						{FetchCode::String, 0, 0}}));
		// f_flags is an unsigned int: root keys by it cut to U32, and the
		// VALUE before is what a hit past root's slots is recorded with.
		EXPECT_EQ(compile("fn:vfs_read { @[args->file->f_flags] = count(); }"),
			  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
						{FetchCode::Add, 0, f_flags->first},
						{FetchCode::Load, static_cast<std::uint8_t>(f_flags->second), 0},
						{FetchCode::Value, 0, 0},
						{FetchCode::Keyed, static_cast<std::uint8_t>(static_cast<int>(IndexWidth::U32) << 4),
						 0}}));
		ASSERT_EQ(flags->first, 0) << "open_how's flags come first: no ADD";
		EXPECT_EQ(compile("fn:do_sys_openat2 { printf(\"%x %s\\n\", args->how->flags, str(args->filename)); }"),
			  (std::vector<FetchOp>{{FetchCode::Arg, 2, 0},
						{FetchCode::Load, static_cast<std::uint8_t>(flags->second), 0},
						{FetchCode::Value, 0, 0},
						{FetchCode::Arg, 1, 0},
						{FetchCode::String, 0, 0}}));
		// At a return, the chain starts at RAX typed as BTF's prototype
		// says getname_flags returns (struct filename *).
		auto refcnt = pahole_member(image, "filename", "refcnt"), fname = pahole_member(image, "filename", "name");
		ASSERT_TRUE(refcnt && fname) << "pahole shows struct filename's fields";
		ASSERT_EQ(fname->first, 0) << "filename's name comes first: no ADD";
		EXPECT_EQ(compile("fn:getname_flags:return { printf(\"%d %s\\n\", retval->refcnt.counter, "
				  "str(retval->name)); }"),
			  (std::vector<FetchOp>{{FetchCode::Retval, 0, 0},
						{FetchCode::Add, 0, refcnt->first},
						{FetchCode::Load, static_cast<std::uint8_t>(refcnt->second), 0},
						{FetchCode::Value, 0, 0},
						{FetchCode::Retval, 0, 0},
						{FetchCode::Load, 8, 0},
						{FetchCode::String, 0, 0}}));
	}
}

// An element of an array field is one more offset in the same load; an
// index through a pointer steps by the pointed-to struct's size; a
// bitfield loads the byte that holds it and the console cuts out its bits
// (sk_txtime_unused: 6 bits from bit 2 of its byte); curtask starts a
// chain at the current task_struct. Offsets and sizes: pahole's, for each
// kernel.
TEST(ProbeTypedReads, ElementsBitfieldsAndCurtaskMatchPahole)
{
	std::string why;
	auto kernels = pahole_kernels(&why);
	if (kernels.empty())
		GTEST_SKIP() << why;
	for (const auto &k : kernels) {
		const std::string &image = k.image;
		SCOPED_TRACE(image);
		auto compile = [&](const std::string &source) { return k.compile(source); };
		auto f_path = pahole_member(image, "file", "f_path"), dentry = pahole_member(image, "path", "dentry");
		auto f_flags = pahole_member(image, "file", "f_flags");
		auto d_iname = pahole_array(image, "dentry", "d_iname");
		auto file_size = pahole_size(image, "file");
		auto txtime = pahole_bitfield(image, "sock", "sk_txtime_unused:6");
		ASSERT_TRUE(f_path && dentry && f_flags && d_iname && file_size && txtime) << "pahole shows them";

		auto element = compile("fn:vfs_read { @ = args->file->f_path.dentry->d_iname[3]; }");
		EXPECT_EQ(element.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
						{FetchCode::Add, 0, f_path->first + dentry->first},
						{FetchCode::Load, 8, 0},
						{FetchCode::Add, 0, *d_iname + 3},
						{FetchCode::Load, 1, 0},
						{FetchCode::Value, 0, 0}}));

		auto stepped = compile("fn:vfs_read { @ = ((struct file *)arg0)[2].f_flags; }");
		EXPECT_EQ(stepped.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
						{FetchCode::Add, 0, 2 * *file_size + f_flags->first},
						{FetchCode::Load, static_cast<std::uint8_t>(f_flags->second), 0},
						{FetchCode::Value, 0, 0}}));

		auto bits = compile("fn:tcp_sendmsg { @ = ((struct sock *)arg0)->sk_txtime_unused; }");
		ASSERT_EQ(bits.program.probes.size(), 1u);
		EXPECT_EQ(bits.program.probes[0].fetch,
			  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
						{FetchCode::Add, 0, static_cast<std::int32_t>(*txtime / 8)},
						{FetchCode::Load, 1, 0},
						{FetchCode::Value, 0, 0}}));
		const auto &read = *bits.program.probes[0].body.at(0).value;
		EXPECT_EQ(read.bit_shift, *txtime % 8);
		EXPECT_EQ(read.bits, 6);
		EXPECT_FALSE(read.is_signed) << "a u8 bitfield";

		// curtask: the task root found at the hit, a struct task_struct *.
		auto real_parent = pahole_member(image, "task_struct", "real_parent");
		auto tgid = pahole_member(image, "task_struct", "tgid");
		ASSERT_TRUE(real_parent && tgid) << "pahole shows task_struct's real_parent and tgid";
		auto parent = compile("fn:do_filp_open:return { @ = curtask->real_parent->tgid; }");
		EXPECT_EQ(parent.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Curtask, 0, 0},
						{FetchCode::Add, 0, real_parent->first},
						{FetchCode::Load, 8, 0},
						{FetchCode::Add, 0, tgid->first},
						{FetchCode::Load, static_cast<std::uint8_t>(tgid->second), 0},
						{FetchCode::Value, 0, 0}}));

		// reg() at an addr: inside a function, where its arguments moved.
		auto flags = pahole_member(image, "open_how", "flags"), mode = pahole_member(image, "open_how", "mode");
		ASSERT_TRUE(flags && mode) << "pahole shows open_how's flags and mode";
		auto at_addr = compile("addr:do_sys_openat2+10 { printf(\"%d %s\\n\", ((struct open_how *)reg(\"rbx\"))->mode, "
				       "str(reg(\"r12\"))); }");
		EXPECT_EQ(at_addr.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0},	// VTICE_FETCH_RBX
						{FetchCode::Add, 0, mode->first},
						{FetchCode::Load, static_cast<std::uint8_t>(mode->second), 0},
						{FetchCode::Value, 0, 0},
						{FetchCode::Reg, 12, 0},	// VTICE_FETCH_R12
						{FetchCode::String, 0, 0}}));
	}
}

// An index root computes at the hit (fd[arg0], p[args->dfd], p[retval]):
// INDEX by the register that holds it, cut to the width pfunct gives its
// type (an int's register has junk above it), times the element's size
// pahole gives; the loads around it are pahole's offsets.
TEST(ProbeTypedReads, AComputedIndexIsItsRegisterCutToItsTypeTimesTheElementSize)
{
	std::string why;
	auto kernels = pahole_kernels(&why);
	if (kernels.empty())
		GTEST_SKIP() << why;
	auto index_arg = [](std::uint8_t reg, IndexWidth w) { return static_cast<std::uint8_t>(reg | std::uint8_t(w) << 4); };
	auto width_of = [](const Declared &d) {
		auto base = kBaseTypes.find(d.type);
		if (base == kBaseTypes.end() || base->second.first == 8)
			return IndexWidth::Full;
		const std::pair<std::uint32_t, bool> w = base->second;
		if (w.first == 4)
			return w.second ? IndexWidth::S32 : IndexWidth::U32;
		if (w.first == 2)
			return w.second ? IndexWidth::S16 : IndexWidth::U16;
		return w.second ? IndexWidth::S8 : IndexWidth::U8;
	};
	for (const auto &k : kernels) {
		const std::string &image = k.image;
		SCOPED_TRACE(image);
		auto files = pahole_member(image, "task_struct", "files"), fdt = pahole_member(image, "files_struct", "fdt");
		auto fd = pahole_member(image, "fdtable", "fd"), f_flags = pahole_member(image, "file", "f_flags");
		auto file_size = pahole_size(image, "file");
		auto close_fd = pfunct_params(image, "close_fd"), openat2 = pfunct_params(image, "do_sys_openat2");
		ASSERT_TRUE(files && fdt && fd && f_flags && file_size) << "pahole shows them";
		ASSERT_FALSE(close_fd.empty() || openat2.empty()) << "pfunct shows close_fd and do_sys_openat2";
		auto flags_load = FetchOp{FetchCode::Load, static_cast<std::uint8_t>(f_flags->second), 0};

		auto by_fd = k.compile("fn:close_fd { @ = curtask->files->fdt->fd[arg0]->f_flags; }");
		EXPECT_EQ(by_fd.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Curtask, 0, 0}, {FetchCode::Add, 0, files->first},
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, fdt->first},
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, fd->first},
						{FetchCode::Load, 8, 0},
						{FetchCode::Index, index_arg(0, width_of(close_fd[0])), 8},	// RDI
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, f_flags->first}, flags_load,
						{FetchCode::Value, 0, 0}}));
		EXPECT_EQ(width_of(close_fd[0]), IndexWidth::U32) << "pfunct: " << close_fd[0].type;

		auto by_dfd = k.compile("fn:do_sys_openat2 { @ = ((struct file *)reg(\"rbx\"))[args->dfd].f_flags; }");
		EXPECT_EQ(by_dfd.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0},	// VTICE_FETCH_RBX
						{FetchCode::Index, index_arg(0, width_of(openat2[0])), *file_size},
						{FetchCode::Add, 0, f_flags->first}, flags_load, {FetchCode::Value, 0, 0}}));
		EXPECT_EQ(width_of(openat2[0]), IndexWidth::S32) << "pfunct: " << openat2[0].type;

		// An index plus or minus a number: its elements added as a constant, before root's INDEX.
		auto by_next = k.compile("fn:do_sys_openat2 { @ = ((struct file *)reg(\"rbx\"))[args->dfd + 1].f_flags; }");
		EXPECT_EQ(by_next.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0}, {FetchCode::Add, 0, static_cast<std::int32_t>(*file_size)},
						{FetchCode::Index, index_arg(0, width_of(openat2[0])), *file_size},
						{FetchCode::Add, 0, f_flags->first}, flags_load, {FetchCode::Value, 0, 0}}));
		auto by_prev = k.compile("fn:close_fd { @ = curtask->files->fdt->fd[arg0 - 2]->f_flags; }");
		EXPECT_EQ(by_prev.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Curtask, 0, 0}, {FetchCode::Add, 0, files->first},
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, fdt->first},
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, fd->first},
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, -16},
						{FetchCode::Index, index_arg(0, width_of(close_fd[0])), 8},
						{FetchCode::Load, 8, 0}, {FetchCode::Add, 0, f_flags->first}, flags_load,
						{FetchCode::Value, 0, 0}}));

		// Sources times numbers, added up: one INDEX each, by its register
		// times its number of elements; the numbers' elements one ADD.
		auto by_sum = k.compile("fn:do_sys_openat2 { @ = ((struct file *)reg(\"rbx\"))"
					"[2 * args->dfd + reg(\"rcx\") * 3 - 1].f_flags; }");
		EXPECT_EQ(by_sum.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0},
						{FetchCode::Add, 0, -static_cast<std::int32_t>(*file_size)},
						{FetchCode::Index, index_arg(0, width_of(openat2[0])), 2 * *file_size},
						{FetchCode::Index, index_arg(3, IndexWidth::Full), 3 * *file_size},	// RCX
						{FetchCode::Add, 0, f_flags->first}, flags_load, {FetchCode::Value, 0, 0}}));
		auto by_negative = k.compile("fn:do_sys_openat2 { @ = ((struct file *)reg(\"rbx\"))[args->dfd + -2].f_flags; }");
		EXPECT_EQ(by_negative.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0},
						{FetchCode::Add, 0, -2 * static_cast<std::int32_t>(*file_size)},
						{FetchCode::Index, index_arg(0, width_of(openat2[0])), *file_size},
						{FetchCode::Add, 0, f_flags->first}, flags_load, {FetchCode::Value, 0, 0}}))
			<< "a negative number as written, unary minus";
		auto by_group = k.compile("fn:do_sys_openat2 { @ = ((struct file *)reg(\"rbx\"))[(args->dfd + 1) * 2].f_flags; }");
		EXPECT_EQ(by_group.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0},
						{FetchCode::Add, 0, 2 * static_cast<std::int32_t>(*file_size)},
						{FetchCode::Index, index_arg(0, width_of(openat2[0])), 2 * *file_size},
						{FetchCode::Add, 0, f_flags->first}, flags_load, {FetchCode::Value, 0, 0}}));

		// vfs_read returns ssize_t: the whole of RAX.
		auto by_retval = k.compile("fn:vfs_read:return { @ = ((struct file *)reg(\"rbx\"))[retval].f_flags; }");
		EXPECT_EQ(by_retval.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Reg, 7, 0},
						{FetchCode::Index, index_arg(6, IndexWidth::Full), *file_size},	// RAX
						{FetchCode::Add, 0, f_flags->first}, flags_load, {FetchCode::Value, 0, 0}}));
	}
}

// A predicate's comparisons root tests at the hit (KEEP) are cut to the
// width the console gives the value: args->dfd as pfunct types it (an int:
// -100 is the low 32 bits of RDI), args->how->flags at pahole's offset.
TEST(ProbeTypedReads, RootTestsTypedComparisonsAtTheConsolesWidth)
{
	std::string why;
	auto kernels = pahole_kernels(&why);
	if (kernels.empty())
		GTEST_SKIP() << why;
	for (const auto &k : kernels) {
		SCOPED_TRACE(k.image);
		auto openat2 = pfunct_params(k.image, "do_sys_openat2");
		auto flags = pahole_member(k.image, "open_how", "flags");
		ASSERT_TRUE(openat2.size() == 3 && flags) << "pfunct and pahole show do_sys_openat2 and open_how";
		auto dfd = kBaseTypes.at(openat2[0].type);
		ASSERT_EQ(dfd, (std::pair<std::uint32_t, bool>{4, true})) << "pfunct: " << openat2[0].type;
		auto p = k.compile("fn:do_sys_openat2 /args->dfd == -100 && args->how->flags != 0/ { @ = count(); }");
		const auto &fetch = p.program.probes.at(0).fetch;
		auto cut = [](vtice::probes::KeepCmp how, vtice::probes::IndexWidth w) {
			return static_cast<std::uint8_t>(static_cast<std::uint8_t>(how) | static_cast<std::uint8_t>(w) << 4);
		};
		std::vector<FetchOp> want = {{FetchCode::Arg, 0, 0},
					     {FetchCode::Keep, cut(vtice::probes::KeepCmp::Eq, vtice::probes::IndexWidth::S32), -100},
					     {FetchCode::Arg, 2, 0}};
		if (flags->first)
			want.push_back({FetchCode::Add, 0, flags->first});
		want.push_back({FetchCode::Load, static_cast<std::uint8_t>(flags->second), 0});
		want.push_back({FetchCode::Keep, cut(vtice::probes::KeepCmp::Ne, vtice::probes::IndexWidth::Full), 0});
		ASSERT_GE(fetch.size(), want.size());
		EXPECT_EQ(std::vector<FetchOp>(fetch.begin(), fetch.begin() + static_cast<std::ptrdiff_t>(want.size())), want)
			<< "the tests first; the read of flags the console's predicate uses follows";

		// retval at a return: RAX cut to what the function returns ("int close_fd(...)" to pfunct).
		std::string proto = vtice::test::command_output("pfunct -F btf -P -f close_fd " + k.image);
		ASSERT_EQ(proto.rfind("int close_fd(", 0), 0u) << proto;
		auto negative = k.compile("fn:close_fd:return /retval < 0/ { @ = count(); }");
		EXPECT_EQ(negative.program.probes.at(0).fetch,
			  (std::vector<FetchOp>{{FetchCode::Retval, 0, 0},
						{FetchCode::Keep, cut(vtice::probes::KeepCmp::Lt, vtice::probes::IndexWidth::S32),
						 0},
						{FetchCode::Count, 0, 0}}))
			<< "its whole predicate tested, the count is root's";
	}
}

// What root cannot read, or what reads no value, is refused before anything
// is armed, with the position: a struct as a number, a field that is not
// there, '.' through a pointer, str() of a number, '->' through an untyped
// argument, a read where the arguments are gone or retval is not yet, a
// fifth value, a chain longer than root runs.
TEST(ProbeTypedReads, RefusalsNameThePlace)
{
	auto dirs = vtice::symbols::testing::debian_kernel_dirs();
	if (dirs.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	auto btf = probe_types((dirs[0] / "vmlinux").string());
	auto types = vtice::console::kernel_types(btf);
	auto refusal = [&](const std::string &source) {
		auto p = vtice::probes::compile_program(
			source, [](std::string_view name) { return name == "read" ? std::optional<std::uint64_t>(0) : std::nullopt; },
			vtice::console::kernel_params(btf), types.get());
		EXPECT_FALSE(p) << source;
		return p ? std::string() : vtice::probes::format_diagnostic(source, p.error());
	};
	auto says = [&](const std::string &source, const std::string &what) {
		std::string why = refusal(source);
		EXPECT_NE(why.find(what), std::string::npos) << source << "\n" << why;
	};
	says("fn:vfs_read { @ = args->file->f_path; }", "1:29: error: this is struct path: read one of its fields");
	says("fn:vfs_read { @ = args->file->nosuch; }", "1:29: error: struct file has no member 'nosuch'");
	says("fn:vfs_read { @ = args->file.f_pos; }", "'.' reads a field of a struct; this is struct file *: write '->'");
	says("fn:vfs_read { @ = ((struct nosuch *)arg0)->x; }", "no struct nosuch");
	says("fn:vfs_read { @ = arg0->f_pos; }", "cast it first: ((struct file *)arg0)->f_mode");
	says("fn:vfs_read { @[str(args->file->f_flags)] = count(); }",
	     "str() reads a char array or a char pointer; this is unsigned int");
	says("fn:vfs_read { @ = args->file->f_path.dentry->d_name; }", "read one of its fields");
	says("fn:vfs_read { @ = args->file->f_path.dentry->d_iname[4096]; }", "index 4096 is past the end of");
	says("fn:vfs_read { @ = args->file->f_flags[1]; }", "'[' indexes an array or a pointer; this is unsigned int");
	says("fn:vfs_read { @ = arg0[1]; }", "cast it first");
	says("fn:memremap:return { @ = retval[1]; }", "a pointer to a sized type; this is void *: cast it first");
	says("syscall:read { @ = curtask->pid; }", "reading through memory works in a probe whose points are all fn:NAME");
	says("fn:vfs_read { @[str(curtask)] = count(); }",
	     "str() reads a char array or a char pointer; this is struct task_struct *");
	says("fn:vfs_read { @ = curtask->nosuch; }", "struct task_struct has no member 'nosuch'");
	says("addr:vfs_read+4 { @ = args->file->f_flags; }", "at an addr: read through the register that holds it now");
	says("addr:vfs_read+4 { @ = ((struct file *)reg(\"rip\"))->f_flags; }",
	     "root reads the general registers at a hit, not reg(\"rip\")");
	says("addr:vfs_read+4 { @ = reg(\"rdi\")->f_flags; }", "through reg(\"rdi\"), which BTF does not type: cast it");
	says("addr:vfs_read+4, fn:vfs_read { @ = curtask->pid; }", "all addr: (through reg())");
	says("fn:vfs_read { @ = args->file[arg2 * arg2].f_flags; }",
	     "1:35: error: an index root computes at the hit adds up arguments, registers and retval, each times a "
	     "number, plus or minus numbers");
	says("fn:vfs_read { @ = args->file[arg2 / 2].f_flags; }", "root does no other arithmetic on it");
	says("fn:vfs_read { @ = args->file[1 - arg2].f_flags; }",
	     "1:34: error: root adds arg2 times a positive number of elements, not -1");
	says("fn:vfs_read { @ = args->file[arg2 * 0].f_flags; }", "not 0");
	says("fn:vfs_read { @ = args->file[-arg2 + 1].f_flags; }", "times a positive number of elements, not -1");
	says("fn:vfs_read { @ = args->file[arg2 * 65536 * 65536].f_flags; }",
	     "1:37: error: index term 65536 times 65536 is more than 2 GiB away");
	says("fn:vfs_read { @ = args->file[arg2 * 100000000].f_flags; }",
	     "arg2 times 100000000 elements of struct file is over 2 GiB");
	says("fn:vfs_read { @ = args->file[arg2 + 100000000].f_flags; }", "is more than 2 GiB away");
	says("fn:vfs_read { @ = args->file[args->buf].f_flags; }", "args->buf is char *, not an integer to index by");
	says("fn:vfs_read { @ = args->file[retval].f_flags; }", "retval exists only at a return");
	says("addr:vfs_read+4 { @ = ((struct file *)reg(\"rdi\"))[arg2].f_flags; }",
	     "at an addr: read through the register that holds it now");
	says("fn:vfs_read { @ = ((struct file *)arg0)[100000000].f_flags; }", "root adds at most 2 GiB");
	says("fn:vfs_read { @[str((struct file *)arg0)] = count(); }",
	     "str() reads a char array or a char pointer; this is struct file *");
	says("fn:vfs_read:return { @ = args->file->f_flags; }", "is gone at a function's return");
	says("fn:vfs_read { @ = retval->f_flags; }", "retval exists only at a return: read through it in "
						     "fn:vfs_read:return");
	says("fn:vfs_read:return { @ = retval->f_flags; }", "'->' reads through a pointer to a struct; this is ssize_t");
	says("fn:getname_flags:return { @[str(retval)] = count(); }",
	     "str() reads a char array or a char pointer; this is struct filename *");
	says("fn:vfs_read:return { @[str(arg1)] = count(); }", "'arg1' is gone at a function's return");
	says("fn:getname_flags, fn:getname_flags:return { @ = retval->refcnt.counter; }",
	     "reading through memory works in a probe whose points are all fn:NAME");
	says("fn:getname_flags:return { @[str(retval->name)] = count(); }\n"
	     "fn:getname_flags:return { @[str(retval->uptr)] = count(); }",
	     "2:1: error: fn:getname_flags:return reads other memory");
	says("syscall:read { @ = ((struct file *)arg0)->f_flags; }", "reading through memory works in a probe whose points are all fn:NAME");
	says("fn:vfs_read { printf(\"%d %d %d %d %d\\n\", args->file->f_flags, args->file->f_pos, "
	     "args->file->f_mode, args->file->f_inode, args->file->f_path.mnt); }",
	     "a probe reads at most 4 values through its arguments");
	std::string deep = "args->file->f_path.dentry";
	for (int i = 0; i < 15; i++)
		deep += "->d_parent";
	says("fn:vfs_read { @[str(" + deep + "->d_name.name)] = count(); }", "root runs at most 32 fetch ops a hit");
	says("fn:vfs_read { @ = args->file->f_flags; }\nfn:vfs_read { @ = args->file->f_mode; }",
	     "2:1: error: fn:vfs_read reads other memory (str() or fields) in another probe");
}

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
		auto lookup = vtice::console::kernel_params(probe_types(image));
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

namespace {

// bpftool's listing of a function's parameter names: "[N] FUNC 'msr_read'
// type_id=P" in the module's split BTF, then "[P] FUNC_PROTO" and its
// "\t'file' type_id=422" lines, in the module's types or the kernel's.
std::vector<std::string> bpftool_params(const std::string &vmlinux, const std::string &module,
					const std::string &function)
{
	std::string split = vtice::test::command_output(module.empty() ? "bpftool btf dump file " + vmlinux
								       : "bpftool -B " + vmlinux + " btf dump file " + module);
	std::smatch m;
	if (!std::regex_search(split, m, std::regex("FUNC '" + function + "' type_id=(\\d+)")))
		return {};
	std::string proto = "\n[" + m[1].str() + "] FUNC_PROTO";
	std::string text = split.find(proto) != std::string::npos
				   ? split
				   : vtice::test::command_output("bpftool btf dump file " + vmlinux);
	std::vector<std::string> names;
	auto at = text.find(proto);
	if (at == std::string::npos)
		return names;
	std::istringstream lines(text.substr(text.find('\n', at + 1) + 1));
	for (std::string line; std::getline(lines, line) && line.rfind("\t'", 0) == 0;)
		names.push_back(line.substr(2, line.find('\'', 2) - 2));
	return names;
}

// A kernel as vtice probe sees one on the traced machine: its BTF as
// DIR/vmlinux with the modules' beside it (DIR/msr: the .ko, whose .BTF the
// console reads), and a kallsyms that puts functions in modules.
struct ModuleMachine {
	std::filesystem::path kernel_dir, dir;
	std::shared_ptr<vtice::console::ProbeTypes> types;
	std::unique_ptr<vtice::probes::KernelTypes> kernel_types;

	ModuleMachine(const std::filesystem::path &kernel, const std::string &kallsyms) : kernel_dir(kernel)
	{
		char tmpl[] = "/tmp/vtice-module-btf-XXXXXX";
		dir = mkdtemp(tmpl);
		std::filesystem::create_symlink(kernel_dir / "vmlinux", dir / "vmlinux");
		std::ofstream(dir / "kallsyms") << kallsyms;
		std::string btf = (dir / "vmlinux").string();
		types = std::make_shared<vtice::console::ProbeTypes>(
			std::make_shared<vtice::console::KernelBtf>(btf),
			vtice::console::local_module_types((dir / "kallsyms").string(), btf));
		kernel_types = vtice::console::kernel_types(types);
	}
	~ModuleMachine() { std::filesystem::remove_all(dir); }

	// The kernel package's NAME.ko as the file named after its module
	// (unpacked from .xz); false when the package has none.
	bool add_module(const std::string &name)
	{
		auto ko = vtice::symbols::testing::debian_module(kernel_dir, name);
		return ko && vtice::symbols::testing::unpack_module(*ko, (dir / name).string());
	}

	// As vtice probe compiles: the fn: points lend their modules' types.
	vtice::Result<vtice::probes::CheckedProgram> compile(const std::string &source) const
	{
		return vtice::console::compile_typed_program(source, types);
	}
};

// Why the tests against the kernel packages' modules cannot run here, if
// they cannot: no unpacked kernel, or no bpftool and pahole to check by.
std::optional<std::string> module_oracles_missing()
{
	if (vtice::symbols::testing::debian_kernel_dirs().empty())
		return "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	if (vtice::test::command_output("command -v bpftool").empty() ||
	    vtice::test::command_output("command -v pahole").empty())
		return "bpftool or pahole is not installed (Debian's bpftool and pahole packages)";
	return std::nullopt;
}

// What root reads for ((struct cpuid_regs_done *)arg0)->done.done, at the
// offsets pahole shows in cpuid.ko's split BTF and the kernel's struct
// completion; nothing when pahole shows either not.
std::optional<std::vector<FetchOp>> cpuid_done_reads(const std::string &vmlinux, const std::string &cpuid_ko)
{
	auto done = pahole_member("--btf_base " + vmlinux + " " + cpuid_ko, "cpuid_regs_done", "done");
	auto count = pahole_member(vmlinux, "completion", "done");
	if (!done || !count)
		return std::nullopt;
	return std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
				    {FetchCode::Add, 0, done->first + count->first},
				    {FetchCode::Load, static_cast<std::uint8_t>(count->second), 0},
				    {FetchCode::Value, 0, 0}};
}

// Hand-written as /proc/kallsyms prints a loaded module's symbols.
constexpr const char *kModuleKallsyms = "ffffffff81000000 T _text\n"
					"ffffffff8107a1b0 T msr_read\n"
					"ffffffff813a4c10 T vfs_read\n"
					"ffffffffc0a01000 t msr_open\t[msr]\n"
					"ffffffffc0a01120 t msr_read\t[msr]\n"
					"ffffffffc0a01200 t msr_ioctl\t[msr]\n"
					"ffffffffc0a02000 t cpuid_read\t[cpuid]\n"
					"ffffffffc0a03000 t orphan_read\t[gone]\n"
					"ffffffffc0a04000 t twice\t[msr]\n"
					"ffffffffc0a05000 t twice\t[cpuid]\n";

}  // namespace

// kallsyms names a text symbol's module; data symbols, other names and
// names that are not a module's (a path) are not one.
TEST(ModuleBtf, KallsymsSaysWhichModuleAFunctionIsIn)
{
	using vtice::console::module_of_function;
	auto in = [](std::string_view function) { return module_of_function(kModuleKallsyms, function); };
	EXPECT_EQ(in("msr_ioctl").value(), std::optional<std::string>("msr"));
	EXPECT_EQ(in("cpuid_read").value(), std::optional<std::string>("cpuid"));
	ASSERT_FALSE(in("msr_read")) << "the kernel's and msr's";
	EXPECT_NE(in("msr_read").error().message.find("is a function of the kernel and msr:"), std::string::npos);
	EXPECT_NE(in("msr_read").error().message.find("fn:MODULE:msr_read"), std::string::npos);
	EXPECT_EQ(in("vfs_read").value(), std::optional<std::string>(""));
	EXPECT_EQ(in("msr_rea").value(), std::nullopt);
	ASSERT_FALSE(in("twice"));
	EXPECT_NE(in("twice").error().message.find("of cpuid and msr:"), std::string::npos) << in("twice").error().message;
	EXPECT_EQ(module_of_function("ffffffffc0a01120 d msr_read\t[msr]\n", "msr_read").value(), std::nullopt);
	EXPECT_EQ(module_of_function("ffffffffc0a01120 t msr_read\t[../../etc]\n", "msr_read").value(), std::nullopt);
	EXPECT_EQ(module_of_function("ffffffffc0a01120 t msr_read", "msr_read").value(), std::optional<std::string>(""));
}

// fn:MODULE:NAME's address: the symbol of that name kallsyms puts in
// MODULE (vmlinux: the one without a module); where it is instead, if
// not there.
TEST(ModuleBtf, KallsymsGivesTheFunctionOfTheNamedModule)
{
	using vtice::console::function_in_module;
	EXPECT_EQ(function_in_module(kModuleKallsyms, "msr", "msr_read").value(), 0xffffffffc0a01120ull);
	EXPECT_EQ(function_in_module(kModuleKallsyms, "vmlinux", "msr_read").value(), 0xffffffff8107a1b0ull);
	EXPECT_EQ(function_in_module(kModuleKallsyms, "cpuid", "twice").value(), 0xffffffffc0a05000ull);
	auto elsewhere = function_in_module(kModuleKallsyms, "cpuid", "msr_read");
	ASSERT_FALSE(elsewhere);
	EXPECT_EQ(elsewhere.error().message, "no function msr_read in module cpuid (the kernel and msr each have one)");
	auto none = function_in_module(kModuleKallsyms, "vmlinux", "msr_ioctl");
	ASSERT_FALSE(none);
	EXPECT_EQ(none.error().message, "no function msr_ioctl in the kernel (msr has one)");
	EXPECT_FALSE(function_in_module(kModuleKallsyms, "msr", "no_such"));
	EXPECT_FALSE(function_in_module("ffffffffc0a01000 d msr_open\t[msr]\n", "msr", "msr_open")) << "data";
	EXPECT_FALSE(function_in_module("zzzz t msr_open\t[msr]\n", "msr", "msr_open")) << "no address";
}

// args->NAME of a loaded module's function: its parameters come from the
// module's BTF, split on the kernel's, as bpftool lists them from the
// Debian package's msr.ko (msr_ioctl's prototype is the module's own); a
// read through one goes by the kernel's types (struct file, whose f_pos
// pahole places). A name the kernel's BTF has (msr_read: the kernel has
// one too, arch/x86/lib/msr.c) is the kernel's, as fn:msr_read is.
TEST(ModuleBtf, AModulesFunctionsArgumentsAreItsBtfsAsBpftoolListsThem)
{
	if (auto missing = module_oracles_missing())
		GTEST_SKIP() << *missing;
	for (const auto &kernel : vtice::symbols::testing::debian_kernel_dirs()) {
		SCOPED_TRACE(kernel.string());
		std::string vmlinux = (kernel / "vmlinux").string();
		ModuleMachine machine(kernel, kModuleKallsyms);
		ASSERT_TRUE(machine.add_module("msr")) << "the kernel package has msr.ko";
		auto listed = bpftool_params(vmlinux, (machine.dir / "msr").string(), "msr_ioctl");
		ASSERT_EQ(listed, (std::vector<std::string>{"file", "ioc", "arg"})) << "bpftool lists msr_ioctl";
		auto lookup = vtice::console::kernel_params(machine.types);
		auto params = lookup("msr_ioctl");
		ASSERT_TRUE(params) << params.error().message;
		std::vector<std::string> names;
		for (const auto &p : *params)
			names.push_back(p.name);
		ASSERT_EQ(names, listed);
		EXPECT_EQ((*params)[1].bytes, 4u) << "unsigned int ioc";
		EXPECT_FALSE((*params)[1].is_signed);
		EXPECT_EQ((*params)[2].bytes, 8u) << "unsigned long arg";
		auto f_pos = pahole_member(vmlinux, "file", "f_pos");
		ASSERT_TRUE(f_pos) << "pahole shows struct file's f_pos";
		auto program = machine.compile("fn:msr_ioctl { printf(\"%d\\n\", args->file->f_pos); }");
		ASSERT_TRUE(program) << program.error().message;
		EXPECT_EQ(program->program.probes[0].fetch,
			  (std::vector<FetchOp>{{FetchCode::Arg, 0, 0},
						{FetchCode::Add, 0, f_pos->first},
						{FetchCode::Load, static_cast<std::uint8_t>(f_pos->second), 0},
						{FetchCode::Value, 0, 0}}));
		// The kernel's functions keep their types beside the module's.
		EXPECT_TRUE(machine.compile("fn:msr_ioctl { @[args->ioc] = count(); } "
					    "fn:vfs_read { @[args->count] = count(); }"));
		auto kernels = lookup("msr_read");
		ASSERT_TRUE(kernels) << kernels.error().message;
		EXPECT_EQ(kernels->size(), 2u) << "the kernel's msr_read(msr, m), not the module's";
	}
}

namespace {

std::vector<std::string> names_of(const std::vector<vtice::probes::Param> &params)
{
	std::vector<std::string> names;
	for (const auto &p : params)
		names.push_back(p.name);
	return names;
}

}  // namespace

// fn:MODULE:NAME: a name the kernel and msr.ko both have (msr_read) is the
// module's own in the module's BTF (bpftool's listing of msr.ko's split
// BTF), vmlinux:msr_read the kernel's (bpftool's listing of vmlinux), and
// NAME alone stays the kernel's even in a program that took msr's types.
TEST(ModuleBtf, ANamedModulesFunctionIsItsOwnNotTheKernelsOfTheSameName)
{
	auto dirs = vtice::symbols::testing::debian_kernel_dirs();
	if (dirs.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	if (vtice::test::command_output("command -v bpftool").empty())
		GTEST_SKIP() << "bpftool is not installed (Debian's bpftool package)";
	for (const auto &kernel : dirs) {
		SCOPED_TRACE(kernel.string());
		std::string vmlinux = (kernel / "vmlinux").string();
		ModuleMachine machine(kernel, kModuleKallsyms);
		ASSERT_TRUE(machine.add_module("msr")) << "the kernel package has msr.ko";
		auto modules = bpftool_params(vmlinux, (machine.dir / "msr").string(), "msr_read");
		auto kernels = bpftool_params(vmlinux, "", "msr_read");
		ASSERT_EQ(modules.size(), 4u) << "bpftool lists msr.ko's msr_read(file, buf, count, ppos)";
		ASSERT_EQ(kernels.size(), 2u) << "bpftool lists the kernel's msr_read(msr, m)";
		auto lookup = vtice::console::kernel_params(machine.types);
		auto own = lookup("msr:msr_read");
		ASSERT_TRUE(own) << own.error().message;
		EXPECT_EQ(names_of(*own), modules);
		auto theirs = lookup("vmlinux:msr_read");
		ASSERT_TRUE(theirs) << theirs.error().message;
		EXPECT_EQ(names_of(*theirs), kernels);
		auto plain = lookup("msr_read");
		ASSERT_TRUE(plain) << plain.error().message;
		EXPECT_EQ(names_of(*plain), kernels) << "after msr's types were taken";
		EXPECT_TRUE(machine.compile("fn:msr:msr_read { @[args->count] = count(); } "
					    "fn:vmlinux:msr_read { @m[args->msr] = count(); } "
					    "fn:msr:msr_read:return { @r = hist(retval); }"));
		EXPECT_FALSE(machine.compile("fn:msr:msr_read { @[args->msr] = count(); }")) << "the kernel's name";
		EXPECT_FALSE(machine.compile("fn:msr_read { @[args->count] = count(); }")) << "the module's name";
	}
}

// Two modules' functions in one program: each one's arguments by its own
// BTF, and a type only the second module has (cpuid.ko's struct
// cpuid_regs_done, whose raw id in cpuid's split BTF another module's
// split BTF uses too) read at the offsets pahole gives from cpuid.ko.
TEST(ModuleBtf, TwoModulesFunctionsAreTypedEachByItsOwnBtf)
{
	if (auto missing = module_oracles_missing())
		GTEST_SKIP() << *missing;
	for (const auto &kernel : vtice::symbols::testing::debian_kernel_dirs()) {
		SCOPED_TRACE(kernel.string());
		std::string vmlinux = (kernel / "vmlinux").string();
		ModuleMachine machine(kernel, kModuleKallsyms);
		ASSERT_TRUE(machine.add_module("msr") && machine.add_module("cpuid"))
			<< "the kernel package has msr.ko and cpuid.ko";
		std::string cpuid_ko = (machine.dir / "cpuid").string();
		auto listed = bpftool_params(vmlinux, cpuid_ko, "cpuid_read");
		ASSERT_EQ(listed.size(), 4u) << "bpftool lists cpuid_read(file, buf, count, ppos)";
		auto lookup = vtice::console::kernel_params(machine.types);
		auto msr = lookup("msr:msr_read");
		ASSERT_TRUE(msr) << msr.error().message;
		auto cpuid = lookup("cpuid_read");
		ASSERT_TRUE(cpuid) << cpuid.error().message;
		EXPECT_EQ(names_of(*cpuid), listed) << "after msr's types were taken";
		auto expected = cpuid_done_reads(vmlinux, cpuid_ko);
		ASSERT_TRUE(expected) << "pahole shows cpuid_regs_done's done and completion's done";
		auto program = machine.compile("fn:msr:msr_read { @m[args->count] = count(); } "
					       "fn:cpuid_read { @c[args->count] = count(); } "
					       "fn:cpuid:cpuid_read { printf(\"%d\\n\", "
					       "((struct cpuid_regs_done *)arg0)->done.done); }");
		ASSERT_TRUE(program) << program.error().message;
		EXPECT_EQ(program->program.probes[2].fetch, *expected);
		ModuleMachine fresh(kernel, kModuleKallsyms);
		ASSERT_TRUE(fresh.add_module("msr") && fresh.add_module("cpuid"));
		EXPECT_FALSE(fresh.compile("fn:msr:msr_read { printf(\"%d\\n\", "
					   "((struct cpuid_regs_done *)arg0)->done.done); }"))
			<< "cpuid's type in a program that took only msr's types";
	}
}

// A cast in a probe on a module's function (fn:, or addr: in its text)
// finds that module's own types with no args-> to take them: the probe
// point lends its module's BTF. A type the kernel has never needs the
// module (its .ko is not there).
TEST(ModuleBtf, AModuleProbesCastFindsItsModulesOwnTypes)
{
	if (auto missing = module_oracles_missing())
		GTEST_SKIP() << *missing;
	for (const auto &kernel : vtice::symbols::testing::debian_kernel_dirs()) {
		SCOPED_TRACE(kernel.string());
		std::string vmlinux = (kernel / "vmlinux").string();
		ModuleMachine without(kernel, kModuleKallsyms);
		EXPECT_TRUE(without.compile("fn:cpuid:cpuid_read { @ = ((struct file *)arg0)->f_flags; }"))
			<< "the kernel's struct file needs no module";
		EXPECT_FALSE(without.compile("fn:cpuid:cpuid_read { @ = ((struct cpuid_regs_done *)arg0)->done.done; }"))
			<< "no cpuid.ko, no cpuid's types";
		ModuleMachine machine(kernel, kModuleKallsyms);
		ASSERT_TRUE(machine.add_module("cpuid")) << "the kernel package has cpuid.ko";
		auto expected = cpuid_done_reads(vmlinux, (machine.dir / "cpuid").string());
		ASSERT_TRUE(expected) << "pahole shows cpuid_regs_done's done and completion's done";
		for (const char *point : {"fn:cpuid:cpuid_read", "fn:cpuid_read"}) {
			auto program = machine.compile(std::string(point) + " { printf(\"%d\\n\", "
							   "((struct cpuid_regs_done *)arg0)->done.done); }");
			ASSERT_TRUE(program) << point << ": " << program.error().message;
			EXPECT_EQ(program->program.probes[0].fetch, *expected) << point;
		}
		// An addr: point in the module's text lends the same types (to a
		// program of its own: the machine keeps the types it took): the
		// reads after the register's are the same.
		ModuleMachine addr_only(kernel, kModuleKallsyms);
		ASSERT_TRUE(addr_only.add_module("cpuid"));
		auto at = addr_only.compile("addr:cpuid_read+4 { printf(\"%d\\n\", "
					  "((struct cpuid_regs_done *)reg(\"rdi\"))->done.done); }");
		ASSERT_TRUE(at) << at.error().message;
		const auto &fetch = at->program.probes[0].fetch;
		ASSERT_EQ(fetch.size(), expected->size());
		EXPECT_EQ(fetch[0].code, FetchCode::Reg);
		EXPECT_EQ(std::vector<FetchOp>(fetch.begin() + 1, fetch.end()),
			  std::vector<FetchOp>(expected->begin() + 1, expected->end()));
	}
}

// fn:MODULE:NAME's types come from MODULE's BTF alone: with no kallsyms to
// read (another machine's BTF directory), a named module's function is
// still typed, and one the module does not have is refused by its BTF.
TEST(ModuleBtf, ANamedModulesTypesNeedNoKallsyms)
{
	auto dirs = vtice::symbols::testing::debian_kernel_dirs();
	if (dirs.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	ModuleMachine machine(dirs[0], kModuleKallsyms);
	ASSERT_TRUE(machine.add_module("msr")) << "the kernel package has msr.ko";
	std::filesystem::remove(machine.dir / "kallsyms");
	EXPECT_TRUE(machine.compile("fn:msr:msr_read { @[args->count] = count(); }"));
	auto absent = machine.compile("fn:msr:msr_rea { @[args->count] = count(); }");
	ASSERT_FALSE(absent);
	EXPECT_NE(absent.error().message.find("msr_rea"), std::string::npos) << absent.error().message;
	ModuleMachine fresh(dirs[0], kModuleKallsyms);
	ASSERT_TRUE(fresh.add_module("msr"));
	std::filesystem::remove(fresh.dir / "kallsyms");
	auto unnamed = fresh.compile("fn:msr_ioctl { @[args->arg] = count(); }");
	ASSERT_FALSE(unnamed) << "which module has it, only kallsyms says";
	EXPECT_NE(unnamed.error().message.find("kallsyms"), std::string::npos) << unnamed.error().message;
}

// What cannot be read says why, at the argument's position: a module
// without its BTF file, a function kallsyms does not have, and a function
// the named module does not have.
TEST(ModuleBtf, WhatCannotBeTypedSaysWhy)
{
	auto dirs = vtice::symbols::testing::debian_kernel_dirs();
	if (dirs.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	ModuleMachine machine(dirs[0], kModuleKallsyms);
	ASSERT_TRUE(machine.add_module("msr") && machine.add_module("cpuid"))
		<< "the kernel package has msr.ko and cpuid.ko";
	auto refusal = [&](const std::string &source) {
		auto p = machine.compile(source);
		EXPECT_FALSE(p) << source;
		return p ? std::string() : vtice::probes::format_diagnostic(source, p.error());
	};
	std::string gone = refusal("fn:orphan_read { @[args->count] = count(); }");
	EXPECT_NE(gone.find("orphan_read is module gone's, and its types cannot be read"), std::string::npos) << gone;
	std::string none = refusal("fn:no_such_read { @[args->count] = count(); }");
	EXPECT_NE(none.find("no function no_such_read in"), std::string::npos) << none;
	EXPECT_NE(none.find("/kallsyms"), std::string::npos) << none;
	EXPECT_TRUE(machine.compile("fn:cpuid_read { @[arg2] = count(); }")) << "argN needs no types";
	std::string not_there = refusal("fn:cpuid:msr_read { @[args->count] = count(); }");
	EXPECT_NE(not_there.find("no function msr_read in module cpuid (the kernel and msr each have one)"), std::string::npos)
		<< not_there;
}

TEST(ProbeParams, AMissingBtfSaysSoAtEveryQuestion)
{
	auto lookup = vtice::console::kernel_params(probe_types("/nonexistent/btf"));
	for (int i = 0; i < 2; i++) {
		auto params = lookup("vfs_read");
		ASSERT_FALSE(params);
		EXPECT_NE(params.error().message.find("no kernel BTF to name arguments by"), std::string::npos)
			<< params.error().message;
	}
}
