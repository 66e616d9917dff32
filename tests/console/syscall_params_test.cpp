// args->NAME in syscall: probes (console/syscall_params.hpp): struct
// syscall_metadata's layout from each Debian kernel's BTF against pahole
// reading the same BTF; declared C types at the widths the kernel's
// headers give them (include/linux/types.h, uapi asm-generic/posix_types.h);
// and the declarations found in a kernel memory laid out here as
// kernel/trace/trace_syscalls.c lays it out, at pahole's offsets. The
// Bochs check probe-str runs the same reads on a running kernel.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../symbols/kernel_dir.hpp"
#include "kernel_memory_support.hpp"
#include "syscall_params.hpp"

using namespace vtice;
using namespace vtice::console;

namespace {

struct Kernel {
	std::string image;
	std::shared_ptr<KernelBtf> btf;
};

// Each Debian kernel and its BTF; none, and why, when pahole or the kernels are missing.
std::vector<Kernel> kernels(std::string *why)
{
	std::vector<Kernel> out;
	auto dirs = symbols::testing::debian_kernel_dirs();
	if (dirs.empty())
		*why = "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	else if (test::command_output("command -v pahole").empty())
		*why = "pahole (Debian's pahole package) is not installed";
	else
		for (const auto &dir : dirs) {
			std::string image = (dir / "vmlinux").string();
			out.push_back({image, std::make_shared<KernelBtf>(image)});
		}
	return out;
}

TEST(SyscallParams, TheMetadataLayoutIsWherePaholeSaysItIs)
{
	std::string why;
	auto under_test = kernels(&why);
	if (under_test.empty())
		GTEST_SKIP() << why;
	for (auto &k : under_test) {
		SCOPED_TRACE(k.image);
		auto types = k.btf->types();
		ASSERT_TRUE(types) << types.error().to_string();
		auto layout = syscall_metadata_layout(**types);
		ASSERT_TRUE(layout) << layout.error().to_string();
		EXPECT_EQ(layout->name, test::pahole_offset("syscall_metadata", "name", k.image));
		EXPECT_EQ(layout->syscall_nr, test::pahole_offset("syscall_metadata", "syscall_nr", k.image));
		EXPECT_EQ(layout->nb_args, test::pahole_offset("syscall_metadata", "nb_args", k.image));
		EXPECT_EQ(layout->types, test::pahole_offset("syscall_metadata", "types", k.image));
		EXPECT_EQ(layout->args, test::pahole_offset("syscall_metadata", "args", k.image));
	}
}

// The widths and signs written out from the kernel's headers for x86-64
// (LP64), not read from BTF.
TEST(SyscallParams, DeclaredTypesReadAtTheWidthTheHeadersGiveThem)
{
	std::string why;
	auto under_test = kernels(&why);
	if (under_test.empty())
		GTEST_SKIP() << why;
	const std::map<std::string, std::tuple<std::uint32_t, bool>> expected = {
		{"int", {4, true}},
		{"unsigned int", {4, false}},
		{"unsigned", {4, false}},
		{"long", {8, true}},
		{"unsigned long", {8, false}},
		{"size_t", {8, false}},		// __kernel_size_t: unsigned long
		{"loff_t", {8, true}},		// long long
		{"off_t", {8, true}},		// __kernel_off_t: long
		{"umode_t", {2, false}},	// unsigned short
		{"pid_t", {4, true}},
		{"key_serial_t", {4, true}},	// int32_t
		{"qid_t", {4, false}},		// __kernel_uid32_t
		{"rwf_t", {4, true}},		// __kernel_rwf_t: int
		{"u32", {4, false}},
		{"aio_context_t", {8, false}},	// __kernel_ulong_t
		{"const char __user *", {8, false}},
		{"const char __user *const __user *", {8, false}},	// execve's argv
		{"struct stat __user *", {8, false}},
		{"cap_user_header_t", {8, false}},	// a typedef of a pointer
		{"no_such_type_t", {8, false}},		// the register whole, as the kernel's sys_enter shows it
	};
	for (auto &k : under_test) {
		SCOPED_TRACE(k.image);
		auto types = k.btf->types();
		ASSERT_TRUE(types) << types.error().to_string();
		for (const auto &[type, want] : expected) {
			probes::Param p = param_of_declaration({"x", type}, **types);
			EXPECT_EQ(p.name, "x");
			EXPECT_EQ(p.type, type);
			EXPECT_EQ(p.bytes, std::get<0>(want)) << type;
			EXPECT_EQ(p.is_signed, std::get<1>(want)) << type;
		}
	}
}

// A kernel's syscall metadata laid out at pahole's offsets.
class KernelMemoryImage {
public:
	explicit KernelMemoryImage(const std::string &image)
	{
		static std::map<std::string, std::array<long, 5>> by_image;	// pahole, once an image
		auto [it, fresh] = by_image.try_emplace(image);
		if (fresh) {
			const char *fields[] = {"name", "syscall_nr", "nb_args", "types", "args"};
			for (std::size_t i = 0; i < 5; i++)
				it->second[i] = test::pahole_offset("syscall_metadata", fields[i], image);
		}
		std::tie(name_, nr_, count_, types_, args_) =
			std::tie(it->second[0], it->second[1], it->second[2], it->second[3], it->second[4]);
	}

