#include "vmcore_dump.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../btf/btf_source.hpp"
#include "elf_core.hpp"
#include "free_pages.hpp"
#include "kernel_ram.hpp"
#include "kernel_state.hpp"
#include "notes.hpp"
#include "vtice/interrupts.hpp"
#include "vtice/write_output.hpp"

namespace vtice::dbg::vmcore {

namespace {

// arch/x86/include/asm/page_64_types.h: the direct map's base without
// KASLR (CONFIG_DYNAMIC_MEMORY_LAYOUT moves it; page_offset_base then holds it).
constexpr std::uint64_t kDefaultPageOffset = 0xffff888000000000ull;
constexpr std::uint64_t kPage = 4096;

// Physical reads for the length of the dump: the stub's physical mode when
// it has one, else the direct map.
class PhysicalMemory {
public:
	PhysicalMemory(Session &session, std::uint64_t page_offset) : session_(session), page_offset_(page_offset)
	{
		physical_ = session.target().features().physical_memory && session.target().set_physical_mode(true);
	}
	~PhysicalMemory()
	{
		if (physical_)
			(void)session_.target().set_physical_mode(false);
	}
	PhysicalMemory(const PhysicalMemory &) = delete;
	PhysicalMemory &operator=(const PhysicalMemory &) = delete;

