// Encodes and parses the REPLAY_* chunks (docs/trace-format.md, version 2).
// A parser that meets a bad payload stops with the chunk's name and the
// offset in the file; it never reads past a payload (fuzz_replay_reader).
#include "recording.hpp"

#include <cstring>

#include "byte_io.hpp"

namespace vtice::replay {

using trace::append_le;
using trace::ChunkType;
using trace::load_le;

namespace {

constexpr std::size_t kStepsPerChunk = 65536;

void append_string(std::vector<std::uint8_t> &out, const std::string &text)
{
	std::size_t len = std::min<std::size_t>(text.size(), 255);
	out.push_back(static_cast<std::uint8_t>(len));
	out.insert(out.end(), text.begin(), text.begin() + len);
}

void append_bytes(std::vector<std::uint8_t> &out, const std::vector<std::uint8_t> &bytes)
{
	out.insert(out.end(), bytes.begin(), bytes.end());
}

std::vector<std::uint8_t> encode_registers(const Recording &r)
{
	std::vector<std::uint8_t> out;
	append_le<std::uint16_t>(out, static_cast<std::uint16_t>(r.registers.size()));
	for (const RegisterSpec &spec : r.registers) {
		append_le<std::uint16_t>(out, static_cast<std::uint16_t>(spec.bits));
		append_string(out, spec.name);
		append_string(out, spec.type);
		append_string(out, spec.group);
	}
	append_bytes(out, r.initial);
	return out;
}

void encode_step(std::vector<std::uint8_t> &out, const Step &step)
{
	out.push_back(static_cast<std::uint8_t>(step.registers.size()));
	for (const RegisterChange &change : step.registers) {
		append_le<std::uint16_t>(out, change.index);
		append_bytes(out, change.value);
	}
	out.push_back(static_cast<std::uint8_t>(step.memory.size()));
	for (const MemoryEvent &event : step.memory) {
		out.push_back(static_cast<std::uint8_t>(event.kind));
		append_le<std::uint64_t>(out, event.address);
		append_le<std::uint32_t>(out, static_cast<std::uint32_t>(event.length()));
		append_bytes(out, event.before);
		append_bytes(out, event.after);
	}
}

// Reads fields off one payload; the first failure sticks and names where.
class PayloadReader {
public:
	PayloadReader(const trace::ReplayChunk &chunk) : chunk_(chunk), data_(chunk.payload) {}

	bool done() const { return at_ == data_.size() || failed_; }
	bool failed() const { return failed_; }
	template <class T>
	T number(const char *what)
	{
		if (!need(sizeof(T), what))
			return 0;
		T value = load_le<T>(&data_[at_]);
		at_ += sizeof(T);
		return value;
	}
	std::string text(const char *what)
	{
		std::uint8_t len = number<std::uint8_t>(what);
		if (!need(len, what))
			return {};
		std::string out(reinterpret_cast<const char *>(&data_[at_]), len);
		at_ += len;
		return out;
	}
	std::vector<std::uint8_t> bytes(std::size_t len, const char *what)
	{
		if (!need(len, what))
			return {};
		std::vector<std::uint8_t> out(data_.begin() + at_, data_.begin() + at_ + len);
		at_ += len;
		return out;
	}
	void fail(const std::string &problem)
	{
		if (failed_)
			return;
		failed_ = true;
		error_ = make_error(std::string(trace::chunk_type_name(static_cast<std::uint32_t>(chunk_.type))) +
					    " chunk: " + problem,
				    chunk_.offset + at_);
	}
	Error error() const { return error_; }

private:
	bool need(std::size_t len, const char *what)
	{
		if (failed_)
			return false;
		if (data_.size() - at_ < len) {
			fail(std::string(what) + " runs past the end of the chunk");
			return false;
		}
		return true;
	}

