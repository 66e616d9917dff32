// A writer for synthetic kallsyms tables, written from the description of
// scripts/kallsyms.c's output rather than from the reader, so the reader's
// tests compare against values chosen here (libipt's "every decoder has an
// encoder"). Also used to make the fuzzer's seed corpus.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "symbols/kallsyms.hpp"

namespace vtice::symbols::testing {

struct FakeSymbol {
	std::uint64_t address;
	char type;
	std::string name;
};

enum class FakeLayout { classic, v62, v64 };

struct WriterOptions {
	FakeLayout layout = FakeLayout::v62;
	KallsymsAddressMode mode = KallsymsAddressMode::absolute_percpu;
	std::uint64_t relative_base = 0xffffffff81000000ull;
	unsigned marker_width = 4;
	bool empty_unused_tokens = false;  // leave codes no symbol uses empty, as small kernels do
};

struct WrittenTables {
	Bytes bytes;  // the tables, each 8-aligned relative to bytes[0]
	std::size_t token_table = 0;
	std::size_t token_index = 0;
	std::size_t names = 0;
	std::size_t addresses = 0;
};

// symbols must be sorted by address (the kernel sorts them before writing).
WrittenTables write_kallsyms(const std::vector<FakeSymbol> &symbols, const WriterOptions &options);

// n symbols with varied names (shared prefixes so tokens are used), sorted,
// the first few per-cpu (small addresses) as on x86-64.
std::vector<FakeSymbol> make_fake_symbols(std::size_t n, std::uint64_t text_base = 0xffffffff81000000ull);

}  // namespace vtice::symbols::testing
