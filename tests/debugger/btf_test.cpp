// Kernel types from BTF (debugger/btf/): a BTF blob built here with libbpf's
// writer, so every expected offset is the one this test laid out; objects
// in a memory-only target; and the Debian kernel's own BTF against pahole.
#include <gtest/gtest.h>

#include <bpf/btf.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "btf/btf_ptype.hpp"
#include "btf/btf_source.hpp"
#include "btf/btf_types.hpp"
#include "btf/typed_expr.hpp"
#include "commands/command.hpp"
#include "memory_target.hpp"
#include "session.hpp"

using namespace vtice::dbg;

namespace {

constexpr std::uint64_t kThing = 0xffff888000001000ull, kNext = 0xffff888000002000ull;
constexpr std::uint64_t kTask = 0xffff888000003000ull, kGsBase = 0xffff88807fc00000ull;
constexpr std::uint64_t kCurrentTaskOffset = 0x1f000, kBtfBlob = 0xffffffff82000000ull;

// struct inner { int a; int b; };                                  size 8
// struct thing {
//	unsigned long id;		0
//	char name[8];			8
//	union { int u1; unsigned long u2; };	16 (anonymous)
//	struct inner in;		24
//	unsigned int flags:3;		32 (bit 256)
//	struct thing *next;		40
// };                                                               size 48
// struct task_struct { int pid; char comm[16]; };                  size 24
std::vector<std::uint8_t> build_btf()
{
	struct btf *b = btf__new_empty();
	int i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int u8c = btf__add_int(b, "char", 1, BTF_INT_CHAR);
	int u64 = btf__add_int(b, "unsigned long", 8, 0);
	int u32 = btf__add_int(b, "unsigned int", 4, 0);
	int name8 = btf__add_array(b, u32, u8c, 8);
	int comm16 = btf__add_array(b, u32, u8c, 16);
	int inner = btf__add_struct(b, "inner", 8);
	btf__add_field(b, "a", i32, 0, 0);
	btf__add_field(b, "b", i32, 32, 0);
	int anon = btf__add_union(b, nullptr, 8);
	btf__add_field(b, "u1", i32, 0, 0);
	btf__add_field(b, "u2", u64, 0, 0);
	int thing_ptr = btf__add_ptr(b, static_cast<int>(btf__type_cnt(b)) + 1);
	int thing = btf__add_struct(b, "thing", 48);
	EXPECT_EQ(thing, thing_ptr + 1);
	btf__add_field(b, "id", u64, 0, 0);
	btf__add_field(b, "name", name8, 64, 0);
	btf__add_field(b, nullptr, anon, 128, 0);
	btf__add_field(b, "in", inner, 192, 0);
	btf__add_field(b, "flags", u32, 256, 3);
	btf__add_field(b, "next", thing_ptr, 320, 0);
	int task = btf__add_struct(b, "task_struct", 24);
	btf__add_field(b, "pid", i32, 0, 0);
	btf__add_field(b, "comm", comm16, 64, 0);
	btf__add_ptr(b, task);
	btf__add_typedef(b, "pid_t", i32);
	std::uint32_t size = 0;
	auto *raw = static_cast<const std::uint8_t *>(btf__raw_data(b, &size));
	std::vector<std::uint8_t> out(raw, raw + size);
	btf__free(b);
	return out;
}

template <typename T> void put(std::vector<std::uint8_t> &bytes, std::size_t at, T value)
{
	std::memcpy(bytes.data() + at, &value, sizeof(value));
}

class Btf : public ::testing::Test {
protected:
	void SetUp() override
	{
		blob = build_btf();
		auto parsed = btf::Types::parse(blob, "test BTF");
		ASSERT_TRUE(parsed) << parsed.error().message;
		types.emplace(std::move(*parsed));
		auto target = std::make_unique<test::MemoryTarget>();
		memory = target.get();
		std::vector<std::uint8_t> thing(48, 0);
		put<std::uint64_t>(thing, 0, 0x1122334455667788ull);
		std::memcpy(thing.data() + 8, "disk0\0\x01\x02", 8);
		put<std::uint64_t>(thing, 16, 0xdeadbeefull);
		put<std::int32_t>(thing, 24, 5);
		put<std::int32_t>(thing, 28, -7);
		thing[32] = 0xfd;  // flags:3 = 0b101; the bits above belong to nobody
		put<std::uint64_t>(thing, 40, kNext);
		memory->map(kThing, thing);
		std::vector<std::uint8_t> next(48, 0);
		put<std::uint64_t>(next, 0, 42);
		memory->map(kNext, next);
		std::vector<std::uint8_t> task(24, 0);
		put<std::int32_t>(task, 0, 1234);
		std::memcpy(task.data() + 8, "bash\0", 5);
		memory->map(kTask, task);
		std::vector<std::uint8_t> current(8);
		put<std::uint64_t>(current, 0, kTask);
		memory->map(kGsBase + kCurrentTaskOffset, current);
		memory->map(kBtfBlob, blob);
		memory->set("gs_base", kGsBase);
		session = std::make_unique<Session>(std::move(target));
		char map[256];
		std::snprintf(map, sizeof(map), "%016llx D current_task\n%016llx R __start_BTF\n%016llx R __stop_BTF\n",
			      static_cast<unsigned long long>(kCurrentTaskOffset),
			      static_cast<unsigned long long>(kBtfBlob),
			      static_cast<unsigned long long>(kBtfBlob + blob.size()));
		auto symbols = parse_kallsyms_text(map, "test symbols");
		ASSERT_TRUE(symbols);
		session->set_symbols(std::move(*symbols));
	}

