#include "client.hpp"

#include <algorithm>
#include <chrono>

#include "vtice/interrupts.hpp"

namespace vtice::dbg::rsp {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline)
{
	auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
	return left > 0 ? static_cast<int>(left) : 0;
}

std::string short_text(std::string_view text)
{
	return std::string(text.substr(0, 40)) + (text.size() > 40 ? "..." : "");
}

}  // namespace

Client::Client(std::unique_ptr<Transport> transport, ClientOptions options)
	: transport_(std::move(transport)), options_(options), reader_(options.max_payload)
{
}

Error Client::lost(const std::string &what)
{
	connected_ = false;
	std::size_t partial = reader_.pending();
	std::string message = what;
	if (partial)
		message += " (stub disconnected in the middle of a reply after " + std::to_string(partial) +
			   " bytes)";
	reader_.reset();
	return make_error(message);
}

// Frames from the buffer first, then from the wire until the deadline (none:
// for ever). Garbage and stale frames do not move the deadline. Waits are cut
// into slices so that a signal's request is seen: a wait for a reply (one
// abandonable, since it began) then gives up, and the reply is owed (skipped
// when it comes).
Result<std::optional<Frame>> Client::next_frame(std::optional<Clock::time_point> deadline,
						std::optional<Clock::time_point> abandonable_since)
{
	for (;;) {
		if (auto frame = reader_.next())
			return std::optional<Frame>(std::move(*frame));
		if (!connected_)
			return make_error("not connected to " + transport_->describe());
		if (abandonable_since)
			if (auto why = interrupts::abandon_reason(std::chrono::duration_cast<std::chrono::milliseconds>(
					    Clock::now() - *abandonable_since).count())) {
				owed_replies_++;
				return make_error("gave up waiting for the stub: " + *why);
			}
		int wait = interrupts::kWaitSliceMs;
		if (deadline) {
			wait = std::min(wait, remaining_ms(*deadline));
			if (wait == 0)
				return std::optional<Frame>();
		}
		auto bytes = transport_->read_some(65536, wait);
		if (!bytes)
			return lost(bytes.error().message);
		reader_.feed(*bytes);
	}
}

Result<void> Client::wait_ack(std::string_view framed)
{
	auto start = Clock::now();
	auto deadline = start + std::chrono::milliseconds(options_.reply_timeout_ms);
	for (int attempt = 0;;) {
		auto frame = next_frame(deadline, start);
		if (!frame)
			return frame.error();
		if (!*frame)
			return make_error("no acknowledgement for '" + short_text(framed) + "' within " +
					  std::to_string(options_.reply_timeout_ms) + " ms");
		switch ((*frame)->kind) {
		case Frame::Kind::Ack:
			return {};
		case Frame::Kind::Nak:
			stats_.naks_received++;
			if (++attempt > options_.retries)
				return make_error("stub rejected '" + short_text(framed) + "' " +
						  std::to_string(attempt) + " times (NAK)");
			if (auto w = transport_->write_all(framed); !w)
				return lost(w.error().message);
			break;
		case Frame::Kind::Garbage:
			stats_.garbage_bytes += (*frame)->payload.size();
			break;
		default:
			// A stale packet before the ack (QEMU can send one right after
			// connecting): gdb drops it too; the real reply follows the ack.
			// It may be the late reply to a request we gave up on: that
			// one is no longer owed.
			stats_.stale_packets++;
			if ((*frame)->kind == Frame::Kind::Packet && owed_replies_ > 0)
				owed_replies_--;
			break;
		}
	}
}

Result<std::string> Client::write_packet(std::string_view payload)
{
	if (payload.size() > options_.max_payload)
		return make_error("packet of " + std::to_string(payload.size()) + " bytes exceeds the limit");
	std::string framed = frame_packet(payload);
	if (auto w = transport_->write_all(framed); !w)
		return lost(w.error().message);
	stats_.packets_sent++;
	return framed;
}

Result<void> Client::send(std::string_view payload)
{
	auto framed = write_packet(payload);
	if (!framed)
		return framed.error();
	if (no_ack_)
		return {};
	return wait_ack(*framed);
}

// The stub's acks, if it sends them, are skipped by receive() among the replies.
Result<void> Client::send_unacknowledged(std::string_view payload)
{
	auto framed = write_packet(payload);
	if (!framed)
		return framed.error();
	return {};
}

Result<std::optional<std::string>> Client::receive(int timeout_ms, bool keep_output)
{
	std::optional<Clock::time_point> deadline;
	if (timeout_ms >= 0)
		deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
	return receive_until(deadline, keep_output, std::nullopt);
}

