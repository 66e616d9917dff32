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
	// Up to max bytes; 0 bytes = timeout, or a signal arrived (the caller
	// looks at its flags and waits again); an error when the peer closed.
	virtual Result<std::string> read_some(std::size_t max, int timeout_ms) = 0;
	virtual std::string describe() const = 0;
};

struct TransportOptions {
	int connect_timeout_ms = 10000;
	// A peer that takes no byte for this long is gone (a stub that stopped
	// reading would otherwise block a write for ever).
	int write_timeout_ms = 10000;
	unsigned baud = 115200;	// serial lines only
};

// A connected file descriptor (made non-blocking); owns and closes it.
class FdTransport final : public Transport {
public:
	FdTransport(int fd, std::string description, int write_timeout_ms = 10000);
	~FdTransport() override;
	FdTransport(const FdTransport &) = delete;
	FdTransport &operator=(const FdTransport &) = delete;

	Result<void> write_all(std::string_view bytes) override;
	Result<std::string> read_some(std::size_t max, int timeout_ms) override;
	std::string describe() const override { return description_; }

private:
	Result<void> wait_writable();

	int fd_;
	bool closed_ = false;
	std::string description_;
	int write_timeout_ms_;
};

// A target as the user wrote it, checked before anything is opened.
struct TargetSpec {
	enum class Kind { Tcp, Unix, Path } kind = Kind::Tcp;
	std::string host, port;	// Tcp
	std::string path;	// Unix, Path
};

// gdb's forms: HOST:PORT, :PORT, tcp:HOST:PORT, [IPV6]:PORT, unix:PATH, or
// a path starting with '/'. An error names what is wrong with the text.
Result<TargetSpec> parse_target_spec(std::string_view spec);

// Speeds a serial line can be set to (termios): 9600 ... 4000000.
bool supported_baud(unsigned baud);

// Connects to a parsed target. A path must be a character device (a tty),
// a FIFO or a unix socket: a regular file or a directory is refused before
// anything is written to it. A tty is set raw at options.baud.
Result<std::unique_ptr<Transport>> connect_transport(std::string_view spec, const TransportOptions &options = {});

}  // namespace vtice::dbg::rsp