	// A struct syscall_metadata for nr (-1: one the kernel did not number) at a fresh address.
	std::uint64_t add(std::int32_t nr, const std::vector<std::pair<std::string, std::string>> &args)
	{
		std::uint64_t meta = next(256);
		mem.put_value<std::uint64_t>(meta + name_, put_string("sys_x"));
		mem.put_value<std::int32_t>(meta + nr_, nr);
		mem.put_value<std::int32_t>(meta + count_, static_cast<std::int32_t>(args.size()));
		std::uint64_t names = next(64), types = next(64);
		for (std::size_t i = 0; i < args.size(); i++) {
			mem.put_value<std::uint64_t>(names + 8 * i, put_string(args[i].first));
			mem.put_value<std::uint64_t>(types + 8 * i, put_string(args[i].second));
		}
		mem.put_value<std::uint64_t>(meta + args_, names);
		mem.put_value<std::uint64_t>(meta + types_, types);
		return meta;
	}
	// The kernel's index syscalls_metadata: a pointer to entries pointers.
	void index(const std::map<std::uint64_t, std::uint64_t> &by_nr, std::uint64_t entries)
	{
		std::uint64_t array = next(8 * entries);
		for (std::uint64_t nr = 0; nr < entries; nr++)
			mem.put_value<std::uint64_t>(array + 8 * nr, by_nr.count(nr) ? by_nr.at(nr) : 0);
		mem.put_value<std::uint64_t>(kIndex, array);
		symbols_["syscalls_metadata"] = kIndex;
	}
	// The section's pointers, __start_syscalls_metadata to __stop_.
	void section(const std::vector<std::uint64_t> &metas)
	{
		std::uint64_t start = next(8 * metas.size());
		for (std::size_t i = 0; i < metas.size(); i++)
			mem.put_value<std::uint64_t>(start + 8 * i, metas[i]);
		symbols_["__start_syscalls_metadata"] = start;
		symbols_["__stop_syscalls_metadata"] = start + 8 * metas.size();
	}
	KernelMemory memory() const
	{
		return {[this](std::string_view name) -> std::optional<std::uint64_t> {
				auto it = symbols_.find(std::string(name));
				return it == symbols_.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
			},
			mem.reader()};
	}
	// text and its NUL, then zeros to 128 bytes past it: the kernel's
	// memory is mapped by pages, and a reader may ask for more than the string.
	std::uint64_t put_string(const std::string &text)
	{
		std::string padded = text + std::string(129, '\0');
		std::uint64_t at = next(padded.size());
		mem.put(at, padded.data(), padded.size());
		return at;
	}
	void set_symbol(const std::string &name, std::uint64_t address) { symbols_[name] = address; }

	test::GuestMemory mem;
	long name_ = 0, nr_ = 0, count_ = 0, types_ = 0, args_ = 0;

private:
	static constexpr std::uint64_t kIndex = 0xffffffff83000000ull;
	std::uint64_t next(std::uint64_t bytes)
	{
		std::uint64_t at = free_;
		free_ += (bytes + 15) & ~15ull;
		return at;
	}
	std::uint64_t free_ = 0xffffffff82a00000ull;
	std::map<std::string, std::uint64_t> symbols_;
};

const std::vector<std::pair<std::string, std::string>> kOpenat = {
	{"dfd", "int"}, {"filename", "const char __user *"}, {"flags", "int"}, {"mode", "umode_t"}};

std::vector<std::pair<std::string, std::string>> as_pairs(const std::vector<DeclaredParam> &params)
{
	std::vector<std::pair<std::string, std::string>> out;
	for (const auto &p : params)
		out.emplace_back(p.name, p.type);
	return out;
}

// The first Debian kernel's image and its struct syscall_metadata, for the tests of memory laid out here.
class SyscallMemory : public ::testing::Test {
protected:
	void SetUp() override
	{
		std::string why;
		auto all = kernels(&why);
		if (all.empty())
			GTEST_SKIP() << why;
		k = std::make_unique<Kernel>(all.front());
		auto loaded = k->btf->types();
		ASSERT_TRUE(loaded) << loaded.error().to_string();
		auto found = syscall_metadata_layout(**loaded);
		ASSERT_TRUE(found) << found.error().to_string();
		layout = *found;
	}