	std::string print(const std::string &text)
	{
		auto value = btf::evaluate_typed(text, *types, *session);
		if (!value)
			return "error: " + value.error().message;
		auto shown = btf::render(*value, *types, *session);
		return shown ? *shown : "error: " + shown.error().message;
	}

	std::vector<std::uint8_t> blob;
	std::optional<btf::Types> types;
	test::MemoryTarget *memory = nullptr;
	std::unique_ptr<Session> session;
};

TEST_F(Btf, FindsTypesByTaggedAndBareNames)
{
	EXPECT_TRUE(types->find("struct thing"));
	EXPECT_TRUE(types->find("thing")) << "gdb accepts a struct's bare name";
	EXPECT_TRUE(types->find("pid_t"));
	EXPECT_FALSE(types->find("union thing")) << "the tag must match";
	auto missing = types->find("struct nope");
	ASSERT_FALSE(missing);
	EXPECT_NE(missing.error().message.find("struct nope"), std::string::npos);
}

TEST_F(Btf, MemberOffsetsThroughNestedAndAnonymousMembers)
{
	auto thing = *types->find("struct thing");
	struct Case {
		const char *path;
		std::uint64_t bit_offset, size;
		std::uint32_t bits;
	} cases[] = {{"id", 0, 8, 0},       {"name", 64, 8, 0}, {"u1", 128, 4, 0}, {"u2", 128, 8, 0},
		     {"in.b", 224, 4, 0},   {"flags", 256, 4, 3}, {"next", 320, 8, 0}};
	for (const auto &c : cases) {
		auto m = types->member(thing, c.path);
		ASSERT_TRUE(m) << c.path << ": " << m.error().message;
		EXPECT_EQ(m->bit_offset, c.bit_offset) << c.path;
		EXPECT_EQ(m->size, c.size) << c.path;
		EXPECT_EQ(m->bitfield_bits, c.bits) << c.path;
	}
	EXPECT_FALSE(types->member(thing, "in.c"));
	EXPECT_FALSE(types->member(thing, "in..a"));
	EXPECT_FALSE(types->member(thing, "id.x")) << "an integer has no members";
}

TEST_F(Btf, PtypeShowsEachMemberWithOffsetAndSize)
{
	std::string text = btf::describe_type(*types, *types->find("struct thing"));
	EXPECT_NE(text.find("struct thing {"), std::string::npos) << text;
	EXPECT_NE(text.find("unsigned long id;\t/* 0 8 */"), std::string::npos) << text;
	EXPECT_NE(text.find("char name[8];\t/* 8 8 */"), std::string::npos) << text;
	EXPECT_NE(text.find("struct inner in;\t/* 24 8 */"), std::string::npos) << text;
	EXPECT_NE(text.find("unsigned int flags:3;\t/* 32:0 3 bits */"), std::string::npos) << text;
	EXPECT_NE(text.find("struct thing *next;\t/* 40 8 */"), std::string::npos) << text;
	EXPECT_NE(text.find("} /* size 48 */"), std::string::npos) << text;
	EXPECT_NE(btf::describe_type(*types, *types->find("pid_t")).find("pid_t = int"), std::string::npos);
}

TEST_F(Btf, MembersThroughACastPointer)
{
	char cast[64];
	std::snprintf(cast, sizeof(cast), "((struct thing *)0x%llx)", static_cast<unsigned long long>(kThing));
	std::string base = cast;
	EXPECT_EQ(print(base + "->id"), "1234605616436508552 (0x1122334455667788)");
	EXPECT_EQ(print(base + "->in.a"), "5 (0x5)");
	EXPECT_EQ(print(base + "->in.b"), "-7 (0xfffffff9)");
	EXPECT_EQ(print(base + "->u1"), "-559038737 (0xdeadbeef)");
	EXPECT_EQ(print(base + "->flags"), "5 (0x5)") << "only the bitfield's 3 bits";
	EXPECT_EQ(print(base + "->name"), "\"disk0\"");
	EXPECT_EQ(print(base + "->next->id"), "42 (0x2a)");
	EXPECT_EQ(print(base + "->name[1]"), "105 (0x69)") << "'i'";
	EXPECT_EQ(print(base + "->next"), "(struct thing *) 0xffff888000002000");
	EXPECT_EQ(print(base), "(struct thing *) 0xffff888000001000");
}

TEST_F(Btf, DerefOfACastPrintsTheObject)
{
	char text[64];
	std::snprintf(text, sizeof(text), "*(struct inner *)0x%llx", static_cast<unsigned long long>(kThing + 24));
	std::string shown = print(text);
	EXPECT_NE(shown.find(".a = (int)5"), std::string::npos) << shown;
	EXPECT_NE(shown.find(".b = (int)-7"), std::string::npos) << shown;
}

TEST_F(Btf, DerefOfZeroMemoryShowsEveryMemberAsZero)
{
	char text[64];
	std::snprintf(text, sizeof(text), "*(struct inner *)0x%llx", static_cast<unsigned long long>(kNext + 24));
	std::string shown = print(text);
	EXPECT_NE(shown.find(".a = (int)0"), std::string::npos) << shown;
	EXPECT_NE(shown.find(".b = (int)0"), std::string::npos) << shown;
}

TEST_F(Btf, CurrentIsTheTaskOnTheSelectedCpu)
{
	EXPECT_EQ(print("$current->pid"), "1234 (0x4d2)");
	EXPECT_EQ(print("$current->comm"), "\"bash\"");
	EXPECT_EQ(print("$current"), "(struct task_struct *) 0xffff888000003000");
}

TEST_F(Btf, BadExpressionsAreNamedErrors)
{
	char base[64];
	std::snprintf(base, sizeof(base), "((struct thing *)0x%llx)", static_cast<unsigned long long>(kThing));
	std::string b = base;
	EXPECT_NE(print(b + "->next->next->id").find("NULL"), std::string::npos);
	EXPECT_NE(print(b + "->name[8]").find("past the 8 elements"), std::string::npos);
	EXPECT_NE(print(b + "->nope").find("no member 'nope'"), std::string::npos);
	EXPECT_NE(print("(struct nope *)0x10").find("struct nope"), std::string::npos);
	EXPECT_NE(print("((struct thing *)0x10)->id").find("E14"), std::string::npos) << "unmapped";
	EXPECT_NE(print("(struct thing *)").find("needs an address"), std::string::npos);
	EXPECT_NE(print("((struct thing *)0x10").find("unbalanced"), std::string::npos);
	EXPECT_NE(print(b + "->id->x").find("is not a pointer"), std::string::npos);
	EXPECT_NE(print(b + ".id").find("use '->'"), std::string::npos);
}

TEST_F(Btf, CorruptBlobsAreRejected)
{
	EXPECT_FALSE(btf::Types::parse(std::vector<std::uint8_t>(10, 0), "short"));
	std::vector<std::uint8_t> garbage(4096, 0x5a);
	EXPECT_FALSE(btf::Types::parse(garbage, "garbage"));
	std::vector<std::uint8_t> cut(blob.begin(), blob.begin() + blob.size() / 2);
	auto half = btf::Types::parse(cut, "half");
	ASSERT_FALSE(half);
	EXPECT_NE(half.error().message.find("half"), std::string::npos);
}

// The commands load the kernel's BTF themselves: here from guest memory
// between __start_BTF and __stop_BTF (no file given).
TEST_F(Btf, CommandsLoadTypesFromGuestMemory)
{
	StringOutput out;
	CommandContext ctx{*session, out};
	ASSERT_TRUE(execute_line(ctx, "offsetof struct thing in.b"));
	EXPECT_NE(out.text().find("offset 28 (0x1c), size 4"), std::string::npos) << out.text();
	out.clear();
	ASSERT_TRUE(execute_line(ctx, "offsetof struct thing flags"));
	EXPECT_NE(out.text().find("byte 32 bit 0, 3 bits"), std::string::npos) << out.text();
	out.clear();
	ASSERT_TRUE(execute_line(ctx, "print $current->comm"));
	EXPECT_NE(out.text().find("\"bash\""), std::string::npos) << out.text();
	out.clear();
	ASSERT_TRUE(execute_line(ctx, "ptype struct task_struct"));
	EXPECT_NE(out.text().find("char comm[16];\t/* 8 16 */"), std::string::npos) << out.text();
	EXPECT_FALSE(execute_line(ctx, "ptype struct nope"));
}

// The Debian kernel's own BTF against pahole (an independent reader) on the
// same image: the offsets of members vtice and a user rely on.
TEST(KernelBtf, OffsetsMatchPahole)
{
	std::string image;
	if (std::filesystem::is_directory(VTICE_KERNEL_DIR))
		for (const auto &entry : std::filesystem::directory_iterator(VTICE_KERNEL_DIR))
			if (std::filesystem::exists(entry.path() / "vmlinux"))
				image = (entry.path() / "vmlinux").string();
	if (image.empty())
		GTEST_SKIP() << "no " VTICE_KERNEL_DIR "/*/vmlinux (make kernel)";
	if (std::system("pahole --version >/dev/null 2>&1") != 0)
		GTEST_SKIP() << "pahole is not installed";
	auto types = btf::load_file(image);
	ASSERT_TRUE(types) << types.error().message;
	const std::map<std::string, std::vector<std::string>> fields = {
		{"task_struct", {"pid", "tgid", "comm", "mm", "active_mm", "real_parent", "parent", "cred", "files",
				 "stack", "prio", "flags"}},
		{"file", {"f_mode", "f_flags", "f_pos", "f_inode", "f_op", "f_cred", "private_data", "f_count",
			  "f_path"}},
	};
	for (const auto &[type, names] : fields) {
		std::string cmd = "pahole -F btf -C " + type + " " + image;
		FILE *p = popen(cmd.c_str(), "r");
		ASSERT_NE(p, nullptr);
		std::string text;
		char line[512];
		while (std::fgets(line, sizeof(line), p))
			text += line;
		ASSERT_EQ(pclose(p), 0) << cmd;
		auto id = types->find("struct " + type);
		ASSERT_TRUE(id);
		for (const auto &name : names) {
			// pahole: "\tpid_t   pid;   /*  2456     4 */" (top-level members are tab-indented once)
			std::size_t at = std::string::npos;
			for (std::size_t pos = text.find(" " + name); pos != std::string::npos && at == std::string::npos;
			     pos = text.find(" " + name, pos + 1)) {
				char after = text[pos + 1 + name.size()];
				std::size_t bol = text.rfind('\n', pos) + 1;
				if ((after == ';' || after == '[') && text[bol] == '\t' && text[bol + 1] != '\t')
					at = pos;
			}
			ASSERT_NE(at, std::string::npos) << "pahole shows no " << type << "." << name;
			unsigned long offset = 0, size = 0;
			ASSERT_EQ(std::sscanf(text.c_str() + text.find("/*", at), "/* %lu %lu */", &offset, &size), 2)
				<< type << "." << name;
			auto m = types->member(*id, name);
			ASSERT_TRUE(m) << m.error().message;
			EXPECT_EQ(m->bit_offset / 8, offset) << type << "." << name;
			EXPECT_EQ(m->size, size) << type << "." << name;
		}
	}
}

}  // namespace
