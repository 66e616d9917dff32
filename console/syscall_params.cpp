// A syscall's arguments from the kernel's own declarations (syscall_params.hpp).
#include "syscall_params.hpp"

#include <array>
#include <map>
#include <sstream>

#include "module_orc.hpp"

namespace vtice::console {
namespace {

constexpr std::uint64_t kMaxMetadataEntries = 4096;	// ~460 syscalls in 6.12; more: not the section
constexpr std::size_t kMaxDeclaredText = 128;	// "const struct __kernel_timespec __user *" is 40
constexpr std::uint64_t kPage = 4096;

// A NUL-terminated string at address, read a page at a time (the next page
// may be unmapped), up to kMaxDeclaredText bytes.
Result<std::string> read_c_string(const symbols::MemoryReader &read, std::uint64_t address, const std::string &what)
{
	std::string out;
	while (out.size() < kMaxDeclaredText) {
		std::uint64_t at = address + out.size();
		std::size_t chunk = std::min<std::uint64_t>(kMaxDeclaredText - out.size(), kPage - at % kPage);
		std::vector<std::uint8_t> raw(chunk);
		if (!read(at, raw))
			return make_error("cannot read " + what);
		for (std::uint8_t c : raw) {
			if (!c)
				return out;
			out.push_back(static_cast<char>(c));
		}
	}
	return make_error(what + " runs past " + std::to_string(kMaxDeclaredText) + " bytes: not a name");
}

// The address of the struct syscall_metadata numbered nr, or nothing.
Result<std::optional<std::uint64_t>> metadata_of(std::uint64_t nr, const SyscallMetadataLayout &l,
						 const KernelMemory &memory)
{
	// The kernel's index: a pointer to nr_syscalls pointers, NULL where no
	// SYSCALL_DEFINE named the function at nr (kernel/trace/trace_syscalls.c).
	if (auto index = memory.symbol("syscalls_metadata")) {
		auto array = read_value<std::uint64_t>(memory.read, *index, "syscalls_metadata");
		if (!array)
			return array.error();
		if (!*array)
			return make_error("the kernel indexed no syscall metadata (syscalls_metadata is NULL)");
		auto meta = read_value<std::uint64_t>(memory.read, *array + 8 * nr,
						      "syscalls_metadata[" + std::to_string(nr) + "]");
		if (!meta)
			return meta.error();
		if (!*meta)
			return std::optional<std::uint64_t>();
		// The array is as long as the kernel's table: past it (a syscall
		// newer than the kernel) is another allocation's memory, whose
		// "entry" would not carry nr.
		auto number = read_value<std::int32_t>(memory.read, *meta + l.syscall_nr, "syscall metadata's number");
		if (!number || *number < 0 || static_cast<std::uint64_t>(*number) != nr)
			return std::optional<std::uint64_t>();
		return std::optional<std::uint64_t>(*meta);
	}
	// No KALLSYMS_ALL: the section's pointers, each entry's number read.
	auto start = memory.symbol("__start_syscalls_metadata");
	auto stop = memory.symbol("__stop_syscalls_metadata");
	if (!start || !stop || *stop < *start)
		return make_error("the kernel's symbols have neither syscalls_metadata nor __start_syscalls_metadata "
				  "(a kernel without CONFIG_FTRACE_SYSCALLS declares no syscall's arguments)");
	std::uint64_t entries = (*stop - *start) / 8;
	if (entries > kMaxMetadataEntries)
		return make_error("__start_syscalls_metadata to __stop_syscalls_metadata holds " + std::to_string(entries) +
				  " entries: not the syscalls' metadata");
	for (std::uint64_t i = 0; i < entries; i++) {
		auto meta = read_value<std::uint64_t>(memory.read, *start + 8 * i, "syscalls' metadata section");
		if (!meta)
			return meta.error();
		auto number = read_value<std::int32_t>(memory.read, *meta + l.syscall_nr, "syscall metadata's number");
		if (!number)
			return number.error();
		if (*number >= 0 && static_cast<std::uint64_t>(*number) == nr)
			return std::optional<std::uint64_t>(*meta);
	}
	return std::optional<std::uint64_t>();
}

// The i-th string of an array of char pointers at array.
Result<std::string> nth_string(const symbols::MemoryReader &read, std::uint64_t array, int i, const std::string &what)
{
	auto text = read_value<std::uint64_t>(read, array + 8 * static_cast<std::uint64_t>(i), what);
	if (!text)
		return text.error();
	return read_c_string(read, *text, what);
}

std::vector<std::string> words_of(std::string_view type)
{
	std::vector<std::string> words;
	std::istringstream in{std::string(type)};
	for (std::string word; in >> word;)
		words.push_back(word);
	return words;
}

// C's own integer names (LP64: long is 8 bytes), in any order: "unsigned
// long", "long int", "unsigned"; nothing when another word is there.
std::optional<probes::Param> c_integer(const std::vector<std::string> &words)
{
	probes::Param p;
	p.bytes = 4;
	p.is_signed = true;
	bool any = false;
	for (const std::string &w : words) {
		if (w == "unsigned")
			p.is_signed = false;
		else if (w == "long")
			p.bytes = 8;
		else if (w == "short")
			p.bytes = 2;
		else if (w == "char")
			p.bytes = 1;
		else if (w != "signed" && w != "int")
			return std::nullopt;
		any = true;
	}
	return any ? std::optional<probes::Param>(p) : std::nullopt;
}

}  // namespace

Result<SyscallMetadataLayout> syscall_metadata_layout(const dbg::btf::Types &kernel)
{
	auto type = kernel.find("struct syscall_metadata");
	if (!type)
		return make_error("the kernel's BTF has no struct syscall_metadata (a kernel without "
				  "CONFIG_FTRACE_SYSCALLS declares no syscall's arguments)");
	SyscallMetadataLayout l;
	const std::array<std::pair<const char *, std::uint64_t *>, 5> fields = {
		{{"name", &l.name}, {"syscall_nr", &l.syscall_nr}, {"nb_args", &l.nb_args}, {"types", &l.types},
		 {"args", &l.args}}};
	for (const auto &[name, offset] : fields) {
		auto at = member_byte_offset(kernel, *type, "struct syscall_metadata", name);
		if (!at)
			return at.error();
		*offset = *at;
	}
	auto size = kernel.size_of(*type);
	if (!size)
		return size.error();
	l.size = *size;
	return l;
}

Result<std::vector<DeclaredParam>> read_syscall_declaration(std::uint64_t nr, const SyscallMetadataLayout &layout,
							     const KernelMemory &memory)
{
	auto meta = metadata_of(nr, layout, memory);
	if (!meta)
		return meta.error();
	if (!*meta)
		return make_error("the kernel declares no arguments for syscall " + std::to_string(nr) +
				  " (no SYSCALL_DEFINE of it has metadata)");
	auto count = read_value<std::int32_t>(memory.read, **meta + layout.nb_args, "syscall metadata's nb_args");
	auto types = read_value<std::uint64_t>(memory.read, **meta + layout.types, "syscall metadata's types");
	auto args = read_value<std::uint64_t>(memory.read, **meta + layout.args, "syscall metadata's args");
	if (!count || !types || !args)
		return make_error("cannot read syscall " + std::to_string(nr) + "'s metadata at " +
				  std::to_string(**meta));
	if (*count < 0 || *count > 6)
		return make_error("syscall " + std::to_string(nr) + "'s metadata says " + std::to_string(*count) +
				  " arguments: not a syscall's metadata");
	std::vector<DeclaredParam> out;
	for (int i = 0; i < *count; i++) {
		auto name = nth_string(memory.read, *args, i, "a syscall argument's name");
		auto type = nth_string(memory.read, *types, i, "a syscall argument's type");
		if (!name || !type)
			return (name ? type.error() : name.error());
		out.push_back({*name, *type});
	}
	return out;
}

probes::Param param_of_declaration(const DeclaredParam &declared, const dbg::btf::Types &kernel)
{
	std::vector<std::string> words;
	for (const std::string &w : words_of(declared.type))
		if (w != "const" && w != "volatile" && w != "__user")
			words.push_back(w);
	probes::Param p;
	p.name = declared.name;
	p.type = declared.type;
	p.bytes = 8;	// a pointer, or the register whole
	if (!words.empty() && words.back().back() == '*')	// "char *", "char*"
		return p;
	if (auto integer = c_integer(words)) {
		integer->name = p.name;
		integer->type = p.type;
		return *integer;
	}
	std::string named;
	for (const std::string &w : words)
		named += (named.empty() ? "" : " ") + w;
	auto id = kernel.find(named);
	auto scalar = id && !kernel.is_pointer(*id) ? kernel.scalar(*id) : std::nullopt;
	if (scalar && scalar->bytes <= 8) {
		p.bytes = scalar->bytes;
		p.is_signed = scalar->is_signed;
	}
	return p;
}

namespace {

// What the lookup keeps between the checker's questions (one an args->
// use): the kernel's memory, opened once, and each syscall's answer, so
// that a program naming openat's arguments three times reads them once.
struct SyscallParamsKept {
	std::optional<Result<KernelMemory>> memory;
	std::map<std::uint64_t, Result<std::vector<probes::Param>>> answers;
};

Result<std::vector<probes::Param>> declared_params(std::uint64_t nr, std::string_view name, KernelBtf &btf,
						   const KernelMemorySource &memory, SyscallParamsKept &kept)
{
	auto kernel = btf.types();
	if (!kernel)
		return make_error("no kernel BTF to read " + std::string(name) + "'s declaration by (" +
				  kernel.error().to_string() + "); read argN, or give --btf FILE");
	if (!kept.memory)
		kept.memory = memory();
	if (!*kept.memory)
		return make_error("cannot read the kernel's declarations of its syscalls (" +
				  kept.memory->error().message + "); read argN");
	auto layout = syscall_metadata_layout(**kernel);
	if (!layout)
		return make_error(layout.error().message + "; read argN");
	auto declared = read_syscall_declaration(nr, *layout, **kept.memory);
	if (!declared)
		return make_error(std::string(name) + ": " + declared.error().message + "; read argN");
	std::vector<probes::Param> out;
	for (const DeclaredParam &d : *declared)
		out.push_back(param_of_declaration(d, **kernel));
	return out;
}

}  // namespace

probes::SyscallParamLookup syscall_params(std::shared_ptr<KernelBtf> btf, KernelMemorySource memory)
{
	auto kept = std::make_shared<SyscallParamsKept>();
	return [btf, memory, kept](std::uint64_t nr, std::string_view name) -> Result<std::vector<probes::Param>> {
		auto known = kept->answers.find(nr);
		if (known == kept->answers.end())
			known = kept->answers.emplace(nr, declared_params(nr, name, *btf, memory, *kept)).first;
		return known->second;
	};
}

}  // namespace vtice::console
