#include "symbol_source.hpp"

#include <algorithm>

#include "kernel_address.hpp"

namespace vtice::dbg {

namespace {

bool is_kernel_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

}  // namespace

SymbolList::SymbolList(std::vector<Entry> entries, std::string origin, std::uint64_t slide)
	: entries_(std::move(entries)), origin_(std::move(origin))
{
	for (auto &e : entries_)
		if (is_kernel_address(e.address))
			e.address += slide;
	std::stable_sort(entries_.begin(), entries_.end(),
			 [](const Entry &a, const Entry &b) { return a.address < b.address; });
	by_name_.resize(entries_.size());
	for (std::size_t i = 0; i < entries_.size(); i++)
		by_name_[i] = i;
	std::stable_sort(by_name_.begin(), by_name_.end(), [this](std::size_t a, std::size_t b) {
		return entries_[a].name < entries_[b].name;
	});
}

std::optional<std::uint64_t> SymbolList::lookup(std::string_view name) const
{
	auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
				   [this](std::size_t i, std::string_view n) { return entries_[i].name < n; });
	// Prefer a text symbol when a name is both (rare, but "_text" vs data aliases exist).
	std::optional<std::uint64_t> found;
	for (; it != by_name_.end() && entries_[*it].name == name; ++it) {
		if (is_kernel_text(entries_[*it].type))
			return entries_[*it].address;
		if (!found)
			found = entries_[*it].address;
	}
	return found;
}

std::vector<std::uint64_t> SymbolList::lookup_all(std::string_view name) const
{
	auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
				   [this](std::size_t i, std::string_view n) { return entries_[i].name < n; });
	std::vector<std::uint64_t> text, other;
	for (; it != by_name_.end() && entries_[*it].name == name; ++it)
		(is_kernel_text(entries_[*it].type) ? text : other).push_back(entries_[*it].address);
	text.insert(text.end(), other.begin(), other.end());  // lookup() prefers text, then the first
	return text;
}

std::vector<SymbolList::Entry>::const_iterator SymbolList::first_after(std::uint64_t address) const
{
	return std::upper_bound(entries_.begin(), entries_.end(), address,
				[](std::uint64_t a, const Entry &e) { return a < e.address; });
}

std::optional<std::uint64_t> SymbolList::next_start(std::uint64_t address) const
{
	auto it = first_after(address);
	if (it == entries_.end())
		return std::nullopt;
	return it->address;
}

const SymbolList::Entry *SymbolList::covering(std::uint64_t address) const
{
	auto it = first_after(address);
	if (it == entries_.begin())
		return nullptr;
	--it;
	// Kernel symbols name kernel addresses only: per-cpu offsets and
	// absolute values (small numbers) must not "cover" user space.
	if (!is_kernel_address(it->address) || !is_kernel_address(address))
		return nullptr;
	// Among aliases at the same address, take the first text symbol.
	auto first = it;
	while (first != entries_.begin() && std::prev(first)->address == it->address)
		--first;
	for (auto a = first; a != entries_.end() && a->address == it->address; ++a)
		if (is_kernel_text(a->type)) {
			it = a;
			break;
		}
	if (address - it->address > (1u << 24))
		return nullptr;	 // past the end of the last symbol
	return &*it;
}

std::optional<SymbolHit> SymbolList::symbolize(std::uint64_t address) const
{
	const Entry *e = covering(address);
	if (!e)
		return std::nullopt;
	return SymbolHit{e->name, e->address, address - e->address};
}

bool SymbolList::text_at(std::uint64_t address) const
{
	const Entry *e = covering(address);
	return e && is_kernel_text(e->type);
}

std::unique_ptr<SymbolList> SymbolList::slid(std::int64_t slide) const
{
	auto out = std::make_unique<SymbolList>(entries_, origin_, static_cast<std::uint64_t>(slide));
	out->set_image_banner(image_banner_);
	return out;
}

std::unique_ptr<SymbolList> SymbolList::with(const std::vector<Entry> &more, std::string origin) const
{
	std::vector<Entry> all = entries_;
	all.insert(all.end(), more.begin(), more.end());
	auto out = std::make_unique<SymbolList>(std::move(all), std::move(origin));
	out->set_image_banner(image_banner_);
	return out;
}

Result<std::unique_ptr<SymbolList>> parse_kallsyms_text(std::string_view text, std::string origin)
{
	std::vector<SymbolList::Entry> entries;
	std::size_t line_no = 0, offset = 0;
	while (offset < text.size()) {
		auto end = text.find('\n', offset);
		std::string_view line = text.substr(offset, end == std::string_view::npos ? end : end - offset);
		std::size_t line_start = offset;
		offset = end == std::string_view::npos ? text.size() : end + 1;
		line_no++;
		while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
			line.remove_suffix(1);
		if (line.empty())
			continue;
		auto sp1 = line.find(' ');
		auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
		if (sp1 == std::string_view::npos || sp2 != sp1 + 2 || sp1 == 0 || sp1 > 16)
			return make_error(origin + ": line " + std::to_string(line_no) + " is not 'ADDRESS TYPE NAME'",
					  line_start);
		std::uint64_t address = 0;
		for (char c : line.substr(0, sp1)) {
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
				c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (d < 0)
				return make_error(origin + ": line " + std::to_string(line_no) + ": bad address", line_start);
			address = address << 4 | static_cast<unsigned>(d);
		}
		std::string_view name = line.substr(sp2 + 1);
		if (auto tab = name.find('\t'); tab != std::string_view::npos)
			name = name.substr(0, tab);  // "name\t[module]": keep the plain name
		entries.push_back({address, std::string(name), line[sp1 + 1]});
	}
	if (entries.empty())
		return make_error(origin + ": no symbols");
	return std::make_unique<SymbolList>(std::move(entries), std::move(origin));
}

Symbolizer make_symbolizer(const SymbolSource *symbols)
{
	if (!symbols)
		return {};
	return [symbols](std::uint64_t address) { return symbols->symbolize(address); };
}

}  // namespace vtice::dbg
