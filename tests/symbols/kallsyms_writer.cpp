#include "kallsyms_writer.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace vtice::symbols::testing {

namespace {

struct Writer {
	Bytes out;

	void align8()
	{
		while (out.size() % 8)
			out.push_back(0);
	}
	template <class T>
	void put(T value)
	{
		std::uint8_t raw[sizeof(T)];
		std::memcpy(raw, &value, sizeof(T));
		out.insert(out.end(), raw, raw + sizeof(T));
	}
};

struct Tokens {
	std::array<std::string, 256> text;
	std::vector<std::pair<std::string, std::uint8_t>> multi;  // longest first
};

Tokens choose_tokens(const std::vector<FakeSymbol> &symbols, bool empty_unused)
{
	static const char *const kCommon[] = {"sys_", "do_", "open", "at", "__", "x64_", "entry_", "func_",
					      "init", "_lock", "read", "write", "irq", "mm_"};
	Tokens tokens;
	std::array<bool, 256> used{};
	for (const FakeSymbol &symbol : symbols) {
		used[static_cast<std::uint8_t>(symbol.type)] = true;
		for (char c : symbol.name)
			used[static_cast<std::uint8_t>(c)] = true;
	}
	for (unsigned c = 0; c < 256; c++)
		if (used[c])
			tokens.text[c] = std::string(1, static_cast<char>(c));
	std::size_t next_common = 0, junk = 0;
	for (unsigned c = 0; c < 256; c++) {
		if (used[c])
			continue;
		if (next_common < std::size(kCommon)) {
			tokens.text[c] = kCommon[next_common++];
			tokens.multi.emplace_back(tokens.text[c], static_cast<std::uint8_t>(c));
		} else if (!empty_unused) {
			tokens.text[c] = "~j" + std::to_string(junk++);
		}
	}
	std::sort(tokens.multi.begin(), tokens.multi.end(),
		  [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
	return tokens;
}

// Greedy: the longest multi-character token at each position, else the
// character itself (which is its own code, as in the kernel).
std::vector<std::uint8_t> encode(const std::string &full, const Tokens &tokens)
{
	std::vector<std::uint8_t> codes;
	for (std::size_t at = 0; at < full.size();) {
		bool matched = false;
		for (const auto &[text, code] : tokens.multi) {
			if (at > 0 && full.compare(at, text.size(), text) == 0) {
				codes.push_back(code);
				at += text.size();
				matched = true;
				break;
			}
		}
		if (!matched)
			codes.push_back(static_cast<std::uint8_t>(full[at++]));
	}
	return codes;
}

void write_addresses(Writer &w, const std::vector<FakeSymbol> &symbols, const WriterOptions &options,
		     WrittenTables &written)
{
	w.align8();
	written.addresses = w.out.size();
	for (const FakeSymbol &symbol : symbols) {
		switch (options.mode) {
		case KallsymsAddressMode::absolute:
			w.put<std::uint64_t>(symbol.address);
			break;
		case KallsymsAddressMode::relative:
			w.put<std::uint32_t>(static_cast<std::uint32_t>(symbol.address - options.relative_base));
			break;
		case KallsymsAddressMode::absolute_percpu:
			if (symbol.address < options.relative_base)  // per-cpu: stored as is
				w.put<std::int32_t>(static_cast<std::int32_t>(symbol.address));
			else
				w.put<std::int32_t>(static_cast<std::int32_t>(
					-static_cast<std::int64_t>(symbol.address - options.relative_base) - 1));
			break;
		}
	}
	if (options.mode != KallsymsAddressMode::absolute) {
		w.align8();
		w.put<std::uint64_t>(options.relative_base);
	}
}

void write_names(Writer &w, const std::vector<FakeSymbol> &symbols, const Tokens &tokens,
		 const WriterOptions &options, WrittenTables &written)
{
	w.align8();
	w.put<std::uint32_t>(static_cast<std::uint32_t>(symbols.size()));
	w.align8();
	written.names = w.out.size();
	std::vector<std::uint64_t> markers;
	for (std::size_t i = 0; i < symbols.size(); i++) {
		if (i % 256 == 0)
			markers.push_back(w.out.size() - written.names);
		auto codes = encode(std::string(1, symbols[i].type) + symbols[i].name, tokens);
		if (codes.size() < 0x80) {
			w.out.push_back(static_cast<std::uint8_t>(codes.size()));
		} else {
			w.out.push_back(static_cast<std::uint8_t>((codes.size() & 0x7f) | 0x80));
			w.out.push_back(static_cast<std::uint8_t>(codes.size() >> 7));
		}
		w.out.insert(w.out.end(), codes.begin(), codes.end());
	}
	w.align8();
	for (std::uint64_t marker : markers) {
		if (options.marker_width == 8)
			w.put<std::uint64_t>(marker);
		else
			w.put<std::uint32_t>(static_cast<std::uint32_t>(marker));
	}
}

void write_seqs(Writer &w, const std::vector<FakeSymbol> &symbols)
{
	std::vector<std::uint32_t> order(symbols.size());
	for (std::uint32_t i = 0; i < order.size(); i++)
		order[i] = i;
	std::stable_sort(order.begin(), order.end(),
			 [&](std::uint32_t a, std::uint32_t b) { return symbols[a].name < symbols[b].name; });
	w.align8();
	for (std::uint32_t seq : order) {
		w.out.push_back(static_cast<std::uint8_t>(seq >> 16));
		w.out.push_back(static_cast<std::uint8_t>(seq >> 8));
		w.out.push_back(static_cast<std::uint8_t>(seq));
	}
}

void write_tokens(Writer &w, const Tokens &tokens, WrittenTables &written)
{
	w.align8();
	written.token_table = w.out.size();
	std::array<std::uint16_t, 256> index{};
	for (unsigned c = 0; c < 256; c++) {
		index[c] = static_cast<std::uint16_t>(w.out.size() - written.token_table);
		w.out.insert(w.out.end(), tokens.text[c].begin(), tokens.text[c].end());
		w.out.push_back(0);
	}
	w.align8();
	written.token_index = w.out.size();
	for (std::uint16_t offset : index)
		w.put<std::uint16_t>(offset);
}

}  // namespace

WrittenTables write_kallsyms(const std::vector<FakeSymbol> &symbols, const WriterOptions &options)
{
	Tokens tokens = choose_tokens(symbols, options.empty_unused_tokens);
	Writer w;
	WrittenTables written;
	if (options.layout == FakeLayout::v64) {
		write_names(w, symbols, tokens, options, written);
		write_tokens(w, tokens, written);
		write_addresses(w, symbols, options, written);
		write_seqs(w, symbols);
	} else {
		write_addresses(w, symbols, options, written);
		write_names(w, symbols, tokens, options, written);
		if (options.layout == FakeLayout::v62)
			write_seqs(w, symbols);
		write_tokens(w, tokens, written);
	}
	w.align8();
	written.bytes = std::move(w.out);
	return written;
}

std::vector<FakeSymbol> make_fake_symbols(std::size_t n, std::uint64_t text_base)
{
	static const char *const kStems[] = {"do_sys_open", "__x64_sys_read", "entry_irq", "mm_init",
					     "func_write", "spin_lock", "vfs_", "ext4_", "tcp_v4_"};
	std::vector<FakeSymbol> out;
	std::uint64_t address = text_base;
	for (std::size_t i = 0; i < n; i++) {
		FakeSymbol symbol;
		symbol.name = std::string(kStems[i % std::size(kStems)]) + std::to_string(i);
		if (i < 3) {  // per-cpu variables live at small offsets
			symbol.address = 0x1000 * i;
			symbol.type = 'A';
		} else {
			symbol.address = address;
			symbol.type = "TtDdBbRr"[i % 8];
			address += 0x10 + (i % 7) * 0x20;
		}
		out.push_back(symbol);
	}
	return out;
}

}  // namespace vtice::symbols::testing
