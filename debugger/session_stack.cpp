// Backtraces: the Session's unwinder (ORC) first; a stack scan, marked as
// guesses, when there is no unwinder or it gives up.
#include <cstring>

#include "session.hpp"

namespace vtice::dbg {

namespace {

// THREAD_SIZE on x86-64 with 4 KiB pages and no KASAN: PAGE_SIZE << 2.
constexpr std::uint64_t kThreadSize = 16384;

}  // namespace

std::vector<Frame> scan_stack(std::uint64_t sp, std::uint64_t stack_end, const MemoryReader &read,
			      const TextCheck &is_text, std::size_t max_frames)
{
	std::vector<Frame> frames;
	for (std::uint64_t at = sp; at + 8 <= stack_end && frames.size() < max_frames; at += 8) {
		auto word = read(at);
		if (!word)
			break;
		if (is_text(*word))
			frames.push_back({*word, at + 8, false, "scan"});
	}
	return frames;
}

Result<std::vector<Frame>> Session::backtrace(std::size_t max_frames)
{
	auto ip = register_value("rip");
	auto sp = register_value("rsp");
	if (!ip || !sp)
		return make_error("backtrace: cannot read rip/rsp");
	UnwindRegs regs;
	regs.ip = *ip;
	regs.sp = *sp;
	auto value = [this](const char *name) { auto v = register_value(name); return v ? *v : 0; };
	regs.bp = value("rbp");
	regs.dx = value("rdx");
	regs.di = value("rdi");
	regs.r10 = value("r10");
	regs.r13 = value("r13");
	// Stack words come in page-sized reads: one round trip per page, not per word.
	std::uint64_t cached_page = ~0ull;
	std::vector<std::uint8_t> page;
	auto read_word = [this](std::uint64_t address) -> Result<std::uint64_t> {
		auto bytes = read_memory(address, 8);
		if (!bytes)
			return bytes.error();
		std::uint64_t v;
		std::memcpy(&v, bytes->data(), 8);
		return v;
	};
	MemoryReader read = [&](std::uint64_t address) -> Result<std::uint64_t> {
		std::uint64_t base = address & ~4095ull;
		if ((address & 4095) > 4088)
			return read_word(address);
		if (base != cached_page) {
			// A stub that knows only parts of the page (a replay: what the
			// recording saw) refuses the whole; the word alone may do.
			auto bytes = read_memory(base, 4096);
			if (!bytes || bytes->size() != 4096)
				return read_word(address);
			page = std::move(*bytes);
			cached_page = base;
		}
		std::uint64_t v;
		std::memcpy(&v, page.data() + (address & 4095), 8);
		return v;
	};
	std::vector<Frame> frames;
	if (unwinder_) {
		auto unwound = unwinder_->unwind(regs, read, max_frames);
		if (unwound)
			frames = std::move(*unwound);
	}
	bool stopped_early = frames.empty() || frames.back().note.find("unwind stopped") != std::string::npos;
	if (frames.empty())
		frames.push_back({regs.ip, regs.sp, true, "pc"});
	if (stopped_early && frames.size() < max_frames) {
		// The kernel's own fallback: every text address left on this task's stack.
		std::uint64_t from = frames.back().sp;
		std::uint64_t end = (regs.sp & ~(kThreadSize - 1)) + kThreadSize;
		auto guesses = scan_stack(from, end, read, [this](std::uint64_t a) { return is_kernel_text(a); },
					  max_frames - frames.size());
		frames.insert(frames.end(), guesses.begin(), guesses.end());
	}
	return frames;
}

}  // namespace vtice::dbg
