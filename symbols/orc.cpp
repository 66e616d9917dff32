#include "symbols/orc.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace vtice::symbols {

namespace {

constexpr std::size_t kEntrySize = 6;
// struct pt_regs slots (arch/x86/include/asm/ptrace.h), in 8-byte words.
constexpr std::uint64_t kPtRegsBp = 4 * 8;
constexpr std::uint64_t kPtRegsIp = 16 * 8;
constexpr std::uint64_t kPtRegsSp = 19 * 8;
// An iret frame is pt_regs from ip on: ip, cs, flags, sp, ss.
constexpr std::uint64_t kIretSp = 3 * 8;
constexpr std::size_t kMaxEntries = 1u << 24;

std::string hex(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
	return text;
}

Result<std::uint64_t> symbol_address(const SymbolTable &symbols, const char *name)
{
	auto address = symbols.address_of(name);
	if (!address)
		return make_error(std::string("no symbol ") + name + ": kernel built without ORC, or symbols incomplete");
	return *address;
}

std::optional<std::uint64_t> read_u64(const MemoryReader &read, std::uint64_t address)
{
	std::uint8_t raw[8];
	if (!read(address, raw))
		return std::nullopt;
	return load_le<std::uint64_t>(raw);
}

}  // namespace

Result<OrcTable> OrcTable::load(const SymbolTable &symbols, const MemoryReader &read)
{
	auto ip_start = symbol_address(symbols, "__start_orc_unwind_ip");
	auto ip_stop = symbol_address(symbols, "__stop_orc_unwind_ip");
	auto entries = symbol_address(symbols, "__start_orc_unwind");
	for (const auto *found : {&ip_start, &ip_stop, &entries})
		if (!found->ok())
			return found->error();
	if (*ip_stop < *ip_start || (*ip_stop - *ip_start) % 4)
		return make_error("ORC ip table bounds make no sense: " + hex(*ip_start) + ".." + hex(*ip_stop));
	return load(*ip_start, (*ip_stop - *ip_start) / 4, *entries, read);
}

Result<OrcTable> OrcTable::load(std::uint64_t ip_table, std::uint64_t count, std::uint64_t entries,
				const MemoryReader &read, const OrcTable *format_of)
{
	if (count == 0)
		return make_error("ORC ip table at " + hex(ip_table) + " is empty");
	if (count > kMaxEntries)
		return make_error("ORC ip table at " + hex(ip_table) + " claims " + std::to_string(count) + " entries");
	OrcTable table;
	table.ip_table_ = ip_table;
	table.ip_offsets_.resize(count);
	table.entries_.resize(count * kEntrySize);
	std::span<std::uint8_t> ips(reinterpret_cast<std::uint8_t *>(table.ip_offsets_.data()), count * 4);
	if (!read(ip_table, ips))
		return make_error("cannot read the ORC ip table at " + hex(ip_table));
	if (!read(entries, table.entries_))
		return make_error("cannot read the ORC entries at " + hex(entries));
	if (format_of) {
		table.new_format_ = format_of->new_format_;
		return table;
	}
	if (!table.detect_format())
		return make_error("ORC tables at " + hex(ip_table) + " hold no recognisable entries");
	return table;
}

bool OrcTable::covers(std::uint64_t ip) const
{
	if (text_hi_)
		return size() && text_lo_ <= ip && ip < text_hi_;
	return size() && ip_at(0) <= ip && ip <= ip_at(size() - 1);
}

const OrcTable *OrcTables::for_ip(std::uint64_t ip) const
{
	for (const OrcTable &m : modules_)
		if (m.covers(ip))
			return &m;
	return kernel_.covers(ip) ? &kernel_ : nullptr;
}

Result<OrcTable> OrcTable::load(const SymbolTable &symbols, const ElfImage &image)
{
	return load(symbols, [&image](std::uint64_t address, std::span<std::uint8_t> out) {
		ByteSpan bytes = image.at_vaddr(address, out.size());
		if (bytes.size() != out.size())
			return false;
		std::memcpy(out.data(), bytes.data(), out.size());
		return true;
	});
}

bool OrcTable::detect_format()
{
	// Votes from plain function entries: type bits 0 (old CALL) or 2 (new CALL).
	std::size_t old_votes = 0, new_votes = 0;
	for (std::size_t i = 0; i < size(); i++) {
		const std::uint8_t *raw = entries_.data() + i * kEntrySize;
		std::uint16_t flags = load_le<std::uint16_t>(raw + 4);
		if (load_le<std::int16_t>(raw) != 8 || (flags & 0xff) != static_cast<unsigned>(OrcReg::sp))
			continue;
		unsigned type = (flags >> 8) & 7;
		old_votes += type == 0;
		new_votes += type == 2;
	}
	new_format_ = new_votes > old_votes;
	return old_votes + new_votes > 0;
}

std::uint64_t OrcTable::ip_at(std::size_t index) const
{
	return ip_table_ + 4 * index + static_cast<std::uint64_t>(static_cast<std::int64_t>(ip_offsets_[index]));
}