	std::unique_ptr<Kernel> k;
	SyscallMetadataLayout layout;
};

TEST_F(SyscallMemory, TheKernelsIndexGivesASyscallsDeclarationByNumber)
{
	KernelMemoryImage image(k->image);
	std::uint64_t openat = image.add(257, kOpenat);
	std::uint64_t fstat = image.add(5, {{"fd", "unsigned int"}, {"statbuf", "struct stat __user *"}});
	image.index({{257, openat}, {5, fstat}}, 460);
	auto declared = read_syscall_declaration(257, layout, image.memory());
	ASSERT_TRUE(declared) << declared.error().to_string();
	EXPECT_EQ(as_pairs(*declared), kOpenat);
	declared = read_syscall_declaration(5, layout, image.memory());
	ASSERT_TRUE(declared) << declared.error().to_string();
	EXPECT_EQ(declared->size(), 2u);
	auto none = read_syscall_declaration(3, layout, image.memory());
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("declares no arguments for syscall 3"), std::string::npos);
}

// Past the end of the kernel's table (a syscall newer than the kernel) the
// index is another allocation's memory: an entry there that does not
// carry the number asked for is no declaration.
TEST_F(SyscallMemory, AnIndexEntryOfAnotherNumberIsNone)
{
	KernelMemoryImage image(k->image);
	std::uint64_t openat = image.add(257, kOpenat);
	image.index({{257, openat}, {300, openat}}, 400);
	EXPECT_TRUE(read_syscall_declaration(257, layout, image.memory()));
	auto stray = read_syscall_declaration(300, layout, image.memory());
	ASSERT_FALSE(stray);
	EXPECT_NE(stray.error().message.find("declares no arguments for syscall 300"), std::string::npos);
}

// A kernel without KALLSYMS_ALL lists no syscalls_metadata: the section's
// entries are searched for the one the kernel numbered nr.
TEST_F(SyscallMemory, WithoutTheIndexTheSectionIsSearchedByNumber)
{
	KernelMemoryImage image(k->image);
	std::uint64_t unnumbered = image.add(-1, {{"x", "int"}});
	std::uint64_t read = image.add(0, {{"fd", "unsigned int"}, {"buf", "char __user *"}, {"count", "size_t"}});
	std::uint64_t openat = image.add(257, kOpenat);
	image.section({unnumbered, read, openat});
	auto declared = read_syscall_declaration(257, layout, image.memory());
	ASSERT_TRUE(declared) << declared.error().to_string();
	EXPECT_EQ(as_pairs(*declared), kOpenat);
	declared = read_syscall_declaration(0, layout, image.memory());
	ASSERT_TRUE(declared) << declared.error().to_string();
	EXPECT_EQ((*declared)[2].name, "count");
	EXPECT_FALSE(read_syscall_declaration(1, layout, image.memory())) << "no entry numbered 1";
}

TEST_F(SyscallMemory, WhatIsNotADeclarationIsRefusedWithWhy)
{
	auto refusal = [&](KernelMemoryImage &image, std::uint64_t nr) {
		auto r = read_syscall_declaration(nr, layout, image.memory());
		EXPECT_FALSE(r);
		return r ? std::string() : r.error().message;
	};
	{
		KernelMemoryImage image(k->image);
		EXPECT_NE(refusal(image, 0).find("CONFIG_FTRACE_SYSCALLS"), std::string::npos) << "no symbols at all";
	}
	{
		KernelMemoryImage image(k->image);
		std::uint64_t seven = image.add(9, {{"a", "int"}, {"b", "int"}, {"c", "int"}, {"d", "int"}, {"e", "int"},
						    {"f", "int"}, {"g", "int"}});
		image.index({{9, seven}}, 16);
		EXPECT_NE(refusal(image, 9).find("says 7 arguments: not a syscall's metadata"), std::string::npos);
	}
	{
		KernelMemoryImage image(k->image);
		std::uint64_t meta = image.add(0, {{"fd", "int"}});
		image.index({{0, meta}}, 1);
		std::string endless(300, 'a');	// no NUL within 128 bytes
		std::uint64_t names = 0;
		std::uint8_t raw[8];
		ASSERT_TRUE(image.mem.reader()(meta + image.args_, raw));
		std::memcpy(&names, raw, 8);
		std::uint64_t text = image.put_string(endless);
		image.mem.put_value<std::uint64_t>(names, text);
		EXPECT_NE(refusal(image, 0).find("runs past 128 bytes"), std::string::npos);
	}
	{
		KernelMemoryImage image(k->image);
		image.set_symbol("__start_syscalls_metadata", 0xffffffff82000000ull);
		image.set_symbol("__stop_syscalls_metadata", 0xffffffff82000000ull + 8 * 5000);
		EXPECT_NE(refusal(image, 0).find("holds 5000 entries: not the syscalls' metadata"), std::string::npos);
	}
	{
		KernelMemoryImage image(k->image);
		image.set_symbol("syscalls_metadata", 0xffffffff83000000ull);	// nothing readable there
		EXPECT_NE(refusal(image, 0).find("cannot read its syscalls_metadata"), std::string::npos);
	}
}