Result<std::optional<std::string>> Client::receive_until(std::optional<Clock::time_point> deadline, bool keep_output,
							 std::optional<Clock::time_point> abandonable_since)
{
	int bad = 0;
	std::string last_reject;
	for (;;) {
		auto frame = next_frame(deadline, abandonable_since);
		if (!frame)
			return frame.error();
		if (!*frame && bad)
			return make_error("no valid reply: rejected " + std::to_string(bad) + " (" + last_reject + ")");
		if (!*frame)
			return std::optional<std::string>();
		Frame &f = **frame;
		if (f.kind == Frame::Kind::BadChecksum || f.kind == Frame::Kind::Oversized) {
			stats_.naks_sent++;
			last_reject = f.detail;
			if (++bad > options_.retries)
				return make_error("reply rejected " + std::to_string(bad) + " times: " + f.detail);
			if (!no_ack_)
				if (auto w = transport_->write_all("-"); !w)
					return lost(w.error().message);
			continue;
		}
		if (f.kind == Frame::Kind::Garbage) {
			stats_.garbage_bytes += f.payload.size();
			continue;
		}
		if (f.kind != Frame::Kind::Packet)
			continue;  // a late ack of a retransmission
		stats_.packets_received++;
		if (!no_ack_ && !withhold_acks_)
			if (auto w = transport_->write_all("+"); !w)
				return lost(w.error().message);
		auto expanded = expand_rle(f.payload);
		if (!expanded)
			return make_error("malformed reply: " + expanded.error().to_string());
		bool output = expanded->size() > 1 && (*expanded)[0] == 'O' && (*expanded)[1] != 'K';
		if (output && !keep_output) {
			if (console_) {
				auto text = from_hex(std::string_view(*expanded).substr(1));
				if (text)
					console_(std::string_view(reinterpret_cast<const char *>(text->data()), text->size()));
			}
			continue;
		}
		// The reply to a request we gave up on came late: not this one's.
		if (owed_replies_ > 0 && !output) {
			owed_replies_--;
			stats_.stale_packets++;
			continue;
		}
		return std::optional<std::string>(std::move(*expanded));
	}
}

Result<std::string> Client::reply_to(std::string_view payload)
{
	auto start = Clock::now();
	auto reply = receive_until(start + std::chrono::milliseconds(options_.reply_timeout_ms), false, start);
	if (!reply)
		return reply.error();
	if (!*reply)
		return make_error("no reply to '" + short_text(payload) + "' within " +
				  std::to_string(options_.reply_timeout_ms) + " ms");
	return std::move(**reply);
}

Result<std::string> Client::request(std::string_view payload)
{
	if (auto sent = send(payload); !sent)
		return sent.error();
	return reply_to(payload);
}

Result<std::vector<std::string>> Client::request_pipelined(std::span<const std::string> payloads,
							   std::size_t window)
{
	std::vector<std::string> replies;
	replies.reserve(payloads.size());
	std::size_t sent = 0;
	while (replies.size() < payloads.size()) {
		for (; sent < payloads.size() && sent - replies.size() < std::max<std::size_t>(window, 1); sent++)
			if (auto r = send_unacknowledged(payloads[sent]); !r)
				return r.error();
		auto reply = reply_to(payloads[replies.size()]);
		if (!reply)
			return reply.error();
		replies.push_back(std::move(*reply));
	}
	return replies;
}

Result<std::vector<std::string>> Client::send_then_collect(std::span<const std::string> payloads,
							   std::size_t replies)
{
	for (const std::string &payload : payloads)
		if (auto r = send_unacknowledged(payload); !r)
			return r.error();
	// The target may be running by now, and QEMU stops a running guest at
	// any byte it receives, an ack included (it never waits for acks).
	withhold_acks_ = true;
	Result<std::vector<std::string>> out = std::vector<std::string>();
	while (out && out->size() < std::min(replies, payloads.size())) {
		auto reply = reply_to(payloads[out->size()]);
		if (reply)
			out->push_back(std::move(*reply));
		else
			out = reply.error();
	}
	withhold_acks_ = false;
	return out;
}

Result<void> Client::send_interrupt()
{
	// Another thread may be inside receive(): report, but leave the reader
	// state to that thread, which sees the closed connection itself.
	if (auto w = transport_->write_all("\x03"); !w)
		return make_error("cannot interrupt: " + w.error().message);
	return {};
}

}  // namespace vtice::dbg::rsp
