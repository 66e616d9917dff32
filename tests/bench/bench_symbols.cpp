// Symbol recovery and lookup speed on the real Debian kernel image.
//   build/tests/bench/bench_symbols --benchmark_min_time=2
// Benchmarks whose input is missing report an error instead of a figure.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "../symbols/kernel_dir.hpp"
#include "symbols/bzimage.hpp"
#include "symbols/loader.hpp"

using namespace vtice;
using namespace vtice::symbols;

namespace {

std::string kernel_file(const char *name)
{
	auto dir = vtice::symbols::testing::debian_kernel_dir();
	return dir ? (*dir / name).string() : std::string();
}

const Bytes *cached(const char *name)
{
	static std::map<std::string, Bytes> files;
	auto it = files.find(name);
	if (it == files.end()) {
		std::string path = kernel_file(name);
		auto bytes = path.empty() ? Result<Bytes>(make_error("missing")) : read_file(path);
		if (!bytes)
			return nullptr;
		it = files.emplace(name, std::move(*bytes)).first;
	}
	return &it->second;
}

std::shared_ptr<const SymbolTable> debian_table()
{
	static std::shared_ptr<const SymbolTable> table = [] {
		const Bytes *vmlinux = cached("vmlinux");
		if (!vmlinux)
			return std::shared_ptr<const SymbolTable>();
		auto loaded = load_symbols_from(std::make_shared<const Bytes>(*vmlinux), "vmlinux");
		return loaded ? std::shared_ptr<const SymbolTable>(loaded->table) : nullptr;
	}();
	return table;
}

// The kallsyms search and decode over the vmlinux file already in memory:
// the same bytes a debugger would have read from the image or the guest.
void BM_RecoverFromVmlinux(benchmark::State &state)
{
	const Bytes *vmlinux = cached("vmlinux");
	if (!vmlinux)
		return state.SkipWithError("Debian vmlinux not unpacked (tools/kernel.sh build/kernel)");
	auto image = ElfImage::parse(std::make_shared<const Bytes>(*vmlinux));
	const ElfSegment &text = image->segments().front();
	for (auto _ : state) {
		auto table = recover_kallsyms(image->segment_bytes(text), text.vaddr);
		benchmark::DoNotOptimize(table);
		if (!table.ok())
			return state.SkipWithError(table.error().message.c_str());
	}
}
BENCHMARK(BM_RecoverFromVmlinux)->Unit(benchmark::kMillisecond);

// The whole path from a vmlinux file on disk: read, ELF, detect, recover.
void BM_LoadVmlinuxFile(benchmark::State &state)
{
	std::string path = kernel_file("vmlinux");
	if (path.empty())
		return state.SkipWithError("Debian vmlinux not unpacked");
	for (auto _ : state) {
		auto loaded = load_symbols(path);
		benchmark::DoNotOptimize(loaded);
	}
}
BENCHMARK(BM_LoadVmlinuxFile)->Unit(benchmark::kMillisecond);

// From vmlinuz in memory, including xz decompression of the payload.
void BM_RecoverFromVmlinuz(benchmark::State &state)
{
	const Bytes *vmlinuz = cached("vmlinuz");
	if (!vmlinuz)
		return state.SkipWithError("Debian vmlinuz not unpacked");
	auto shared = std::make_shared<const Bytes>(*vmlinuz);
	for (auto _ : state) {
		auto loaded = load_symbols_from(shared, "vmlinuz");
		benchmark::DoNotOptimize(loaded);
	}
}
BENCHMARK(BM_RecoverFromVmlinuz)->Unit(benchmark::kMillisecond);

// Random addresses inside kernel text: symbol + offset.
void BM_AddressLookup(benchmark::State &state)
{
	auto table = debian_table();
	if (!table)
		return state.SkipWithError("no Debian table");
	std::uint64_t low = *table->address_of("_text"), high = *table->address_of("_etext");
	std::mt19937_64 random(1);
	std::vector<std::uint64_t> addresses(4096);
	for (auto &address : addresses)
		address = low + random() % (high - low);
	std::size_t i = 0;
	for (auto _ : state)
		benchmark::DoNotOptimize(table->symbol_at(addresses[i++ & 4095]));
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddressLookup);

// Every symbol's name, in table order: name -> address.
void BM_NameLookup(benchmark::State &state)
{
	auto table = debian_table();
	if (!table)
		return state.SkipWithError("no Debian table");
	std::vector<std::string> names;
	for (const Symbol &symbol : table->symbols())
		names.emplace_back(table->name(symbol));
	std::mt19937 random(2);
	std::shuffle(names.begin(), names.end(), random);
	std::size_t i = 0;
	for (auto _ : state)
		benchmark::DoNotOptimize(table->find(names[i++ % names.size()]));
	state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NameLookup);

}  // namespace