// A name that ends just before a page nothing maps is read whole: the
// reader never asks for bytes past the page its NUL is on.
TEST_F(SyscallMemory, ANameEndingAtAPagesEndBeforeAnUnmappedOneIsRead)
{
	KernelMemoryImage image(k->image);
	std::uint64_t meta = image.add(0, {{"fd", "unsigned int"}});
	image.index({{0, meta}}, 1);
	std::uint64_t names = 0;
	std::uint8_t raw[8];
	ASSERT_TRUE(image.mem.reader()(meta + image.args_, raw));
	std::memcpy(&names, raw, 8);
	const std::uint64_t page_end = 0xffffffff84001000ull;
	image.mem.put(page_end - 3, "fd", 3);
	image.mem.put_value<std::uint64_t>(names, page_end - 3);
	auto declared = read_syscall_declaration(0, layout, image.memory());
	ASSERT_TRUE(declared) << declared.error().to_string();
	EXPECT_EQ((*declared)[0].name, "fd");
}

// The checker's lookup: each declared argument typed, or the memory's error.
TEST_F(SyscallMemory, TheLookupTypesEachArgumentAndSaysWhyWhenItCannot)
{
	auto image = std::make_shared<KernelMemoryImage>(k->image);
	image->index({{257, image->add(257, kOpenat)}}, 300);
	auto lookup = syscall_params(k->btf, [image]() -> Result<KernelMemory> { return image->memory(); });
	auto params = lookup(257, "syscall:openat");
	ASSERT_TRUE(params) << params.error().to_string();
	ASSERT_EQ(params->size(), 4u);
	EXPECT_EQ((*params)[0].name, "dfd");
	EXPECT_EQ((*params)[0].bytes, 4u);
	EXPECT_TRUE((*params)[0].is_signed);
	EXPECT_EQ((*params)[3].bytes, 2u);
	auto none = lookup(2, "syscall:open");
	ASSERT_FALSE(none);
	EXPECT_NE(none.error().message.find("syscall:open: the kernel declares no arguments"), std::string::npos);
	auto unreadable = syscall_params(k->btf, []() -> Result<KernelMemory> { return make_error("/proc/kcore: gone"); });
	auto refused = unreadable(257, "syscall:openat");
	ASSERT_FALSE(refused);
	EXPECT_NE(refused.error().message.find("/proc/kcore: gone"), std::string::npos);
}

// The checker asks once per args-> use; over a serial line each read is a
// round trip: a syscall's declaration is read once, and the memory opened once.
TEST_F(SyscallMemory, EachSyscallsDeclarationIsReadOnce)
{
	auto image = std::make_shared<KernelMemoryImage>(k->image);
	image->index({{257, image->add(257, kOpenat)}}, 300);
	auto reads = std::make_shared<int>(0), opens = std::make_shared<int>(0);
	auto lookup = syscall_params(k->btf, [image, reads, opens]() -> Result<KernelMemory> {
		++*opens;
		KernelMemory memory = image->memory();
		memory.read = [read = memory.read, reads](std::uint64_t address, std::span<std::uint8_t> out) {
			++*reads;
			return read(address, out);
		};
		return memory;
	});
	ASSERT_TRUE(lookup(257, "syscall:openat"));
	int first = *reads;
	EXPECT_GT(first, 0);
	ASSERT_TRUE(lookup(257, "syscall:openat"));
	EXPECT_EQ(*reads, first) << "the second answer is the first's";
	EXPECT_FALSE(lookup(2, "syscall:open"));
	EXPECT_EQ(*opens, 1);
}

}  // namespace
