// libFuzzer target for vtice profile's console half: hostile sample records
// (any group shape, any stack bytes) decoded, unwound with ORC tables the
// fuzzer also writes, named by a symbolizer with hostile names, counted,
// folded and written as a timeline; probe hits with stacks decoded from the
// same records and unwound alike. Layout of the input: [u16 ip-table
// bytes][ip table][entries], then records.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "profile_report.hpp"
#include "profile_samples.hpp"
#include "profile_stacks.hpp"

using namespace vtice;

namespace {

constexpr std::uint64_t kText = 0xffffffff81000000ull, kOrc = 0xffffffff82000000ull;

std::optional<symbols::OrcTables> fuzzed_orc(const std::uint8_t *data, std::size_t size)
{
	std::size_t ip_bytes = size < 2 ? 0 : (data[0] | (data[1] << 8)) & ~std::size_t{3};
	std::size_t table = size < 2 ? 0 : std::min(size - 2, ip_bytes + ip_bytes / 4 * 6);
	ip_bytes = std::min(ip_bytes, table & ~std::size_t{3});
	symbols::SymbolTable names;
	names.add(kOrc, 'R', "__start_orc_unwind_ip");
	names.add(kOrc + ip_bytes, 'R', "__stop_orc_unwind_ip");
	names.add(kOrc + ip_bytes, 'R', "__start_orc_unwind");
	names.finalize();
	const std::uint8_t *bytes = data + 2;
	symbols::MemoryReader read = [&](std::uint64_t address, std::span<std::uint8_t> out) {
		if (address < kOrc || address - kOrc > table || out.size() > table - (address - kOrc))
			return false;
		if (!out.empty())
			std::memcpy(out.data(), bytes + (address - kOrc), out.size());
		return true;
	};
	auto orc = symbols::OrcTable::load(names, read);
	if (!orc)
		return std::nullopt;
	return symbols::OrcTables(std::move(*orc));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	if (size < 2)
		return 0;
	std::size_t ip_bytes = (data[0] | (data[1] << 8)) & ~std::size_t{3};
	std::size_t orc_len = std::min(size - 2, ip_bytes + ip_bytes / 4 * 6);
	auto orc = fuzzed_orc(data, size);
	std::vector<vtice_record> records((size - 2 - orc_len) / sizeof(vtice_record));
	if (!records.empty())
		std::memcpy(records.data(), data + 2 + orc_len, records.size() * sizeof(vtice_record));
	trace::ProfileDecodeStats stats;
	auto samples = trace::decode_profile_records(records, stats);
	// Names with the characters the outputs must keep from splitting lines.
	console::FrameNamer namer([](std::uint64_t a) -> std::optional<SymbolHit> {
		if (a < kText || a >= kText + 0x1000)
			return std::nullopt;
		static const char *const names[] = {"f", "g;h", "a b", "q\"\\\n", ""};
		return SymbolHit{names[a % 5], a & ~15ull, a & 15};
	});
	console::ProfileReport report(samples.empty() ? 0 : samples[0].tsc % 5000);
	char *timeline_text = nullptr;
	std::size_t timeline_len = 0;
	std::FILE *timeline_file = open_memstream(&timeline_text, &timeline_len);
	{
		console::ProfileTimeline timeline(timeline_file, 1.5, 1000);
		for (const auto &s : samples) {
			console::SampleStack stack = console::unwind_sample(orc ? &*orc : nullptr, s, 64);
			auto names = namer.names(s, stack);
			report.add(s, names, stack.truncated);
			timeline.add(s, names);
		}
		timeline.finish();
	}
	std::fclose(timeline_file);
	std::free(timeline_text);
	// The same records as probe hits, whose stacks unwind as samples do.
	trace::SyscallDecodeStats hit_stats;
	for (const auto &ev : trace::decode_syscall_records(records, hit_stats))
		if (ev.probe_hit && ev.rsp) {
			trace::ProfileSample s = trace::probe_hit_sample(ev);
			report.add(s, namer.names(s, console::unwind_sample(orc ? &*orc : nullptr, s, 64)), false);
		}
	std::FILE *sink = std::fopen("/dev/null", "w");
	report.write_text(sink, 10);
	report.write_folded(sink);
	std::fclose(sink);
	return 0;
}
