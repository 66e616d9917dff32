// GDB Remote Serial Protocol framing: "$payload#cs", acks, interrupts.
//
// This layer knows bytes only: it frames and checksums payloads, expands
// run-length encoding, escapes and unescapes binary data, and splits an
// incoming byte stream into frames. It does no I/O (see transport.hpp) and
// knows no packet meanings (see client.hpp, rsp_target.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vtice/result.hpp"

namespace vtice::dbg::rsp {

// Payloads larger than this are refused (QEMU's PacketSize is 0x20000 today).
inline constexpr std::size_t kMaxPacket = 1 << 20;

// "$" payload "#" two hex digits; '$', '#', '}' and '*' in the payload are
// escaped as '}' followed by the byte xor 0x20, so binary data is safe.
std::string frame_packet(std::string_view payload);
std::uint8_t checksum(std::string_view bytes);

// Expands "x*N" run-length encoding (count = N - 29, repeating x). An
// error names the offset of a '*' without a preceding byte or with a count
// outside the printable range.
Result<std::string> expand_rle(std::string_view payload);
// '}' b -> b ^ 0x20. A trailing lone '}' is an error.
Result<std::vector<std::uint8_t>> unescape_binary(std::string_view payload);
std::string escape_binary(std::span<const std::uint8_t> bytes);

std::string to_hex(std::span<const std::uint8_t> bytes);
std::string to_hex(std::string_view text);
Result<std::vector<std::uint8_t>> from_hex(std::string_view hex);
Result<std::uint64_t> parse_hex_u64(std::string_view hex);

// One thing read off the wire.
struct Frame {
	enum class Kind : std::uint8_t {
		Ack,          // '+'
		Nak,          // '-'
		Interrupt,    // 0x03 (a stub never sends it; a fake client might)
		Packet,       // a packet whose checksum matched; payload is raw (RLE not expanded)
		BadChecksum,  // a complete packet whose checksum did not match
		Oversized,    // a packet longer than the limit, discarded
		Garbage,      // bytes outside any packet (stubs print junk on reset)
	};
	Kind kind;
	std::string payload;   // Packet/BadChecksum: the payload; Garbage: the bytes
	std::string detail;    // BadChecksum/Oversized: what was wrong
};

// Incremental splitter: feed bytes as they arrive, take complete frames.
// It never throws and never grows beyond the packet limit plus one frame.
class FrameReader {
public:
	explicit FrameReader(std::size_t max_payload = kMaxPacket) : max_payload_(max_payload) {}

	void feed(std::string_view bytes);
	std::optional<Frame> next();
	// Bytes of a packet begun but not finished (for "disconnected mid-reply").
	std::size_t pending() const;
	void reset();

private:
	void take(char c);
	void append_payload(std::string_view data);
	void finish_packet();

	enum class State : std::uint8_t { Idle, Payload, Checksum1, Checksum2 };
	std::size_t max_payload_;
	State state_ = State::Idle;
	std::string payload_, garbage_;
	char check_[2] = {};
	bool oversized_ = false;
	std::vector<Frame> ready_;
	std::size_t ready_head_ = 0;
};

// The payload of an "E NN" / "E.text" error reply, as a message; nothing if
// the reply is not an error.
std::optional<std::string> error_reply(std::string_view reply);

}  // namespace vtice::dbg::rsp
