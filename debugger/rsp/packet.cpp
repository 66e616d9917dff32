#include "packet.hpp"

#include <algorithm>
#include <cstdio>

namespace vtice::dbg::rsp {

namespace {

bool needs_escape(std::uint8_t c)
{
	return c == '$' || c == '#' || c == '}' || c == '*';
}

constexpr int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

const char kHexDigits[] = "0123456789abcdef";

}  // namespace

std::uint8_t checksum(std::string_view bytes)
{
	std::uint8_t sum = 0;
	for (char c : bytes)
		sum = static_cast<std::uint8_t>(sum + static_cast<std::uint8_t>(c));
	return sum;
}

std::string frame_packet(std::string_view payload)
{
	std::string body;
	body.reserve(payload.size() + 8);
	for (char c : payload) {
		auto byte = static_cast<std::uint8_t>(c);
		if (needs_escape(byte)) {
			body.push_back('}');
			body.push_back(static_cast<char>(byte ^ 0x20));
		} else {
			body.push_back(c);
		}
	}
	std::uint8_t sum = checksum(body);
	std::string out = "$" + body + "#";
	out.push_back(kHexDigits[sum >> 4]);
	out.push_back(kHexDigits[sum & 15]);
	return out;
}

Result<std::string> expand_rle(std::string_view payload)
{
	// Most replies (hex memory dumps) have neither: one copy, no byte loop.
	if (payload.find('*') == std::string_view::npos && payload.find('}') == std::string_view::npos)
		return std::string(payload);
	std::string out;
	out.reserve(payload.size());
	for (std::size_t i = 0; i < payload.size(); i++) {
		char c = payload[i];
		// An escaped byte is data, even if it is '*' after unescaping.
		if (c == '}' && i + 1 < payload.size()) {
			out.push_back(c);
			out.push_back(payload[++i]);
			continue;
		}
		if (c != '*') {
			out.push_back(c);
			continue;
		}
		if (out.empty())
			return make_error("run-length '*' with no byte to repeat", i);
		if (i + 1 >= payload.size())
			return make_error("run-length '*' without a count", i);
		int count = static_cast<std::uint8_t>(payload[++i]) - 29;
		if (count < 3 || count > 97)
			return make_error("run-length count out of range", i);
		if (out.size() + count > kMaxPacket)
			return make_error("run-length expansion exceeds the packet limit", i);
		out.append(static_cast<std::size_t>(count), out.back());
	}
	return out;
}

Result<std::vector<std::uint8_t>> unescape_binary(std::string_view payload)
{
	std::vector<std::uint8_t> out;
	out.reserve(payload.size());
	for (std::size_t i = 0; i < payload.size(); i++) {
		auto c = static_cast<std::uint8_t>(payload[i]);
		if (c != '}') {
			out.push_back(c);
			continue;
		}
		if (i + 1 >= payload.size())
			return make_error("binary data ends inside an escape", i);
		out.push_back(static_cast<std::uint8_t>(payload[++i]) ^ 0x20);
	}
	return out;
}

std::string escape_binary(std::span<const std::uint8_t> bytes)
{
	std::string out;
	out.reserve(bytes.size() + 8);
	for (auto b : bytes) {
		if (needs_escape(b)) {
			out.push_back('}');
			out.push_back(static_cast<char>(b ^ 0x20));
		} else {
			out.push_back(static_cast<char>(b));
		}
	}
	return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes)
{
	std::string out;
	out.reserve(bytes.size() * 2);
	for (auto b : bytes) {
		out.push_back(kHexDigits[b >> 4]);
		out.push_back(kHexDigits[b & 15]);
	}
	return out;
}

std::string to_hex(std::string_view text)
{
	return to_hex(std::span(reinterpret_cast<const std::uint8_t *>(text.data()), text.size()));
}

namespace {

// hex_value for every byte, looked up: memory replies are megabytes of hex.
struct HexTable {
	signed char value[256];
	constexpr HexTable() : value()
	{
		for (int c = 0; c < 256; c++)
			value[c] = static_cast<signed char>(hex_value(static_cast<char>(c)));
	}
};
constexpr HexTable kHex;

}  // namespace

Result<std::vector<std::uint8_t>> from_hex(std::string_view hex)
{
	if (hex.size() % 2)
		return make_error("odd number of hex digits", hex.size());
	std::vector<std::uint8_t> out(hex.size() / 2);
	for (std::size_t i = 0; i < out.size(); i++) {
		int hi = kHex.value[static_cast<std::uint8_t>(hex[2 * i])];
		int lo = kHex.value[static_cast<std::uint8_t>(hex[2 * i + 1])];
		if (hi < 0 || lo < 0)
			return make_error("not a hex digit", 2 * i + (hi < 0 ? 0 : 1));
		out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
	}
	return out;
}

Result<std::uint64_t> parse_hex_u64(std::string_view hex)
{
	if (hex.empty())
		return make_error("empty hex number");
	if (hex.size() > 16)
		return make_error("hex number longer than 64 bits", 0);
	std::uint64_t value = 0;
	for (std::size_t i = 0; i < hex.size(); i++) {
		int digit = hex_value(hex[i]);
		if (digit < 0)
			return make_error("not a hex digit", i);
		value = value << 4 | static_cast<unsigned>(digit);
	}
	return value;
}

void FrameReader::feed(std::string_view bytes)
{
	std::size_t i = 0;
	while (i < bytes.size()) {
		// Inside a packet, everything up to its '#' (or a '$' that restarts
		// it) is payload: taken as one span rather than byte by byte.
		if (state_ == State::Payload) {
			// Two memchr-backed finds: find_first_of tests each byte against the set.
			std::size_t stop = std::min({bytes.find('#', i), bytes.find('$', i), bytes.size()});
			append_payload(bytes.substr(i, stop - i));
			i = stop;
			if (i == bytes.size())
				break;
		}
		take(bytes[i++]);
	}
	if (!garbage_.empty() && state_ == State::Idle) {
		ready_.push_back({Frame::Kind::Garbage, std::move(garbage_), {}});
		garbage_.clear();
	}
}

void FrameReader::append_payload(std::string_view data)
{
	std::size_t room = max_payload_ - std::min(max_payload_, payload_.size());
	if (data.size() > room)
		oversized_ = true;
	payload_.append(data.substr(0, room));
}

void FrameReader::take(char c)
{
	switch (state_) {
	case State::Idle:
		if (c == '$') {
			if (!garbage_.empty()) {
				ready_.push_back({Frame::Kind::Garbage, std::move(garbage_), {}});
				garbage_.clear();
			}
			state_ = State::Payload;
			payload_.clear();
			oversized_ = false;
		} else if (c == '+') {
			ready_.push_back({Frame::Kind::Ack, {}, {}});
		} else if (c == '-') {
			ready_.push_back({Frame::Kind::Nak, {}, {}});
		} else if (c == '\x03') {
			ready_.push_back({Frame::Kind::Interrupt, {}, {}});
		} else if (garbage_.size() < 4096) {
			garbage_.push_back(c);
		}
		break;
	case State::Payload:
		if (c == '#') {
			state_ = State::Checksum1;
		} else if (c == '$') {
			// A new packet starts before the old one ended: the old one is lost.
			ready_.push_back({Frame::Kind::Garbage, "$" + payload_.substr(0, 64),
					  "packet restarted before its '#'"});
			payload_.clear();
			oversized_ = false;
		} else if (payload_.size() >= max_payload_) {
			oversized_ = true;
		} else {
			payload_.push_back(c);
		}
		break;
	case State::Checksum1:
		check_[0] = c;
		state_ = State::Checksum2;
		break;
	case State::Checksum2:
		check_[1] = c;
		finish_packet();
		state_ = State::Idle;
		break;
	}
}

void FrameReader::finish_packet()
{
	if (oversized_) {
		char detail[96];
		std::snprintf(detail, sizeof(detail), "packet longer than %zu bytes discarded", max_payload_);
		ready_.push_back({Frame::Kind::Oversized, {}, detail});
		payload_.clear();
		return;
	}
	int hi = hex_value(check_[0]), lo = hex_value(check_[1]);
	std::uint8_t want = checksum(payload_);
	if (hi < 0 || lo < 0 || (hi << 4 | lo) != want) {
		char detail[96];
		std::snprintf(detail, sizeof(detail), "checksum '%c%c' does not match computed %02x",
			      check_[0] >= ' ' ? check_[0] : '?', check_[1] >= ' ' ? check_[1] : '?', want);
		ready_.push_back({Frame::Kind::BadChecksum, std::move(payload_), detail});
	} else {
		ready_.push_back({Frame::Kind::Packet, std::move(payload_), {}});
	}
	payload_.clear();
}

std::optional<Frame> FrameReader::next()
{
	if (ready_head_ >= ready_.size()) {
		ready_.clear();
		ready_head_ = 0;
		return std::nullopt;
	}
	return std::move(ready_[ready_head_++]);
}

std::size_t FrameReader::pending() const
{
	return state_ == State::Idle ? 0 : payload_.size() + 1;
}

void FrameReader::reset()
{
	state_ = State::Idle;
	payload_.clear();
	garbage_.clear();
	ready_.clear();
	ready_head_ = 0;
}

std::optional<std::string> error_reply(std::string_view reply)
{
	if (reply.size() >= 2 && reply[0] == 'E' && reply[1] == '.')
		return std::string(reply.substr(2));
	if (reply.size() == 3 && reply[0] == 'E' && hex_value(reply[1]) >= 0 && hex_value(reply[2]) >= 0)
		return "stub error " + std::string(reply.substr(1));
	return std::nullopt;
}

}  // namespace vtice::dbg::rsp
