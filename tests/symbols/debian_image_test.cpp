// The real Debian kernel: kallsyms recovered from vmlinux and vmlinuz, checked
// against the image's own export table (__ksymtab*) and its machine code.
#include <gtest/gtest.h>

#include <unordered_map>

#include "kernel_dir.hpp"
#include "symbols/kaslr.hpp"
#include "symbols/loader.hpp"

using namespace vtice::symbols;

namespace {

class symbols_debian : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		auto dir = vtice::symbols::testing::debian_kernel_dir();
		if (!dir)
			return;
		dir_ = dir->string();
		auto loaded = load_symbols(dir_ + "/vmlinux");
		if (loaded.ok())
			vmlinux_ = std::make_shared<LoadedSymbols>(std::move(*loaded));
		else
			load_error_ = loaded.error().to_string();
	}

	void SetUp() override
	{
		if (dir_.empty())
			GTEST_SKIP() << "no Debian kernel under " VTICE_KERNEL_DIR " (run tools/kernel.sh build/kernel)";
		ASSERT_TRUE(vmlinux_) << load_error_;
	}

	const SymbolTable &table() { return *vmlinux_->table; }
	const ElfImage &image() { return *vmlinux_->image; }

	std::uint64_t address(const char *name)
	{
		auto value = table().address_of(name);
		EXPECT_TRUE(value) << name;
		return value.value_or(0);
	}

	static inline std::string dir_, load_error_;
	static inline std::shared_ptr<LoadedSymbols> vmlinux_;
};

struct Export {
	std::string name;
	std::uint64_t address;
};

// 6.1 x86-64 ksymtab entries are PREL32: {value, name, namespace}, each an
// s32 relative to the field's own address.
std::vector<Export> read_ksymtab(const ElfImage &image, const char *section_name)
{
	std::vector<Export> out;
	const ElfSection *section = image.section(section_name);
	if (!section)
		return out;
	ByteSpan bytes = image.section_bytes(*section);
	for (std::size_t at = 0; at + 12 <= bytes.size(); at += 12) {
		std::uint64_t entry = section->address + at;
		std::int32_t value = *read_le<std::int32_t>(bytes, at);
		std::int32_t name = *read_le<std::int32_t>(bytes, at + 4);
		ByteSpan text = image.at_vaddr(entry + 4 + name, 1);
		std::string symbol;
		for (std::uint64_t p = entry + 4 + name; !text.empty() && text[0] != 0; text = image.at_vaddr(++p, 1))
			symbol.push_back(static_cast<char>(text[0]));
		out.push_back({symbol, entry + value});
	}
	return out;
}

// Target of the first "call rel32" in the bytes at start that lands on target.
bool calls(const ElfImage &image, std::uint64_t start, std::size_t length, std::uint64_t target)
{
	ByteSpan code = image.at_vaddr(start, length);
	for (std::size_t i = 0; i + 5 <= code.size(); i++)
		if (code[i] == 0xe8 && start + i + 5 + *read_le<std::int32_t>(code, i + 1) == target)
			return true;
	return false;
}

}  // namespace

TEST_F(symbols_debian, SymbolCountAndLayout)
{
	EXPECT_GE(table().size(), 80000u);
	EXPECT_LE(table().size(), 120000u);
	EXPECT_EQ(vmlinux_->kind, SourceKind::elf_kallsyms);
	ASSERT_TRUE(vmlinux_->layout);
	// Debian's 6.1 stable kernel carries the 6.2 kallsyms_seqs_of_names table.
	EXPECT_EQ(vmlinux_->layout->style(), "6.2-style");
	EXPECT_FALSE(vmlinux_->partial);
}

TEST_F(symbols_debian, EveryExportedSymbolResolvesToItsKsymtabAddress)
{
	std::unordered_multimap<std::string_view, std::uint64_t> by_name;
	for (const Symbol &symbol : table().symbols())
		by_name.emplace(table().name(symbol), symbol.address);
	std::size_t checked = 0;
	for (const char *section : {"__ksymtab", "__ksymtab_gpl"}) {
		auto exports = read_ksymtab(image(), section);
		EXPECT_GT(exports.size(), 1000u) << section;
		for (const Export &e : exports) {
			auto [first, last] = by_name.equal_range(e.name);
			bool found = false;
			for (auto it = first; it != last; ++it)
				found |= it->second == e.address;
			EXPECT_TRUE(found) << e.name << " exported at 0x" << std::hex << e.address;
			checked++;
		}
	}
	EXPECT_GT(checked, 10000u);
}

