// A scripted RSP stub on a socketpair, for the client's bad-input tests only
// (everything else runs against the real QEMU gdbstub). The script maps each
// received packet to raw bytes to send back, so tests can send corrupt,
// truncated or oversized replies, or hang up in the middle of one.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rsp/transport.hpp"

namespace vtice::dbg::test {

class FakeStub {
public:
	// Returns the raw bytes to send for a received payload; "" sends nothing.
	// Returning the text "<close>" hangs up after sending what came before it.
	// A NAK from the client is passed as the payload "-", an interrupt as "\x03".
	using Script = std::function<std::string(const std::string &payload)>;

	explicit FakeStub(Script script);
	~FakeStub();

	// The client end; call once.
	std::unique_ptr<rsp::Transport> client_transport();
	std::vector<std::string> received();  // payloads in arrival order
	int naks_received();

	static std::string packet(const std::string &payload);  // "$...#cs"

private:
	void run();

	Script script_;
	int server_fd_ = -1, client_fd_ = -1;
	std::thread thread_;
	std::mutex mutex_;
	std::vector<std::string> received_;
	int naks_ = 0;
};

}  // namespace vtice::dbg::test