OrcEntry OrcTable::decode(std::size_t index) const
{
	const std::uint8_t *raw = entries_.data() + index * kEntrySize;
	std::uint16_t flags = load_le<std::uint16_t>(raw + 4);
	OrcEntry entry;
	entry.ip = ip_at(index);
	entry.sp_offset = load_le<std::int16_t>(raw);
	entry.bp_offset = load_le<std::int16_t>(raw + 2);
	entry.sp_reg = static_cast<OrcReg>(flags & 0xf);
	entry.bp_reg = static_cast<OrcReg>((flags >> 4) & 0xf);
	if (new_format_) {
		static const OrcType types[8] = {OrcType::undefined, OrcType::end_of_stack, OrcType::call,
						 OrcType::regs, OrcType::regs_partial, OrcType::undefined,
						 OrcType::undefined, OrcType::undefined};
		entry.type = types[(flags >> 8) & 7];
		entry.signal = (flags >> 11) & 1;
		return entry;
	}
	static const OrcType types[4] = {OrcType::call, OrcType::regs, OrcType::regs_partial, OrcType::undefined};
	bool end = (flags >> 10) & 1;
	entry.type = types[(flags >> 8) & 3];
	// Before 6.3 an entry without an sp rule is the end of the stack when
	// marked so, and a hole in the table otherwise.
	if (entry.sp_reg == OrcReg::undefined)
		entry.type = end ? OrcType::end_of_stack : OrcType::undefined;
	entry.signal = entry.type == OrcType::regs || entry.type == OrcType::regs_partial;
	return entry;
}

std::optional<OrcEntry> OrcTable::find(std::uint64_t ip) const
{
	// ip_at is monotonic in the index: the build sorts the table.
	std::size_t low = 0, high = size();
	while (low < high) {
		std::size_t mid = low + (high - low) / 2;
		if (ip_at(mid) <= ip)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0)
		return std::nullopt;
	return decode(low - 1);
}

namespace {

Result<std::uint64_t> frame_base(const OrcEntry &entry, const UnwindRegs &regs, const MemoryReader &read)
{
	switch (entry.sp_reg) {
	case OrcReg::sp:
		return regs.rsp + entry.sp_offset;
	case OrcReg::bp:
		return regs.rbp + entry.sp_offset;
	case OrcReg::sp_indirect: {
		auto value = read_u64(read, regs.rsp);
		if (!value)
			return make_error("cannot read the stack at " + hex(regs.rsp));
		return *value + entry.sp_offset;
	}
	case OrcReg::bp_indirect: {
		auto value = read_u64(read, regs.rbp + entry.sp_offset);
		if (!value)
			return make_error("cannot read the stack at " + hex(regs.rbp + entry.sp_offset));
		return *value;
	}
	default:
		return make_error("ORC entry at " + hex(entry.ip) + " needs register " +
				  std::to_string(static_cast<int>(entry.sp_reg)) + ", which a 3-register unwind lacks");
	}
}

Result<void> caller_bp(const OrcEntry &entry, std::uint64_t cfa, const UnwindRegs &callee, UnwindRegs &caller,
		       const MemoryReader &read)
{
	std::uint64_t slot;
	switch (entry.bp_reg) {
	case OrcReg::undefined:
		return {};  // unchanged in this frame (or already taken from pt_regs)
	case OrcReg::prev_sp:
		slot = cfa + entry.bp_offset;
		break;
	case OrcReg::bp:
		slot = callee.rbp + entry.bp_offset;
		break;
	default:
		return make_error("ORC entry at " + hex(entry.ip) + " keeps rbp in an unsupported register");
	}
	auto value = read_u64(read, slot);
	if (!value)
		return make_error("cannot read the saved rbp at " + hex(slot));
	caller.rbp = *value;
	return {};
}

}  // namespace

namespace {

// Where the caller's rip (and, for interrupted frames, rsp and rbp) were saved.
Result<void> caller_from_frame(const OrcEntry &entry, std::uint64_t cfa, UnwindRegs &caller,
			       const MemoryReader &read)
{
	std::uint64_t ip_slot = cfa, sp_slot = 0;
	if (entry.type == OrcType::call) {
		ip_slot = cfa - 8;
		caller.rsp = cfa;
		caller.exact_ip = false;
	} else if (entry.type == OrcType::regs) {
		ip_slot = cfa + kPtRegsIp;
		sp_slot = cfa + kPtRegsSp;
		auto bp = read_u64(read, cfa + kPtRegsBp);
		if (!bp)
			return make_error("cannot read pt_regs at " + hex(cfa));
		caller.rbp = *bp;
	} else {  // regs_partial: an iret frame
		sp_slot = cfa + kIretSp;
	}
	auto ip = read_u64(read, ip_slot);
	if (!ip)
		return make_error("cannot read the return address at " + hex(ip_slot));
	caller.rip = *ip;
	if (sp_slot) {
		auto sp = read_u64(read, sp_slot);
		if (!sp)
			return make_error("cannot read the saved rsp at " + hex(sp_slot));
		caller.rsp = *sp;
	}
	return {};
}

}  // namespace

Result<UnwindStep> unwind_step(const OrcTable &orc, const UnwindRegs &regs, const MemoryReader &read)
{
	std::uint64_t lookup = regs.exact_ip ? regs.rip : regs.rip - 1;
	auto entry = orc.find(lookup);
	if (!entry)
		return make_error("no ORC entry covers " + hex(lookup));
	UnwindStep step;
	if (entry->type == OrcType::end_of_stack) {
		step.end_of_stack = true;
		return step;
	}
	if (entry->type == OrcType::undefined)
		return make_error("ORC has no unwind rule at " + hex(lookup) + " (entry at " + hex(entry->ip) + ")");
	auto cfa = frame_base(*entry, regs, read);
	if (!cfa)
		return cfa.error();
	step.caller.rbp = regs.rbp;
	if (auto frame = caller_from_frame(*entry, *cfa, step.caller, read); !frame)
		return frame.error();
	if (auto bp = caller_bp(*entry, *cfa, regs, step.caller, read); !bp)
		return bp.error();
	return step;
}

}  // namespace vtice::symbols
