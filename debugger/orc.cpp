#include "orc.hpp"

#include <algorithm>
#include <cstring>

namespace vtice::dbg {

namespace {

// struct pt_regs (arch/x86/include/asm/ptrace.h), x86-64.
constexpr std::uint64_t kPtRegsBp = 32, kPtRegsR13 = 16, kPtRegsR10 = 56, kPtRegsDx = 96, kPtRegsDi = 112;
constexpr std::uint64_t kPtRegsIp = 128, kPtRegsCs = 136, kPtRegsSp = 152;
// REGS_PARTIAL points at the hardware iret frame: ip, cs, flags, sp, ss.
constexpr std::uint64_t kIretIp = 0, kIretCs = 8, kIretSp = 24;

OrcType decode_type(unsigned bits, OrcFormat format, bool &end)
{
	if (format == OrcFormat::V1) {
		end = bits & 4;
		switch (bits & 3) {
		case 0: return OrcType::Call;
		case 1: return OrcType::Regs;
		case 2: return OrcType::RegsPartial;
		default: return OrcType::Undefined;
		}
	}
	end = false;
	switch (bits & 7) {
	case 1: return OrcType::EndOfStack;
	case 2: return OrcType::Call;
	case 3: return OrcType::Regs;
	case 4: return OrcType::RegsPartial;
	default: return OrcType::Undefined;
	}
}

OrcEntry decode_entry(const std::uint8_t *raw, OrcFormat format)
{
	OrcEntry e;
	std::uint16_t flags;
	std::memcpy(&e.sp_offset, raw, 2);
	std::memcpy(&e.bp_offset, raw + 2, 2);
	std::memcpy(&flags, raw + 4, 2);
	e.sp_reg = static_cast<OrcReg>(flags & 15);
	e.bp_reg = static_cast<OrcReg>((flags >> 4) & 15);
	bool end = false;
	e.type = decode_type((flags >> 8) & 7, format, end);
	if (format == OrcFormat::V1) {
		// V1 terminator: sp_reg undefined and no end flag = no unwind data.
		if (end)
			e.type = OrcType::EndOfStack;
		else if (e.sp_reg == OrcReg::Undefined)
			e.type = OrcType::Undefined;
	} else {
		e.signal = (flags >> 11) & 1;
	}
	return e;
}

}  // namespace

Result<OrcTable> OrcTable::parse(std::span<const std::uint8_t> ip_table, std::uint64_t ip_base,
				 std::span<const std::uint8_t> entries, OrcFormat format)
{
	if (ip_table.size() % 4)
		return make_error("ORC ip table size " + std::to_string(ip_table.size()) + " is not a multiple of 4");
	std::size_t n = ip_table.size() / 4;
	if (entries.size() != n * 6)
		return make_error("ORC tables disagree: " + std::to_string(n) + " ips but " +
				  std::to_string(entries.size()) + " bytes of entries (want " + std::to_string(n * 6) + ")");
	OrcTable table;
	table.ips_.resize(n);
	table.entries_.resize(n);
	for (std::size_t i = 0; i < n; i++) {
		std::int32_t rel;
		std::memcpy(&rel, ip_table.data() + 4 * i, 4);
		table.ips_[i] = ip_base + 4 * i + static_cast<std::int64_t>(rel);
		if (i && table.ips_[i] < table.ips_[i - 1])
			return make_error("ORC ip table is not sorted at entry " + std::to_string(i), 4 * i);
		table.entries_[i] = decode_entry(entries.data() + 6 * i, format);
	}
	return table;
}

std::optional<OrcEntry> OrcTable::find(std::uint64_t ip) const
{
	auto it = std::upper_bound(ips_.begin(), ips_.end(), ip);
	if (it == ips_.begin())
		return std::nullopt;
	return entries_[static_cast<std::size_t>(it - ips_.begin()) - 1];
}

// One frame up, as arch/x86/kernel/unwind_orc.c does it. Returns false at
// the end of the stack (user mode, or an END entry).
Result<bool> OrcUnwinder::step(UnwindRegs &r, bool &signal, const MemoryReader &read, std::string &note) const
{
	// A return address may point just past the call, into the next
	// function; after an interrupt frame the ip is exact.
	auto entry = table_.find(signal ? r.ip : r.ip - 1);
	if (!entry || entry->type == OrcType::Undefined)
		return make_error("no ORC data for this address");
	const OrcEntry &e = *entry;
	if (e.type == OrcType::EndOfStack)
		return false;
	std::uint64_t sp = 0;
	bool need_full = e.sp_reg == OrcReg::Dx || e.sp_reg == OrcReg::Di || e.sp_reg == OrcReg::R10 ||
			 e.sp_reg == OrcReg::R13;
	if (need_full && !r.full)
		return make_error("ORC needs a register not saved in this frame");
	switch (e.sp_reg) {
	case OrcReg::Sp: sp = r.sp + e.sp_offset; break;
	case OrcReg::Bp: sp = r.bp + e.sp_offset; break;
	case OrcReg::SpIndirect: sp = r.sp; break;
	case OrcReg::BpIndirect: sp = r.bp + e.sp_offset; break;
	case OrcReg::Dx: sp = r.dx; break;
	case OrcReg::Di: sp = r.di; break;
	case OrcReg::R10: sp = r.r10; break;
	case OrcReg::R13: sp = r.r13; break;
	default: return make_error("unsupported ORC sp register");
	}
	if (e.sp_reg == OrcReg::SpIndirect || e.sp_reg == OrcReg::BpIndirect) {
		auto v = read(sp);
		if (!v)
			return v.error();
		sp = *v + (e.sp_reg == OrcReg::SpIndirect ? e.sp_offset : 0);
	}
	UnwindRegs next = r;
	next.full = false;
	if (e.type == OrcType::Call) {
		auto ip = read(sp - 8);
		if (!ip)
			return ip.error();
		next.ip = *ip;
		next.sp = sp;
		signal = false;
		note = "orc";
	} else {
		bool full = e.type == OrcType::Regs;
		std::uint64_t base = sp;  // REGS: pt_regs here; REGS_PARTIAL: the iret frame
		auto ip = read(base + (full ? kPtRegsIp : kIretIp));
		auto cs = read(base + (full ? kPtRegsCs : kIretCs));
		auto nsp = read(base + (full ? kPtRegsSp : kIretSp));
		if (!ip || !cs || !nsp)
			return make_error("cannot read the interrupt frame at the stack");
		if (*cs & 3)
			return false;  // the frame came from user mode: the kernel stack ends here
		next.ip = *ip;
		next.sp = *nsp;
		if (full) {
			auto load = [&](std::uint64_t off, std::uint64_t &out) {
				if (auto v = read(base + off))
					out = *v;
			};
			load(kPtRegsBp, next.bp);
			load(kPtRegsDx, next.dx);
			load(kPtRegsDi, next.di);
			load(kPtRegsR10, next.r10);
			load(kPtRegsR13, next.r13);
			next.full = true;
		}
		signal = true;
		note = "regs";
	}
	if (e.bp_reg == OrcReg::PrevSp) {
		if (auto bp = read(sp + e.bp_offset))
			next.bp = *bp;
	} else if (e.bp_reg == OrcReg::Bp) {
		if (auto bp = read(r.bp + e.bp_offset))
			next.bp = *bp;
	}
	if (next.sp <= r.sp && e.type == OrcType::Call)
		return make_error("ORC unwind went backwards on the stack");
	r = next;
	return true;
}

Result<std::vector<Frame>> OrcUnwinder::unwind(const UnwindRegs &regs, const MemoryReader &read,
					       std::size_t max_frames) const
{
	std::vector<Frame> frames;
	UnwindRegs r = regs;
	bool signal = true;  // the first ip is exact, not a return address
	frames.push_back({r.ip, r.sp, true, "orc"});
	while (frames.size() < max_frames) {
		std::string note;
		auto more = step(r, signal, read, note);
		if (!more) {
			if (frames.size() == 1)
				return more.error();
			frames.back().note += " (unwind stopped: " + more.error().message + ")";
			break;
		}
		if (!*more)
			break;
		frames.push_back({r.ip, r.sp, true, note});
	}
	return frames;
}

Result<OrcTable> read_orc_from_memory(const BlockReader &read, std::uint64_t start_ip, std::uint64_t stop_ip,
				      std::uint64_t start_entries, OrcFormat format)
{
	if (stop_ip <= start_ip || stop_ip - start_ip > (64u << 20))
		return make_error("implausible ORC ip table bounds");
	std::size_t n = (stop_ip - start_ip) / 4;
	auto ips = read(start_ip, n * 4);
	if (!ips)
		return make_error("reading .orc_unwind_ip: " + ips.error().message);
	auto entries = read(start_entries, n * 6);
	if (!entries)
		return make_error("reading .orc_unwind: " + entries.error().message);
	return OrcTable::parse(*ips, start_ip, *entries, format);
}

}  // namespace vtice::dbg
