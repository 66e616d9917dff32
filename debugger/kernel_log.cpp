#include "kernel_log.hpp"

#include <cstring>

#include "output.hpp"
#include "session.hpp"
#include "vtice/escape.hpp"

namespace vtice::dbg {

namespace {

// kernel/printk/printk_ringbuffer.h: the state lives in the top two bits of
// a descriptor's state_var, the id in the rest.
constexpr unsigned kStateShift = 62;
constexpr std::uint64_t kIdMask = (1ull << kStateShift) - 1;
constexpr std::uint64_t kCommitted = 1, kFinalized = 2;
constexpr unsigned kMaxCountBits = 24, kMaxSizeBits = 28;  // far above any real log

// Byte offsets of what the reader needs, each found in the kernel's BTF.
struct Layout {
	std::uint64_t count_bits, descs, infos, head_id, tail_id;   // printk_ringbuffer.desc_ring.*
	std::uint64_t size_bits, data;                              // printk_ringbuffer.text_data_ring.*
	std::uint64_t desc_size, state_var, lpos_begin, lpos_next;  // prb_desc
	std::uint64_t info_size, seq, ts_nsec, text_len, level_bit;  // printk_info (level: bit offset)
};

Result<std::uint64_t> offset_of(const btf::Types &types, const char *type, const char *path)
{
	auto id = types.find(type);
	if (!id)
		return id.error();
	auto member = types.member(*id, path);
	if (!member)
		return member.error();
	return member->bit_offset / 8;
}

Result<Layout> find_layout(const btf::Types &types)
{
	Layout l{};
	struct Field {
		std::uint64_t *out;
		const char *type, *path;
	} fields[] = {
		{&l.count_bits, "struct printk_ringbuffer", "desc_ring.count_bits"},
		{&l.descs, "struct printk_ringbuffer", "desc_ring.descs"},
		{&l.infos, "struct printk_ringbuffer", "desc_ring.infos"},
		{&l.head_id, "struct printk_ringbuffer", "desc_ring.head_id"},
		{&l.tail_id, "struct printk_ringbuffer", "desc_ring.tail_id"},
		{&l.size_bits, "struct printk_ringbuffer", "text_data_ring.size_bits"},
		{&l.data, "struct printk_ringbuffer", "text_data_ring.data"},
		{&l.state_var, "struct prb_desc", "state_var"},
		{&l.lpos_begin, "struct prb_desc", "text_blk_lpos.begin"},
		{&l.lpos_next, "struct prb_desc", "text_blk_lpos.next"},
		{&l.seq, "struct printk_info", "seq"},
		{&l.ts_nsec, "struct printk_info", "ts_nsec"},
		{&l.text_len, "struct printk_info", "text_len"},
	};
	for (const Field &f : fields) {
		auto at = offset_of(types, f.type, f.path);
		if (!at)
			return make_error("the kernel's types lack the 5.10+ printk ring buffer: " + at.error().message);
		*f.out = *at;
	}
	auto info = types.find("struct printk_info");
	auto level = types.member(*info, "level");
	l.level_bit = level ? level->bit_offset : 0;
	auto desc_size = types.size_of(*types.find("struct prb_desc"));
	auto info_size = types.size_of(*info);
	if (!desc_size || !info_size)
		return make_error("the printk ring buffer's structures have no size in BTF");
	l.desc_size = *desc_size;
	l.info_size = *info_size;
	return l;
}

std::uint64_t u64_at(const std::vector<std::uint8_t> &bytes, std::uint64_t offset, std::size_t width = 8)
{
	std::uint64_t v = 0;
	if (offset + width <= bytes.size())
		std::memcpy(&v, bytes.data() + offset, width);
	return v;
}

// The ring's header and where its arrays are.
struct Ring {
	std::uint64_t descs, infos, data, head_id, tail_id;
	unsigned count_bits, size_bits;
};

Result<Ring> read_ring(Session &session, const Layout &l, std::uint64_t prb)
{
	auto header = session.read_memory(prb, std::max(l.tail_id, l.data) + 8);
	if (!header)
		return make_error("reading the printk ring buffer: " + header.error().message);
	Ring r{};
	r.count_bits = static_cast<unsigned>(u64_at(*header, l.count_bits, 4));
	r.size_bits = static_cast<unsigned>(u64_at(*header, l.size_bits, 4));
	r.descs = u64_at(*header, l.descs);
	r.infos = u64_at(*header, l.infos);
	r.data = u64_at(*header, l.data);
	r.head_id = u64_at(*header, l.head_id) & kIdMask;
	r.tail_id = u64_at(*header, l.tail_id) & kIdMask;
	if (r.count_bits == 0 || r.count_bits > kMaxCountBits || r.size_bits == 0 || r.size_bits > kMaxSizeBits)
		return make_error("the printk ring buffer looks corrupt (count_bits " + std::to_string(r.count_bits) +
				  ", size_bits " + std::to_string(r.size_bits) + ")");
	return r;
}

// One record, or nullopt for a descriptor that holds none (reserved,
// reusable, overwritten, or without text).
Result<std::optional<LogRecord>> read_record(Session &session, const Layout &l, const Ring &r, std::uint64_t id)
{
	std::uint64_t index = id & ((1ull << r.count_bits) - 1);
	auto desc = session.read_memory(r.descs + index * l.desc_size, l.desc_size);
	if (!desc)
		return desc.error();
	std::uint64_t sv = u64_at(*desc, l.state_var), state = sv >> kStateShift;
	if ((sv & kIdMask) != id || (state != kCommitted && state != kFinalized))
		return std::optional<LogRecord>{};
	auto info = session.read_memory(r.infos + index * l.info_size, l.info_size);
	if (!info)
		return info.error();
	LogRecord rec;
	rec.seq = u64_at(*info, l.seq);
	rec.ts_nsec = u64_at(*info, l.ts_nsec);
	rec.level = static_cast<unsigned>(u64_at(*info, l.level_bit / 8, 1) >> (l.level_bit % 8)) & 7;
	std::uint64_t text_len = u64_at(*info, l.text_len, 2);
	std::uint64_t begin = u64_at(*desc, l.lpos_begin), next = u64_at(*desc, l.lpos_next);
	std::uint64_t size = 1ull << r.size_bits;
	if ((begin & 1) && (next & 1))
		return std::optional<LogRecord>{rec};  // a record without text
	// The block starts with its descriptor id; it wraps to the ring's start
	// when it would not fit before the end (get_data() in the kernel).
	std::uint64_t start = begin & (size - 1), length = next - begin;
	if ((begin >> r.size_bits) != (next >> r.size_bits)) {
		start = 0;
		length = next & (size - 1);
	}
	if (length < 8 || length > size)
		return std::optional<LogRecord>{};
	std::uint64_t available = length - 8;
	auto text = session.read_memory(r.data + start + 8, std::min(text_len, available));
	if (!text)
		return text.error();
	rec.text.assign(text->begin(), text->end());
	return std::optional<LogRecord>{rec};
}

}  // namespace

Result<std::vector<LogRecord>> read_kernel_log(Session &session, const btf::Types &types, std::size_t max_records,
					       Output &log)
{
	const SymbolSource *symbols = session.symbols();
	auto prb_symbol = symbols ? symbols->lookup("prb") : std::nullopt;
	if (!prb_symbol)
		return make_error("the kernel's symbols have no 'prb' (a kernel before 5.10 keeps its log otherwise)");
	auto pointer = session.read_memory(*prb_symbol, 8);
	if (!pointer)
		return make_error("reading prb: " + pointer.error().message);
	auto layout = find_layout(types);
	if (!layout)
		return layout.error();
	auto ring = read_ring(session, *layout, u64_at(*pointer, 0));
	if (!ring)
		return ring.error();
	std::uint64_t span = (ring->head_id - ring->tail_id) & kIdMask;
	if (span >= (1ull << ring->count_bits))
		return make_error("the printk ring's head and tail ids are inconsistent");
	std::uint64_t first = ring->tail_id;
	if (max_records && span + 1 > max_records)
		first = (ring->head_id - (max_records - 1)) & kIdMask;
	std::vector<LogRecord> records;
	for (std::uint64_t id = first;; id = (id + 1) & kIdMask) {
		auto rec = read_record(session, *layout, *ring, id);
		if (!rec)
			return make_error("reading log record " + std::to_string(id) + ": " + rec.error().message);
		if (*rec)
			records.push_back(std::move(**rec));
		if (records.size() % 256 == 0)
			log.progress("dmesg: " + std::to_string(records.size()) + " records");
		if (id == ring->head_id)
			break;
	}
	return records;
}

std::string format_log_record(const LogRecord &record)
{
	char stamp[40];
	std::snprintf(stamp, sizeof(stamp), "[%5llu.%06llu] ",
		      static_cast<unsigned long long>(record.ts_nsec / 1000000000ull),
		      static_cast<unsigned long long>(record.ts_nsec % 1000000000ull / 1000));
	std::string out;
	std::size_t from = 0;
	do {
		std::size_t end = record.text.find('\n', from);
		out += stamp;
		// The kernel's text must not drive the user's terminal; a piece
		// holds no newline, and its tabs are the kernel's layout.
		out += escape_text(std::string_view(record.text).substr(from, end == std::string::npos ? std::string::npos
													 : end - from),
				   vtice::Layout::Lines);
		out += '\n';
		from = end == std::string::npos ? record.text.size() : end + 1;
	} while (from < record.text.size());
	return out;
}

}  // namespace vtice::dbg
