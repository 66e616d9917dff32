#include "root_steps.hpp"

#include <array>
#include <cstring>

namespace vtice::replay {

namespace {

constexpr std::size_t kWindowBytes = 8;
constexpr std::size_t kRip = 16, kEflags = 17;

// VTICE_STEP_REG_* (the ModRM order: rax rcx rdx rbx rsp rbp rsi rdi) to root_registers()'s index.
constexpr std::array<std::uint16_t, VTICE_STEP_REGS> kSpecOf = {
	0, 2, 3, 1, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, kEflags, 18, 19,
};

std::vector<std::uint8_t> le_bytes(std::uint64_t value, std::size_t bytes)
{
	std::vector<std::uint8_t> out(bytes);
	for (std::size_t i = 0; i < bytes; i++)
		out[i] = static_cast<std::uint8_t>(value >> (8 * i));
	return out;
}

class Builder {
public:
	Builder()
	{
		Recording &rec = steps_.recording;
		rec.registers = root_registers();
		offsets_ = register_offsets(rec.registers);
		rec.initial.assign(offsets_.back() + rec.registers.back().bytes(), 0);
	}

	Result<RootSteps> take()
	{
		if (steps_.recording.steps.empty())
			return make_error("the records hold no recorded step (was the trace armed with --record?)");
		if (initial_mask_ != (1u << VTICE_STEP_REGS) - 1)
			return make_error("the records hold no whole register file before their first step");
		return std::move(steps_);
	}

	// False where the recording has to stop.
	bool add(const vtice_record &r)
	{
		switch (r.type) {
		case VTICE_REC_STEP: step(r); return true;
		case VTICE_REC_STEP_REGS: return registers(r);
		case VTICE_REC_STEP_MEM: return memory(r);
		case VTICE_REC_LOST:
			steps_.cut = "records were lost after step " + std::to_string(steps_.recording.steps.size());
			return false;
		default: return true;
		}
	}

private:
	void set(std::size_t spec, std::uint64_t value)
	{
		auto bytes = le_bytes(value, steps_.recording.registers[spec].bytes());
		if (!open_) {
			std::memcpy(&steps_.recording.initial[offsets_[spec]], bytes.data(), bytes.size());
			return;
		}
		replay::Step &s = steps_.recording.steps.back();
		for (RegisterChange &c : s.registers)
			if (c.index == spec) {
				c.value = bytes;
				return;
			}
		s.registers.push_back({static_cast<std::uint16_t>(spec), bytes});
	}

	// Before the first step: the register file. After a step: its changes,
	// or a gap's register file, which the state after that step takes on.
	bool registers(const vtice_record &r)
	{
		std::uint32_t count = r.flags >> VTICE_STEP_REG_COUNT_SHIFT & 0xff;
		if (count < 1 || count > 2)
			return cut("a STEP_REGS record with " + std::to_string(count) + " registers");
		for (std::uint32_t k = 0; k < count; k++) {
			std::uint32_t reg = r.flags >> (8 * k) & 0xff;
			if (reg >= VTICE_STEP_REGS)
				return cut("a STEP_REGS record names register " + std::to_string(reg));
			set(kSpecOf[reg], r.u.raw[k]);
			if (!open_)
				initial_mask_ |= 1u << reg;
		}
		return true;
	}

	void step(const vtice_record &r)
	{
		std::uint64_t from = r.u.raw[0], to = r.u.raw[1];
		if (!open_ || rip_ != from)
			set(kRip, from);	// the start; or the last step's end, as the task resumed after a gap
		have_before_ = false;
		steps_.recording.steps.emplace_back();
		open_ = true;
		if (to != from)
			set(kRip, to);
		rip_ = to;
	}

	bool memory(const vtice_record &r)
	{
		if (!open_)
			return cut("a STEP_MEM record before any step");
		std::uint64_t addr = r.u.raw[0];
		auto bytes = le_bytes(r.u.raw[1], kWindowBytes);
		switch (r.flags) {
		case VTICE_STEP_MEM_READ:
			steps_.recording.steps.back().memory.push_back({AccessKind::Read, addr, bytes, {}});
			steps_.reads++;
			return true;
		case VTICE_STEP_MEM_BEFORE:
			before_ = {addr, bytes};
			have_before_ = true;
			return true;
		case VTICE_STEP_MEM_AFTER:
			if (!have_before_ || before_.address != addr)
				return cut("a STEP_MEM AFTER record without its BEFORE");
			steps_.recording.steps.back().memory.push_back({AccessKind::Write, addr, before_.bytes, bytes});
			have_before_ = false;
			steps_.writes++;
			return true;
		case VTICE_STEP_MEM_FRAME:	// an event's frame: what was there before is unknown
			steps_.recording.steps.back().memory.push_back({AccessKind::WriteUnknownOld, addr, {}, bytes});
			steps_.frame_bytes += kWindowBytes;
			return true;
		default:
			return cut("a STEP_MEM record of kind " + std::to_string(r.flags));
		}
	}

	bool cut(const std::string &why)
	{
		steps_.cut = why + " after step " + std::to_string(steps_.recording.steps.size());
		return false;
	}

	RootSteps steps_;
	std::vector<std::size_t> offsets_;
	bool open_ = false, have_before_ = false;
	std::uint32_t initial_mask_ = 0;	// VTICE_STEP_REG_* set before the first step
	std::uint64_t rip_ = 0;
	MemoryBlob before_;
};

}  // namespace

std::vector<RegisterSpec> root_registers()
{
	std::vector<RegisterSpec> specs;
	for (const char *name : {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
				 "r12", "r13", "r14", "r15"})
		specs.push_back({name, 64, std::string(name) == "rsp" || std::string(name) == "rbp" ? "data_ptr" : "int64",
				 "general"});
	specs.push_back({"rip", 64, "code_ptr", "general"});
	specs.push_back({"eflags", 32, "i386_eflags", "general"});
	specs.push_back({"fs_base", 64, "int", "system"});
	specs.push_back({"gs_base", 64, "int", "system"});
	return specs;
}

Result<RootSteps> steps_from_records(std::span<const vtice_record> records)
{
	Builder builder;
	for (const vtice_record &r : records)
		if (!builder.add(r))
			break;
	return builder.take();
}

}  // namespace vtice::replay
