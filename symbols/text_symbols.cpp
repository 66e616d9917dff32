#include "symbols/text_symbols.hpp"

#include <algorithm>
#include <cctype>

namespace vtice::symbols {

namespace {

struct Line {
	std::uint64_t address = 0;
	char type = '?';
	std::string_view name;
	std::string_view module;
};

bool parse_hex(std::string_view digits, std::uint64_t &value)
{
	if (digits.empty() || digits.size() > 16)
		return false;
	value = 0;
	for (char c : digits) {
		int nibble = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
			     : (c >= 'a' && c <= 'f')			  ? c - 'a' + 10
			     : (c >= 'A' && c <= 'F')			  ? c - 'A' + 10
									  : -1;
		if (nibble < 0)
			return false;
		value = value << 4 | static_cast<unsigned>(nibble);
	}
	return true;
}

bool printable_name(std::string_view name)
{
	for (char c : name)
		if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
			return false;
	return !name.empty();
}

// "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[ext4]"
std::optional<Line> parse_line(std::string_view text)
{
	Line line;
	std::size_t space = text.find(' ');
	if (space == std::string_view::npos || !parse_hex(text.substr(0, space), line.address))
		return std::nullopt;
	text.remove_prefix(space + 1);
	if (text.size() < 3 || text[1] != ' ' || !std::isgraph(static_cast<unsigned char>(text[0])))
		return std::nullopt;
	line.type = text[0];
	text.remove_prefix(2);
	std::size_t tab = text.find('\t');
	line.name = text.substr(0, tab);
	if (tab != std::string_view::npos) {
		std::string_view module = text.substr(tab + 1);
		if (module.size() < 3 || module.front() != '[' || module.back() != ']')
			return std::nullopt;
		line.module = module.substr(1, module.size() - 2);
		if (!printable_name(line.module))
			return std::nullopt;
	}
	if (!printable_name(line.name))
		return std::nullopt;
	return line;
}

std::string_view first_line(std::string_view text)
{
	std::string_view line = text.substr(0, text.find('\n'));
	if (!line.empty() && line.back() == '\r')
		line.remove_suffix(1);  // a copy made on Windows or over a serial console
	return line;
}

Error describe_bad_line(std::string_view line, std::size_t number, std::size_t offset)
{
	if (line.find("The real System.map is in") != std::string_view::npos)
		return make_error("this is Debian's placeholder System.map (the real one is in the -dbg "
				  "package); give the vmlinuz or vmlinux instead",
				  offset);
	std::string shown(line.substr(0, 60));
	for (char &c : shown)
		if (!std::isprint(static_cast<unsigned char>(c)))
			c = '?';
	return make_error("line " + std::to_string(number) + " is not 'ADDRESS TYPE NAME': \"" + shown + "\"",
			  offset);
}

}  // namespace

bool looks_like_symbol_text(ByteSpan bytes)
{
	std::string_view text(reinterpret_cast<const char *>(bytes.data()), std::min<std::size_t>(bytes.size(), 4096));
	std::string_view line = first_line(text);
	if (line.size() == text.size() && bytes.size() > text.size())
		return false;  // no newline in the first 4 KiB
	return parse_line(line).has_value() || line.find("The real System.map is in") != std::string_view::npos;
}

Result<TextSymbols> parse_symbol_text(std::string_view text)
{
	TextSymbols out;
	bool nonzero = false;
	std::size_t offset = 0, number = 0;
	while (offset < text.size()) {
		std::size_t end = text.find('\n', offset);
		number++;
		if (end == std::string_view::npos) {
			// Both sources end every line with a newline; a last line without
			// one was cut short and its name may be too.
			out.partial = make_error("line " + std::to_string(number) +
							 " is cut short (no newline at the end); ignored",
						 offset);
			break;
		}
		std::string_view raw = text.substr(offset, end - offset);
		if (!raw.empty() && raw.back() == '\r')
			raw.remove_suffix(1);
		if (!raw.empty()) {
			auto line = parse_line(raw);
			if (!line) {
				out.partial = describe_bad_line(raw, number, offset);
				break;
			}
			if (!line->module.empty())
				out.flavor = TextFlavor::kallsyms;
			nonzero |= line->address != 0;
			out.table.add(line->address, line->type, line->name, line->module);
			out.lines++;
		}
		offset = end + 1;
	}
	if (out.lines == 0)
		return out.partial ? *out.partial : make_error("no symbol lines in the text");
	if (!nonzero)
		return make_error("all " + std::to_string(out.lines) +
				  " addresses are 0: /proc/kallsyms was read without privilege "
				  "(kptr_restrict); read it as root");
	out.table.finalize();
	return out;
}

}  // namespace vtice::symbols