TEST_F(symbols_debian, WellKnownSymbolsAgreeWithTheMachineCode)
{
	// _text is where the .text section starts.
	EXPECT_EQ(address("_text"), image().section(".text")->address);
	// entry_SYSCALL_64 begins with swapgs (0f 01 f8).
	ByteSpan entry = image().at_vaddr(address("entry_SYSCALL_64"), 3);
	ASSERT_EQ(entry.size(), 3u);
	EXPECT_EQ(entry[0], 0x0f);
	EXPECT_EQ(entry[1], 0x01);
	EXPECT_EQ(entry[2], 0xf8);
	// __x64_sys_openat calls __fentry__ first and do_sys_openat2 later.
	std::uint64_t openat = address("__x64_sys_openat");
	EXPECT_TRUE(calls(image(), openat, 5, address("__fentry__")));
	EXPECT_TRUE(calls(image(), openat, 0x100, address("do_sys_openat2")));
	auto hit = table().lookup(openat + 0x10);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "__x64_sys_openat");
	EXPECT_EQ(hit->offset, 0x10u);
}

TEST_F(symbols_debian, VmlinuzGivesTheSameTable)
{
	auto loaded = load_symbols(dir_ + "/vmlinuz");
	ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
	EXPECT_EQ(loaded->kind, SourceKind::bzimage_kallsyms);
	ASSERT_EQ(loaded->table->size(), table().size());
	for (const char *name : {"do_sys_openat2", "__x64_sys_openat", "entry_SYSCALL_64", "_etext"})
		EXPECT_EQ(loaded->table->address_of(name), table().address_of(name)) << name;
	EXPECT_NE(loaded->description.find("kallsyms tables in"), std::string::npos);
}

TEST_F(symbols_debian, MemoryWindowWithBaseAddress)
{
	// A dump of .rodata as a debugger would read it from the guest.
	const ElfSection *rodata = image().section(".rodata");
	ASSERT_NE(rodata, nullptr);
	auto recovered = recover_kallsyms(image().section_bytes(*rodata), rodata->address);
	ASSERT_TRUE(recovered.ok()) << recovered.error().to_string();
	EXPECT_EQ(recovered->size(), table().size());
	EXPECT_EQ(recovered->address_of("do_sys_openat2"), table().address_of("do_sys_openat2"));
}

TEST_F(symbols_debian, GuestMemoryThroughAReaderWithAHole)
{
	// The debugger's path: page reads from a halted guest. One unreadable
	// page at the start of .rodata, far from the kallsyms tables.
	const ElfSection *rodata = image().section(".rodata");
	ASSERT_NE(rodata, nullptr);
	std::size_t reads = 0;
	MemoryReader read = [&](std::uint64_t address, std::span<std::uint8_t> out) {
		reads++;
		if (address < rodata->address + 4096)
			return false;
		ByteSpan bytes = image().at_vaddr(address, out.size());
		if (bytes.size() != out.size())
			return false;
		std::copy(bytes.begin(), bytes.end(), out.begin());
		return true;
	};
	auto got = recover_kallsyms_from_memory(read, rodata->address, rodata->size);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	EXPECT_EQ(got->unreadable_pages, 1u);
	EXPECT_EQ(got->recovery.table.size(), table().size());
	EXPECT_EQ(got->recovery.table.address_of("vfs_read"), table().address_of("vfs_read"));
	EXPECT_GE(reads, rodata->size / 4096);
	EXPECT_FALSE(recover_kallsyms_from_memory(read, rodata->address, 0).ok());
}

namespace {

// A 64-bit interrupt gate laid out by hand from SDM Vol. 3A Figure 6-8:
// offset 15:0, selector, IST, type/DPL/P, offset 31:16, offset 63:32, 0.
void put_gate(Bytes &idt, unsigned vector, std::uint64_t handler)
{
	std::uint8_t *gate = idt.data() + vector * 16;
	gate[0] = handler & 0xff;
	gate[1] = (handler >> 8) & 0xff;
	gate[2] = 0x10;  // __KERNEL_CS
	gate[5] = 0x8e;  // present, DPL 0, interrupt gate
	for (int i = 0; i < 6; i++)
		gate[6 + i] = (handler >> (16 + 8 * i)) & 0xff;
}

}  // namespace

