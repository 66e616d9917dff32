#include "step_recorder.hpp"

#include <algorithm>
#include <cstring>

namespace vtice::dbg {

namespace {

// A REP string instruction is recorded for up to this many bytes per step:
// a stepped stub runs one iteration per step (QEMU, the vtice stub).
constexpr std::uint64_t kRepeatBytes = 4096;

// The registers as the recording keeps them: each one's bytes back to back
// in layout order (a 'g' block may pad or end early).
std::vector<std::uint8_t> pack(const RegisterLayout &layout, const RegisterValues &values)
{
	std::vector<std::uint8_t> out;
	for (const RegisterInfo &reg : layout.registers) {
		std::size_t bytes = reg.bits / 8;
		for (std::size_t i = 0; i < bytes; i++)
			out.push_back(reg.offset + i < values.raw.size() ? values.raw[reg.offset + i] : 0);
	}
	return out;
}

}  // namespace

std::optional<std::uint64_t> StepRecorder::value(const std::vector<std::uint8_t> &regs, std::string_view name) const
{
	int index = replay::register_index(recording_.registers, name);
	if (index < 0)
		return std::nullopt;
	return replay::register_low64(recording_.registers, offsets_, regs, index);
}

Result<void> StepRecorder::begin(std::uint64_t stack_low, std::uint64_t stack_high)
{
	const RegisterLayout &layout = target_.layout();
	for (const RegisterInfo &reg : layout.registers) {
		if (reg.bits == 0 || reg.bits % 8 || reg.bits > replay::kMaxRegisterBits)
			return make_error("record: register " + reg.name + " is " + std::to_string(reg.bits) + " bits wide");
		recording_.registers.push_back({reg.name, reg.bits, reg.type, reg.group});
	}
	offsets_ = replay::register_offsets(recording_.registers);
	if (recording_.registers.empty() || recording_.registers.size() > replay::kMaxRegisters)
		return make_error("record: the target describes " + std::to_string(layout.registers.size()) + " registers");
	auto values = target_.read_registers();
	if (!values)
		return values.error();
	regs_ = pack(layout, *values);
	recording_.initial = regs_;
	bytes_ += regs_.size();
	if (stack_high > stack_low) {
		auto stack = target_.read_memory(stack_low, stack_high - stack_low);
		if (stack) {
			bytes_ += stack->size();
			recording_.memory.push_back({stack_low, std::move(*stack)});
		}
	}
	return {};
}

void StepRecorder::add_range(const MemoryAccess &access, std::uint64_t rcx)
{
	std::uint64_t elements = access.repeated ? std::min<std::uint64_t>(rcx, kRepeatBytes / access.size) : 1;
	if (elements == 0)
		return;  // REP with RCX = 0 touches nothing
	std::uint64_t length = elements * access.size;
	std::uint64_t first = access.downwards ? access.address - (elements - 1) * access.size : access.address;
	auto bytes = target_.read_memory(first, length);
	if (!bytes || bytes->size() != length) {
		unreadable_++;
		return;
	}
	pending_.push_back({access, first, std::move(*bytes)});
}

Result<void> StepRecorder::before_step(const Instruction &insn)
{
	pending_.clear();
	auto source = [&](std::string_view name) { return value(regs_, name); };
	std::uint64_t rcx = value(regs_, "rcx").value_or(0);
	for (const MemoryAccess &access : memory_accesses(insn, source))
		if (access.size && access.size <= replay::kMaxAccessBytes)
			add_range(access, rcx);
	return {};
}

// A REP iteration count the step actually did, from RCX before and after;
// the event keeps those elements only.
void StepRecorder::keep_done_elements(Pending &p, std::uint64_t done, replay::MemoryEvent &event) const
{
	std::uint64_t keep = std::min<std::uint64_t>(done * p.access.size, p.before.size());
	if (keep == p.before.size())
		return;
	std::uint64_t skip = p.access.downwards ? p.before.size() - keep : 0;
	event.address = p.address + skip;
	event.before.assign(p.before.begin() + skip, p.before.begin() + skip + keep);
}

// An interrupt or exception delivered during the step pushed a frame the
// instruction's operands do not show (SDM Vol. 3A 6.14.2: SS, RSP, RFLAGS,
// CS, RIP and an error code): its bytes are kept, what they overwrote not.
void StepRecorder::record_exception_frame(std::uint64_t old_sp, std::uint64_t new_sp, replay::Step &step)
{
	std::uint64_t end = new_sp < old_sp ? std::min(old_sp, new_sp + 64) : new_sp + 48;
	auto bytes = target_.read_memory(new_sp, end - new_sp);
	if (!bytes || bytes->empty())
		return;
	step.memory.push_back({replay::AccessKind::WriteUnknownOld, new_sp, {}, std::move(*bytes)});
}

Result<void> StepRecorder::after_step(const Instruction &insn)
{
	auto values = target_.read_registers();
	if (!values)
		return values.error();
	std::vector<std::uint8_t> now = pack(target_.layout(), *values);
	replay::Step step;
	for (std::size_t i = 0; i < offsets_.size(); i++) {
		auto first = now.begin() + offsets_[i], last = first + recording_.registers[i].bytes();
		if (!std::equal(first, last, regs_.begin() + offsets_[i]))
			step.registers.push_back({static_cast<std::uint16_t>(i), std::vector<std::uint8_t>(first, last)});
	}
	std::uint64_t rcx_before = value(regs_, "rcx").value_or(0), rcx_after = value(now, "rcx").value_or(0);
	std::uint64_t done = rcx_before > rcx_after ? rcx_before - rcx_after : 1;
	for (Pending &p : pending_) {
		replay::MemoryEvent event{replay::AccessKind::Read, p.address, p.before, {}};
		if (p.access.repeated)
			keep_done_elements(p, done, event);
		if (p.access.write) {
			auto after = target_.read_memory(event.address, event.before.size());
			if (!after || after->size() != event.before.size()) {
				unreadable_++;
				continue;
			}
			event.kind = p.access.read ? replay::AccessKind::ReadWrite : replay::AccessKind::Write;
			event.after = std::move(*after);
		}
		step.memory.push_back(std::move(event));
	}
	std::uint64_t pc = value(now, "rip").value_or(0);
	if (pc != insn.next() && pc != insn.address && !insn.is_branch())
		record_exception_frame(value(regs_, "rsp").value_or(0), value(now, "rsp").value_or(0), step);
	bytes_ += replay::encoded_size(step);
	recording_.steps.push_back(std::move(step));
	regs_ = std::move(now);
	return {};
}

}  // namespace vtice::dbg