	const trace::ReplayChunk &chunk_;
	const std::vector<std::uint8_t> &data_;
	std::size_t at_ = 0;
	bool failed_ = false;
	Error error_;
};

void parse_registers(PayloadReader &in, Recording &out)
{
	std::uint16_t count = in.number<std::uint16_t>("register count");
	if (count == 0 || count > kMaxRegisters)
		return in.fail("register count " + std::to_string(count) + " is not 1.." + std::to_string(kMaxRegisters));
	std::size_t total = 0;
	for (unsigned i = 0; i < count && !in.failed(); i++) {
		RegisterSpec spec;
		spec.bits = in.number<std::uint16_t>("register width");
		spec.name = in.text("register name");
		spec.type = in.text("register type");
		spec.group = in.text("register group");
		if (spec.bits == 0 || spec.bits % 8 || spec.bits > kMaxRegisterBits)
			return in.fail("register " + spec.name + " is " + std::to_string(spec.bits) + " bits wide");
		total += spec.bytes();
		out.registers.push_back(std::move(spec));
	}
	out.initial = in.bytes(total, "the registers' values");
	if (!in.done())
		in.fail("bytes after the registers' values");
}

void parse_step(PayloadReader &in, const Recording &recording, Step &step)
{
	unsigned changes = in.number<std::uint8_t>("register change count");
	for (unsigned i = 0; i < changes && !in.failed(); i++) {
		RegisterChange change;
		change.index = in.number<std::uint16_t>("register index");
		if (change.index >= recording.registers.size())
			return in.fail("register index " + std::to_string(change.index) + " of " +
				       std::to_string(recording.registers.size()));
		change.value = in.bytes(recording.registers[change.index].bytes(), "register value");
		step.registers.push_back(std::move(change));
	}
	unsigned accesses = in.number<std::uint8_t>("memory access count");
	for (unsigned i = 0; i < accesses && !in.failed(); i++) {
		MemoryEvent event;
		std::uint8_t kind = in.number<std::uint8_t>("access kind");
		event.address = in.number<std::uint64_t>("access address");
		std::uint32_t len = in.number<std::uint32_t>("access length");
		if (in.failed())
			return;
		if (kind < 1 || kind > 6)
			return in.fail("unknown access kind " + std::to_string(kind));
		if (len == 0 || len > kMaxAccessBytes)
			return in.fail("access length " + std::to_string(len));
		if (event.address + len < event.address)
			return in.fail("access wraps around the address space");
		event.kind = static_cast<AccessKind>(kind);
		if (event.kind == AccessKind::Unseen)
			event.unseen = len;
		if (event.has_before())
			event.before = in.bytes(len, "bytes before");
		if (event.has_after())
			event.after = in.bytes(len, "bytes after");
		step.memory.push_back(std::move(event));
	}
}

}  // namespace

std::vector<std::size_t> register_offsets(const std::vector<RegisterSpec> &registers)
{
	std::vector<std::size_t> offsets;
	std::size_t offset = 0;
	for (const RegisterSpec &spec : registers) {
		offsets.push_back(offset);
		offset += spec.bytes();
	}
	return offsets;
}

int register_index(const std::vector<RegisterSpec> &registers, std::string_view name)
{
	for (std::size_t i = 0; i < registers.size(); i++)
		if (registers[i].name == name)
			return static_cast<int>(i);
	return -1;
}

std::uint64_t register_low64(const std::vector<RegisterSpec> &registers, const std::vector<std::size_t> &offsets,
			     const std::vector<std::uint8_t> &block, std::size_t index)
{
	std::uint64_t value = 0;
	std::memcpy(&value, &block[offsets[index]], std::min<std::size_t>(8, registers[index].bytes()));
	return value;
}

void add_recording(trace::TraceWriter &writer, const Recording &recording)
{
	writer.add_replay(ChunkType::ReplayRegisters, encode_registers(recording));
	for (std::size_t first = 0; first < recording.steps.size(); first += kStepsPerChunk) {
		std::vector<std::uint8_t> payload;
		std::size_t end = std::min(recording.steps.size(), first + kStepsPerChunk);
		for (std::size_t i = first; i < end; i++)
			encode_step(payload, recording.steps[i]);
		writer.add_replay(ChunkType::ReplaySteps, payload);
	}
	for (const MemoryBlob &blob : recording.memory) {
		std::vector<std::uint8_t> payload;
		append_le<std::uint64_t>(payload, blob.address);
		append_bytes(payload, blob.bytes);
		writer.add_replay(ChunkType::ReplayMemory, payload);
	}
	for (const MemoryBlob &blob : recording.code)
		writer.add_code(blob.address, blob.bytes);
}

Result<Recording> load_recording(const trace::TraceData &data)
{
	Recording out;
	bool have_registers = false;
	std::size_t memory_bytes = 0;
	for (const trace::ReplayChunk &chunk : data.replay) {
		PayloadReader in(chunk);
		if (chunk.type == ChunkType::ReplayRegisters) {
			if (have_registers)
				in.fail("a second register layout");
			else
				parse_registers(in, out);
			have_registers = true;
		} else if (!have_registers) {
			in.fail("comes before the register layout");
		} else if (chunk.type == ChunkType::ReplaySteps) {
			while (!in.done()) {
				out.steps.emplace_back();
				parse_step(in, out, out.steps.back());
				for (const MemoryEvent &event : out.steps.back().memory)
					memory_bytes += event.length();
			}
		} else {
			std::uint64_t address = in.number<std::uint64_t>("address");
			out.memory.push_back({address, chunk.payload.size() >= 8
							       ? std::vector<std::uint8_t>(chunk.payload.begin() + 8,
											   chunk.payload.end())
							       : std::vector<std::uint8_t>()});
			memory_bytes += out.memory.back().bytes.size();
		}
		if (memory_bytes > kMaxMemoryBytes)
			in.fail("the recording holds more than " + std::to_string(kMaxMemoryBytes >> 20) +
				" MiB of memory bytes, more than a replay indexes");
		if (in.failed())
			return in.error();
	}
	if (!have_registers)
		return make_error("the trace holds no step recording (record one with `trace --record`)");
	for (const trace::CodeBlob &blob : data.code)
		out.code.push_back({blob.address, blob.bytes});
	return out;
}

std::size_t encoded_size(const Step &step)
{
	std::vector<std::uint8_t> bytes;
	encode_step(bytes, step);
	return bytes.size();
}

}  // namespace vtice::replay
