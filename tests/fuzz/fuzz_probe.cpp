// libFuzzer target: the probe language. The input is a program, then (after
// a NUL byte) events to run it over. Any text must be parsed and checked
// or refused with an error inside the text; a program that checks must run
// over any events (any numbers, comms, times) to the end and print its maps
// as text and JSON, within its map bound, without a fault.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "checker.hpp"
#include "diagnostic.hpp"
#include "output.hpp"
#include "runtime.hpp"

namespace pr = vtice::probes;

namespace {

std::optional<std::uint64_t> lookup(std::string_view name)
{
	if (name == "read")
		return 0;
	if (name == "write")
		return 1;
	if (name == "openat")
		return 257;
	return std::nullopt;
}

// Every function takes the same made-up parameters: each width, signed and
// not, and a struct by value (refused).
vtice::Result<std::vector<pr::Param>> params(std::string_view function)
{
	if (function.empty())
		return vtice::make_error("no function");
	return std::vector<pr::Param>{{"a", 4, true, "int"}, {"b", 8, false, "char *"}, {"c", 2, false, "u16"},
				      {"d", 1, true, "s8"}, {"e", 0, false, "struct timespec64"}};
}

// Events from bytes: each takes 24 of them.
void run_events(pr::Runtime &rt, const std::uint8_t *data, std::size_t size)
{
	static const char *const comms[] = {"a", "bash", "", "vtprobe"};
	std::uint64_t now = 0;
	for (std::size_t at = 0; at + 24 <= size && !rt.exited(); at += 24) {
		pr::ProbeEvent ev;
		static const pr::PointKind kinds[] = {pr::PointKind::SyscallEnter, pr::PointKind::SyscallReturn,
						      pr::PointKind::FnEntry, pr::PointKind::Profile, pr::PointKind::Watch};
		static const char *const stacks[] = {"", "[user]", "leaf", "read_zero\nvfs_read\nksys_read"};
		ev.kind = kinds[data[at] % 5];
		ev.watch_addr = 0xffff888000001000ull + (data[at + 2] & 15);
		ev.watch_access = data[at + 2] >> 4 & 3;
		ev.func = comms[data[at + 2] >> 6 & 3];
		ev.kstack = stacks[data[at + 1] >> 5 & 3];
		ev.address = 0xffffffff81000000ull + (data[at + 1] & 3);
		ev.nr = data[at] & 4 ? 257 : data[at + 1] % 3;
		std::memcpy(&ev.args[data[at + 2] % 6], data + at + 3, 8);
		ev.retval = static_cast<std::int8_t>(data[at + 11]) * 1000003LL;
		ev.comm = comms[data[at + 12] % 4];
		ev.pid = data[at + 13] % 8;
		ev.tid = data[at + 14] % 16;
		ev.cpu = data[at + 15] % 4;
		std::uint64_t step;
		std::memcpy(&step, data + at + 16, 8);
		now += step >> 20;
		ev.nsecs = now;
		rt.on_event(ev);
		if (data[at + 1] & 0x80)
			rt.tick(now);
	}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	const void *nul = std::memchr(data, 0, size);
	std::size_t text_len = nul ? static_cast<std::size_t>(static_cast<const std::uint8_t *>(nul) - data) : size;
	std::string_view source(reinterpret_cast<const char *>(data), text_len);
	auto program = pr::compile_program(source, lookup, params);
	if (!program) {
		if (program.error().offset && *program.error().offset > source.size())
			std::abort();	// an error must point inside the program
		std::string shown = pr::format_diagnostic(source, program.error());
		if (shown.empty())
			std::abort();
		return 0;
	}
	// The console resolves fn:NAME and watch: symbols in the running kernel; here each gets one of a few addresses.
	for (auto &probe : program->program.probes)
		for (auto &point : probe.points)
			if (point.kind == pr::PointKind::FnEntry)
				point.address = 0xffffffff81000000ull + point.function.size() % 4;
			else if (point.kind == pr::PointKind::Watch && !point.function.empty())
				point.address = 0xffff888000001000ull + point.function.size() % 8;
	char *buf = nullptr;
	std::size_t len = 0;
	std::FILE *sink = open_memstream(&buf, &len);
	{
		pr::TextOutput text(sink);
		pr::JsonOutput json(sink);
		pr::Output &out = (text_len & 1) ? static_cast<pr::Output &>(json) : text;
		constexpr std::size_t kEntries = 64;
		pr::Runtime rt(*program, out, kEntries);
		rt.begin(0);
		std::size_t events = nul ? text_len + 1 : size;
		run_events(rt, data + events, size - events);
		rt.finish(~0ull);
		for (std::size_t m = 0; m < program->maps.size(); m++)
			if (rt.maps().entries(m).size() > kEntries)
				std::abort();
	}
	std::fclose(sink);
	std::free(buf);
	return 0;
}