TEST_F(symbols_debian, KaslrSlideFromTheIdt)
{
	const std::int64_t slide = 0x1ca00000;  // a 2 MiB multiple, as KASLR picks
	Bytes idt(256 * 16, 0);
	const char *stubs[] = {"asm_exc_divide_error", "asm_exc_int3", "asm_exc_invalid_op",
			       "asm_exc_general_protection", "asm_exc_page_fault"};
	const unsigned vectors[] = {0, 3, 6, 13, 14};
	for (int i = 0; i < 5; i++)
		put_gate(idt, vectors[i], address(stubs[i]) + slide);
	auto got = kaslr_slide_from_idt(table(), idt);
	ASSERT_TRUE(got.ok()) << got.error().to_string();
	EXPECT_EQ(*got, slide);

	put_gate(idt, 14, address("asm_exc_page_fault") + slide + 0x200000);
	auto mismatch = kaslr_slide_from_idt(table(), idt);
	ASSERT_FALSE(mismatch.ok());
	EXPECT_NE(mismatch.error().message.find("disagree"), std::string::npos);
	EXPECT_FALSE(kaslr_slide_from_idt(table(), Bytes(32, 0)).ok());
}

TEST_F(symbols_debian, SlideAppliesToLookups)
{
	SymbolTable slid = table();
	slid.set_slide(0x2a00000);
	EXPECT_EQ(slid.address_of("_text"), 0xffffffff83a00000u);
	auto hit = slid.lookup(address("do_sys_openat2") + 0x2a00000 + 4);
	ASSERT_TRUE(hit);
	EXPECT_EQ(hit->name, "do_sys_openat2");
	EXPECT_EQ(hit->offset, 4u);
}

TEST_F(symbols_debian, TruncatedImageIsAClearError)
{
	const KallsymsLayout &layout = *vmlinux_->layout;
	const ElfSection *rodata = image().section(".rodata");
	// Cut inside kallsyms_names: the token table that follows is gone.
	std::size_t cut = rodata->offset + (layout.names + 5000 - (rodata->address - layout.base_vaddr));
	auto bytes = std::make_shared<const Bytes>(image().bytes().begin(), image().bytes().begin() + static_cast<long>(cut));
	auto loaded = load_symbols_from(bytes, "cut-vmlinux");
	ASSERT_FALSE(loaded.ok());
	EXPECT_NE(loaded.error().message.find("ELF file is truncated"), std::string::npos) << loaded.error().message;
	EXPECT_EQ(loaded.error().offset, cut);
	auto vmlinuz = read_file(dir_ + "/vmlinuz");
	ASSERT_TRUE(vmlinuz.ok());
	vmlinuz->resize(vmlinuz->size() / 2);
	auto half = load_symbols_from(std::make_shared<const Bytes>(std::move(*vmlinuz)), "half-vmlinuz");
	ASSERT_FALSE(half.ok());
	EXPECT_NE(half.error().message.find("truncated"), std::string::npos) << half.error().message;
}

TEST_F(symbols_debian, BitFlipsInTheTablesNeverCrash)
{
	const KallsymsLayout &layout = *vmlinux_->layout;
	const ElfSection *rodata = image().section(".rodata");
	ByteSpan original = image().section_bytes(*rodata);
	std::size_t shift = static_cast<std::size_t>(layout.base_vaddr - rodata->address);
	for (std::size_t target : {layout.names + 1000, layout.markers + 4, layout.token_table + 10,
				   layout.token_index + 20, layout.addresses + 400, layout.relative_base_at}) {
		Bytes copy(original.begin(), original.end());
		copy[target + shift] ^= 0x21;
		auto got = recover_kallsyms_tables(copy, rodata->address);
		if (got.ok()) {
			EXPECT_LE(got->table.size(), table().size());
		} else {
			EXPECT_FALSE(got.error().message.empty());
		}
	}
}
