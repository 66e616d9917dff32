// Byte pipes to a stub: TCP, a unix socket, or a serial device / pty.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "vtice/result.hpp"

namespace vtice::dbg::rsp {

class Transport {
public:
	virtual ~Transport() = default;
	virtual Result<void> write_all(std::string_view bytes) = 0;
	// Up to max bytes; 0 bytes = timeout; an error when the peer closed.
	virtual Result<std::string> read_some(std::size_t max, int timeout_ms) = 0;
	virtual std::string describe() const = 0;
};

// A connected file descriptor; owns and closes it.
class FdTransport final : public Transport {
public:
	FdTransport(int fd, std::string description);
	~FdTransport() override;
	FdTransport(const FdTransport &) = delete;
	FdTransport &operator=(const FdTransport &) = delete;

	Result<void> write_all(std::string_view bytes) override;
	Result<std::string> read_some(std::size_t max, int timeout_ms) override;
	std::string describe() const override { return description_; }

private:
	int fd_;
	bool closed_ = false;
	std::string description_;
};

// "host:port" (TCP), "unix:PATH", or a path starting with '/' (a tty,
// configured raw at 115200 baud).
Result<std::unique_ptr<Transport>> connect_transport(std::string_view spec, int timeout_ms = 5000);

}  // namespace vtice::dbg::rsp