	Result<std::vector<std::uint8_t>> read(std::uint64_t paddr, std::size_t length)
	{
		if (physical_)
			return session_.target().read_memory(paddr, length);
		return session_.read_memory(page_offset_ + paddr, length);
	}
	const char *how() const { return physical_ ? "physical reads" : "the direct map"; }

private:
	Session &session_;
	std::uint64_t page_offset_;
	bool physical_ = false;
};

std::string mib(std::uint64_t bytes)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
	return buf;
}

// "vmcore: 120.0 MiB of 511.6 MiB, 40.2 MiB/s, 10 s left" (KiB/s on a slow line)
CoreProgress progress_line(Output &out, std::chrono::steady_clock::time_point start)
{
	return [&out, start](std::uint64_t done, std::uint64_t total) {
		if (interrupts::command_interrupted() || interrupts::end_signal())
			return false;
		double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
		std::string line = "vmcore: " + mib(done) + " of " + mib(total);
		if (rate > 0) {
			char buf[64];
			if (rate >= (1 << 20))
				std::snprintf(buf, sizeof buf, ", %.1f MiB/s", rate / (1 << 20));
			else
				std::snprintf(buf, sizeof buf, ", %.1f KiB/s", rate / 1024);
			line += buf;
			std::snprintf(buf, sizeof buf, ", %.0f s left", static_cast<double>(total - done) / rate);
			line += buf;
		}
		out.progress(line);
		return true;
	};
}

std::string directory_of(const std::string &path)
{
	auto slash = path.rfind('/');
	return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// PATH.part, for a path check_dump_output() accepted.
Result<int> create_part_file(const std::string &path, std::string &part)
{
	part = path + ".part";
	int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return make_error("cannot create " + part + ": " + std::strerror(errno));
	return fd;
}

// Room for the whole of RAM where the file goes, unless zero pages may
// shrink it (then a full disk ends the dump with a clear write error).
Result<void> check_room(const std::string &path, std::uint64_t needed, bool may_shrink, Output &out)
{
	std::string dir = directory_of(path);
	struct statvfs fs;
	if (::statvfs(dir.c_str(), &fs) != 0)
		return {};
	std::uint64_t room = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
	if (room >= needed)
		return {};
	std::string text = "the dump needs up to " + mib(needed) + " and " + dir + " has " + mib(room) + " free";
	if (!may_shrink)
		return make_error(text + " (--filter zero writes less)");
	out.print("warning: %s; going on, as zero pages take no room\n", text.c_str());
	return {};
}

// --filter free: RAM without the buddy allocator's free blocks, except in
// the kernel image; counts what was left out and what was kept.
Result<std::vector<PhysicalRange>> without_free_pages(Session &session, std::string_view vmcoreinfo,
						       const std::vector<PhysicalRange> &ram,
						       const std::optional<RamRange> &image, DumpSummary &summary, Output &out)
{
	auto pages = page_layout(session, vmcoreinfo);
	if (!pages)
		return pages.error();
	auto free = free_blocks(session, *pages, ram, out);
	if (!free)
		return free.error();
	std::uint64_t found = 0, before = 0, after = 0;
	for (const auto &b : *free)
		found += b.size / kPage;
	if (image)
		*free = outside(*free, {image->paddr, image->size});
	// Room for the ranges and for zero fill's splits in one header table.
	auto kept = subtract(ram, *free, 0xff00 - CoreLayout{}.max_splits);
	for (const auto &r : ram)
		before += r.size / kPage;
	for (const auto &r : kept)
		after += r.size / kPage;
	summary.free_pages = before - after;
	summary.free_pages_kept = found - summary.free_pages;
	return kept;
}

// Everything but the RAM's bytes: notes, ranges, the image's header.
Result<CoreLayout> plan_layout(Session &session, const DumpOptions &options, std::uint64_t direct_map,
			       DumpSummary &summary, Output &out)
{
	auto types = session.kernel_types().get(session, out);
	if (!types)
		return make_error("kernel types (BTF) are needed to find RAM: " + types.error().message);
	auto vmcoreinfo = read_vmcoreinfo(session);
	if (!vmcoreinfo)
		return vmcoreinfo.error();
	summary.osrelease = vmcoreinfo_value(*vmcoreinfo, "OSRELEASE");
	auto ram = system_ram(session, **types);
	if (!ram)
		return ram.error();
	auto image = kernel_image(session);
	if (options.skip_free_pages) {
		auto kept = without_free_pages(session, *vmcoreinfo, *ram, image, summary, out);
		if (!kept)
			return kept.error();
		*ram = std::move(*kept);
	}
	CoreLayout layout;
	auto notes = cpu_notes(session, **types, summary.cpus);
	if (!notes)
		return notes.error();
	layout.notes = std::move(*notes);
	auto info = vmcoreinfo_note(*vmcoreinfo);
	layout.notes.insert(layout.notes.end(), info.begin(), info.end());
	for (const auto &r : *ram)
		layout.ram.push_back({r.start, direct_map + r.start, r.size});
	if (image && check_layout({{}, layout.ram, image}))
		layout.kernel_image = image;
	layout.skip_zero_pages = options.skip_zero_pages;
	if (auto r = check_layout(layout); !r)
		return r.error();
	return layout;
}

// Writes PATH.part and renames it when complete; removes it on any failure.
Result<CoreStats> write_file(Session &session, const CoreLayout &layout, const DumpOptions &options,
			     std::uint64_t direct_map, unsigned cpus, Output &out)
{
	std::uint64_t total = 0;
	for (const auto &r : layout.ram)
		total += r.size;
	if (auto r = check_room(options.path, total, options.skip_zero_pages, out); !r)
		return r.error();
	std::string part;
	auto fd = create_part_file(options.path, part);
	if (!fd)
		return fd.error();
	PhysicalMemory memory(session, direct_map);
	out.print("Dumping %s of RAM in %zu ranges and %u CPUs, through %s, to %s\n", mib(total).c_str(),
		  layout.ram.size(), cpus, memory.how(), options.path.c_str());
	auto stats = write_core(
		*fd, layout, [&memory](std::uint64_t pa, std::size_t n) { return memory.read(pa, n); },
		progress_line(out, std::chrono::steady_clock::now()), 1 << 20,
		[&session] { return session.target().connected(); });
	bool closed = ::close(*fd) == 0;
	if (!stats || !closed) {
		::unlink(part.c_str());
		auto why = stats ? "closing " + part + ": " + std::strerror(errno) : stats.error().message;
		return make_error(why + "; " + part + " removed, nothing written");
	}
	if (::rename(part.c_str(), options.path.c_str()) != 0) {
		int e = errno;
		::unlink(part.c_str());
		return make_error("renaming " + part + " to " + options.path + ": " + std::strerror(e));
	}
	return stats;
}

}  // namespace

Result<void> check_dump_output(const std::string &path)
{
	if (auto ok = check_output_path(path); !ok)
		return ok.error();
	struct stat info;
	if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
		return make_error(path + " exists and is not a regular file");
	std::string dir = directory_of(path);
	if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
		return make_error("no directory " + dir);
	if (::access(dir.c_str(), W_OK) != 0)
		return make_error("cannot write in " + dir);
	return {};
}

Result<void> parse_filter(const std::string &text, DumpOptions &options)
{
	std::size_t at = 0;
	do {
		std::size_t comma = text.find(',', at);
		std::string word = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
		if (word == "zero")
			options.skip_zero_pages = true;
		else if (word == "free")
			options.skip_free_pages = true;
		else
			return make_error("--filter '" + word + "': the filters are zero and free (zero,free for both)");
		at = comma == std::string::npos ? text.size() + 1 : comma + 1;
	} while (at <= text.size());
	return {};
}

Result<DumpSummary> dump_vmcore(Session &session, const DumpOptions &options, Output &out)
{
	if (session.state() != SessionState::Stopped)
		return make_error("the target is running: stop it first (interrupt, or a breakpoint)");
	// Before any of the kernel is read: over a serial line that takes minutes.
	if (auto ok = check_dump_output(options.path); !ok)
		return ok.error();
	auto started = std::chrono::steady_clock::now();
	auto page_offset = read_symbol_u64(session, "page_offset_base");
	std::uint64_t direct_map = page_offset ? *page_offset : kDefaultPageOffset;
	DumpSummary summary;
	auto layout = plan_layout(session, options, direct_map, summary, out);
	if (!layout)
		return layout.error();
	auto stats = write_file(session, *layout, options, direct_map, summary.cpus, out);
	if (!stats)
		return stats.error();
	summary.core = *stats;
	summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
	return summary;
}

void print_dump_summary(Output &out, const DumpOptions &options, const DumpSummary &s)
{
	using ull = unsigned long long;
	const CoreStats &c = s.core;
	out.print("Wrote %s: Linux %s, %u CPUs, %llu of %llu MiB of RAM in %u segments, %.1f MiB file, %.1f s\n",
		  options.path.c_str(), s.osrelease.c_str(), s.cpus, static_cast<ull>(c.written_bytes >> 20),
		  static_cast<ull>(c.ram_bytes >> 20), c.load_segments, static_cast<double>(c.file_bytes) / (1 << 20),
		  s.seconds);
	if (s.free_pages)
		out.print("%llu free pages left out, %llu more kept (in the kernel image, or no header left) "
			  "(--filter free: the buddy allocator's, from its struct pages)\n",
			  static_cast<ull>(s.free_pages), static_cast<ull>(s.free_pages_kept));
	if (c.zero_pages)
		out.print("%llu all-zero pages take no room (--filter zero)\n", static_cast<ull>(c.zero_pages));
	if (c.unreadable_pages)
		out.print("warning: the target refused %llu pages, the first at physical 0x%llx; %llu of them are "
			  "left out, %llu written as zeros (no header left to split on)\n",
			  static_cast<ull>(c.unreadable_pages), static_cast<ull>(c.first_unreadable),
			  static_cast<ull>(c.unreadable_pages - c.unreadable_as_zeros),
			  static_cast<ull>(c.unreadable_as_zeros));
}

}  // namespace vtice::dbg::vmcore
