// Registers come from a checkpoint every kCheckpointEvery steps plus the
// changes after it, so any seek applies at most that many steps. Memory is
// indexed per byte: each byte's reads and writes in step order; the value at
// position k is the last write before k, or failing that what the first
// access at or after k saw before it ran.
#include "replay_engine.hpp"

#include <algorithm>

namespace vtice::replay {

Replay::Replay(Recording recording) : recording_(std::move(recording))
{
	offsets_ = register_offsets(recording_.registers);
	std::size_t size = 0;
	for (const RegisterSpec &spec : recording_.registers)
		size += spec.bytes();
	recording_.initial.resize(size);
	std::sort(recording_.code.begin(), recording_.code.end(),
		  [](const MemoryBlob &a, const MemoryBlob &b) { return a.address < b.address; });
	int rip = register_index("rip");
	std::vector<std::uint8_t> regs = recording_.initial;
	auto pc = [&] { return rip >= 0 ? register_low64(recording_.registers, offsets_, regs, rip) : 0; };
	pcs_.reserve(steps() + 1);
	retired_.reserve(steps() + 1);
	undo_.resize(steps());
	for (std::size_t j = 0; j <= steps(); j++) {
		if (j % kCheckpointEvery == 0)
			checkpoints_.push_back(regs);
		pcs_.push_back(pc());
		retired_.push_back(j == 0 ? 0 : retired_.back() + (pcs_[j] != pcs_[j - 1]));
		if (j == steps())
			break;
		for (const RegisterChange &change : recording_.steps[j].registers) {
			auto old = regs.begin() + offsets_[change.index];
			undo_[j].push_back({change.index, std::vector<std::uint8_t>(old, old + change.value.size())});
		}
		apply(j, regs);
	}
	index_memory();
	registers_ = recording_.initial;
}

int Replay::register_index(std::string_view name) const
{
	return replay::register_index(recording_.registers, name);
}

void Replay::apply(std::size_t j, std::vector<std::uint8_t> &regs) const
{
	for (const RegisterChange &change : recording_.steps[j].registers)
		std::copy(change.value.begin(), change.value.end(), regs.begin() + offsets_[change.index]);
}

void Replay::undo(std::size_t j, std::vector<std::uint8_t> &regs) const
{
	// Backwards, so a register changed twice in one step gets its first old value.
	for (auto change = undo_[j].rbegin(); change != undo_[j].rend(); ++change)
		std::copy(change->value.begin(), change->value.end(), regs.begin() + offsets_[change->index]);
}

void Replay::index_memory()
{
	for (const MemoryBlob &blob : recording_.memory)
		for (std::size_t i = 0; i < blob.bytes.size(); i++)
			bytes_[blob.address + i].push_back({0, false, true, true, blob.bytes[i], blob.bytes[i]});
	for (std::size_t j = 0; j < steps(); j++) {
		auto step = static_cast<std::uint32_t>(j);
		// Reads first: an instruction reads a location before it writes it.
		for (bool writes : {false, true}) {
			for (const MemoryEvent &event : recording_.steps[j].memory) {
				if (event.writes() != writes)
					continue;
				bool known = event.has_before(), after_known = !writes || event.has_after();
				for (std::size_t i = 0; i < event.length(); i++) {
					std::uint8_t before = known ? event.before[i] : 0;
					std::uint8_t after = !writes ? before : after_known ? event.after[i] : 0;
					bytes_[event.address + i].push_back({step, writes, known, after_known, before, after});
				}
			}
		}
	}
}

void Replay::seek(std::size_t k)
{
	k = std::min(k, steps());
	// A short way back is undone step by step (reverse-stepi, reverse-continue);
	// anything farther starts from the checkpoint at or before k.
	if (k < position_ && position_ - k <= kCheckpointEvery) {
		for (; position_ > k; position_--)
			undo(position_ - 1, registers_);
		return;
	}
	if (k < position_ || k - position_ > kCheckpointEvery) {
		std::size_t base = k / kCheckpointEvery;
		registers_ = checkpoints_[base];
		position_ = base * kCheckpointEvery;
	}
	for (; position_ < k; position_++)
		apply(position_, registers_);
}

std::optional<std::uint64_t> Replay::reg(std::string_view name) const
{
	int index = register_index(name);
	if (index < 0)
		return std::nullopt;
	return register_low64(recording_.registers, offsets_, registers_, index);
}

std::optional<std::uint8_t> Replay::code_byte(std::uint64_t address) const
{
	// The blob that starts last at or before the address wins (as in CODE chunks).
	auto it = std::upper_bound(recording_.code.begin(), recording_.code.end(), address,
				   [](std::uint64_t a, const MemoryBlob &blob) { return a < blob.address; });
	while (it != recording_.code.begin()) {
		--it;
		if (address - it->address < it->bytes.size())
			return it->bytes[address - it->address];
		if (address - it->address > (std::uint64_t(1) << 20))
			break;
	}
	return std::nullopt;
}

std::optional<std::uint8_t> Replay::byte_at(std::uint64_t address, std::size_t k) const
{
	auto found = bytes_.find(address);
	if (found == bytes_.end())
		return code_byte(address);
	const std::vector<ByteEvent> &events = found->second;
	auto next = std::lower_bound(events.begin(), events.end(), k,
				     [](const ByteEvent &e, std::size_t pos) { return e.step < pos; });
	if (next != events.begin()) {
		const ByteEvent &last = *(next - 1);
		if (last.write && !last.after_known)
			return std::nullopt;	// an Unseen store: never a guess
		return last.write ? last.after : last.before;
	}
	if (next->before_known)
		return next->before;
	return code_byte(address);
}

std::vector<std::uint8_t> Replay::read_at(std::uint64_t address, std::size_t length, std::size_t k) const
{
	std::vector<std::uint8_t> out;
	for (std::size_t i = 0; i < length; i++) {
		auto byte = byte_at(address + i, k);
		if (!byte)
			break;
		out.push_back(*byte);
	}
	return out;
}

std::optional<std::size_t> Replay::last_write(std::uint64_t address, std::size_t length, std::size_t before) const
{
	std::optional<std::size_t> found;
	for (std::size_t i = 0; i < length; i++) {
		auto it = bytes_.find(address + i);
		if (it == bytes_.end())
			continue;
		for (auto e = it->second.rbegin(); e != it->second.rend(); ++e) {
			if (!e->write || e->step >= before)
				continue;
			if (!found || e->step > *found)
				found = e->step;
			break;
		}
	}
	return found;
}

namespace {

bool overlaps(const MemoryEvent &event, std::uint64_t address, std::size_t length)
{
	return event.address < address + length && address < event.address + event.length();
}

}  // namespace

bool Replay::step_writes(std::size_t j, std::uint64_t address, std::size_t length) const
{
	for (const MemoryEvent &event : recording_.steps[j].memory)
		if (event.writes() && overlaps(event, address, length))
			return true;
	return false;
}

bool Replay::step_reads(std::size_t j, std::uint64_t address, std::size_t length) const
{
	for (const MemoryEvent &event : recording_.steps[j].memory)
		if (event.reads() && overlaps(event, address, length))
			return true;
	return false;
}

}  // namespace vtice::replay
