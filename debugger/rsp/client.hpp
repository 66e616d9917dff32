// The RSP conversation: send a packet, get its ack, get the reply.
//
// Handles acks and NAK-driven retransmission both ways, no-ack mode, 'O'
// console-output packets, stray garbage, and a stub that disappears. Every
// failure is an Error naming the packet; after any error other than a
// closed connection the client stays usable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "packet.hpp"
#include "transport.hpp"
#include "vtice/result.hpp"

namespace vtice::dbg::rsp {

struct ClientOptions {
	int reply_timeout_ms = 10000;  // per reply; a continue waits separately
	int retries = 3;               // retransmissions after a NAK or a bad checksum
	std::size_t max_payload = kMaxPacket;
};

struct ClientStats {
	std::uint64_t packets_sent = 0, packets_received = 0;
	std::uint64_t naks_received = 0, naks_sent = 0;
	std::uint64_t garbage_bytes = 0;
	std::uint64_t stale_packets = 0;
};

class Client {
public:
	Client(std::unique_ptr<Transport> transport, ClientOptions options = {});

	// Sends one packet and waits for its ack (unless no-ack mode).
	Result<void> send(std::string_view payload);
	// Waits for one packet; nothing when timeout_ms passes first (< 0: forever).
	// Signals do not end this wait (the caller, waiting for a stop, decides
	// what a signal means); waits for a reply or an ack give up on one.
	// 'O' output packets are passed to the console callback, not returned,
	// unless keep_output is set.
	Result<std::optional<std::string>> receive(int timeout_ms, bool keep_output = false);
	// send + receive with the reply timeout; a timeout is an error.
	Result<std::string> request(std::string_view payload);
	// The replies to payloads, in order, with up to `window` requests in
	// flight, for a stub that reads its input as a queue and never waits
	// for our acks (QEMU's system-mode gdbstub). A NAK is not answered by a
	// retransmission here: over a socket there are none.
	Result<std::vector<std::string>> request_pipelined(std::span<const std::string> payloads,
							   std::size_t window);
	// Sends every payload at once, then waits for the replies to the first
	// `replies` of them (the rest, a resume, reply when the target stops).
	// Same stubs as request_pipelined.
	Result<std::vector<std::string>> send_then_collect(std::span<const std::string> payloads,
							   std::size_t replies);
	// Writes 0x03; allowed from another thread while receive() waits.
	Result<void> send_interrupt();

	void set_no_ack(bool enabled) { no_ack_ = enabled; }
	bool no_ack() const { return no_ack_; }
	bool connected() const { return connected_; }
	const ClientStats &stats() const { return stats_; }
	std::string describe() const { return transport_->describe(); }
	void set_console(std::function<void(std::string_view)> console) { console_ = std::move(console); }

private:
	using Clock = std::chrono::steady_clock;
	Result<std::optional<Frame>> next_frame(std::optional<Clock::time_point> deadline,
						std::optional<Clock::time_point> abandonable_since);
	Result<std::optional<std::string>> receive_until(std::optional<Clock::time_point> deadline, bool keep_output,
							 std::optional<Clock::time_point> abandonable_since);
	Result<void> wait_ack(std::string_view framed);
	Result<std::string> reply_to(std::string_view payload);
	Result<std::string> write_packet(std::string_view payload);
	Result<void> send_unacknowledged(std::string_view payload);
	Error lost(const std::string &what);

	std::unique_ptr<Transport> transport_;
	ClientOptions options_;
	FrameReader reader_;
	bool no_ack_ = false;
	bool withhold_acks_ = false;  // send_then_collect: the target may be running
	std::atomic<bool> connected_{true};
	unsigned owed_replies_ = 0;  // replies to requests we gave up waiting for
	ClientStats stats_;
	std::function<void(std::string_view)> console_;
};

}  // namespace vtice::dbg::rsp
