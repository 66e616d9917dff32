#include "transport.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "vtice/interrupts.hpp"

namespace vtice::dbg::rsp {

namespace {

using Clock = std::chrono::steady_clock;

Error errno_error(const std::string &what)
{
	return make_error(what + ": " + std::strerror(errno));
}

void set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int ms_until(Clock::time_point deadline)
{
	auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
	return left > 0 ? static_cast<int>(left) : 0;
}

// Polls fd for events until the deadline, in slices that let a signal's
// request end the wait. True when ready; an error names why it gave up.
Result<bool> poll_until(int fd, short events, Clock::time_point deadline, const std::string &what)
{
	for (;;) {
		if (auto why = interrupts::abandon_reason())
			return make_error(what + ": " + *why);
		int wait = std::min(ms_until(deadline), interrupts::kWaitSliceMs);
		pollfd pfd{fd, events, 0};
		int rc = poll(&pfd, 1, wait);
		if (rc > 0)
			return true;
		if (rc < 0 && errno != EINTR)
			return errno_error(what);
		if (rc == 0 && Clock::now() >= deadline)
			return false;
	}
}

// A non-blocking connect, bounded by the deadline and by signals.
Result<int> connect_bounded(const addrinfo &ai, Clock::time_point deadline, const std::string &name)
{
	int fd = socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol);
	if (fd < 0)
		return errno_error("socket");
	if (connect(fd, ai.ai_addr, ai.ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		auto err = errno_error("cannot connect to " + name);
		close(fd);
		return err;
	}
	auto ready = poll_until(fd, POLLOUT, deadline, "cannot connect to " + name);
	int error = 0;
	socklen_t length = sizeof(error);
	if (ready && *ready && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0)
		return fd;
	close(fd);
	if (!ready)
		return ready.error();
	if (!*ready)
		return make_error("cannot connect to " + name + ": no answer within the connect timeout");
	return make_error("cannot connect to " + name + ": " + std::strerror(error));
}

Result<int> connect_tcp(const std::string &host, const std::string &port, int timeout_ms)
{
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	addrinfo *list = nullptr;
	int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
	if (rc != 0)
		return make_error("cannot resolve '" + host + ":" + port + "': " + gai_strerror(rc));
	auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
	Result<int> fd = make_error("cannot connect to " + host + ":" + port + ": no address");
	for (addrinfo *ai = list; ai; ai = ai->ai_next) {
		fd = connect_bounded(*ai, deadline, host + ":" + port);
		if (fd)
			break;
	}
	freeaddrinfo(list);
	if (fd) {
		int one = 1;
		// Every packet is a round trip; Nagle would add 40 ms to each.
		setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return fd;
}

Result<int> connect_unix(const std::string &path, int timeout_ms)
{
	sockaddr_un addr{};
	if (path.size() >= sizeof(addr.sun_path))
		return make_error("unix socket path too long: " + path);
	addr.sun_family = AF_UNIX;
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	addrinfo ai{};
	ai.ai_family = AF_UNIX;
	ai.ai_socktype = SOCK_STREAM;
	ai.ai_addr = reinterpret_cast<sockaddr *>(&addr);
	ai.ai_addrlen = sizeof(addr);
	return connect_bounded(ai, Clock::now() + std::chrono::milliseconds(timeout_ms), "unix:" + path);
}

speed_t baud_constant(unsigned baud)
{
	switch (baud) {
	case 9600: return B9600;
	case 19200: return B19200;
	case 38400: return B38400;
	case 57600: return B57600;
	case 115200: return B115200;
	case 230400: return B230400;
	case 460800: return B460800;
	case 921600: return B921600;
	case 1000000: return B1000000;
	case 1500000: return B1500000;
	case 2000000: return B2000000;
	case 3000000: return B3000000;
	case 4000000: return B4000000;
	default: return B0;
	}
}

// What kind of file a path target is, before anything is written to it.
Result<void> check_path_target(const std::string &path, const struct stat &info)
{
	if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode))
		return {};
	if (S_ISDIR(info.st_mode))
		return make_error(path + " is a directory, not a serial line");
	if (S_ISREG(info.st_mode))
		return make_error(path + " is a regular file, not a serial line (a tty, a FIFO or a unix "
					 "socket); refusing to write to it");
	return make_error(path + " is not a serial line (a tty, a FIFO or a unix socket)");
}

// Opened without blocking (a tty waiting for carrier, a FIFO without a
// peer), then checked by the descriptor, so what was checked is what is used.
Result<int> open_serial(const std::string &path, unsigned baud)
{
	int fd = open(path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno_error("cannot open " + path);
	struct stat info;
	if (fstat(fd, &info) != 0) {
		auto err = errno_error(path);
		close(fd);
		return err;
	}
	if (auto kind = check_path_target(path, info); !kind) {
		close(fd);
		return kind.error();
	}
	termios tio{};
	if (tcgetattr(fd, &tio) == 0) {
		cfmakeraw(&tio);
		tio.c_cflag |= CLOCAL | CREAD;
		cfsetispeed(&tio, baud_constant(baud));
		cfsetospeed(&tio, baud_constant(baud));
		tio.c_cc[VMIN] = 0;
		tio.c_cc[VTIME] = 0;
		tcsetattr(fd, TCSANOW, &tio);
	}
	return fd;
}

Result<int> open_path_target(const std::string &path, const TransportOptions &options)
{
	struct stat info;
	if (stat(path.c_str(), &info) == 0 && S_ISSOCK(info.st_mode))
		return connect_unix(path, options.connect_timeout_ms);
	return open_serial(path, options.baud);
}

bool has_space(std::string_view text)
{
	for (char c : text)
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			return true;
	return false;
}

Result<TargetSpec> parse_host_port(std::string_view original, std::string address)
{
	auto usage = [&](const std::string &why) {
		return make_error("target '" + std::string(original) + "'" + why);
	};
	auto colon = address.rfind(':');
	if (colon == std::string::npos || colon + 1 == address.size())
		return usage(" is not host:port, tcp:host:port, unix:PATH or /dev/...");
	TargetSpec spec;
	spec.host = colon == 0 ? "127.0.0.1" : address.substr(0, colon);
	if (spec.host.size() > 2 && spec.host.front() == '[' && spec.host.back() == ']')
		spec.host = spec.host.substr(1, spec.host.size() - 2);
	spec.port = address.substr(colon + 1);
	std::size_t digits = 0;
	while (digits < spec.port.size() && spec.port[digits] >= '0' && spec.port[digits] <= '9')
		digits++;
	long number = digits && digits == spec.port.size() && digits <= 5 ? std::atol(spec.port.c_str()) : 0;
	if (number < 1 || number > 65535)
		return usage(": port '" + spec.port + "' is not a number in 1..65535");
	return spec;
}

}  // namespace

bool supported_baud(unsigned baud)
{
	return baud_constant(baud) != B0;
}

Result<TargetSpec> parse_target_spec(std::string_view text)
{
	std::string spec(text);
	if (spec.empty())
		return make_error("the target is empty: give host:port, unix:PATH or a serial device");
	if (has_space(spec))
		return make_error("target '" + spec + "' holds a blank: write host:port without spaces");
	if (spec.rfind("unix:", 0) == 0) {
		if (spec.size() == 5)
			return make_error("target 'unix:' names no socket: write unix:PATH");
		return TargetSpec{TargetSpec::Kind::Unix, {}, {}, spec.substr(5)};
	}
	if (spec[0] == '/')
		return TargetSpec{TargetSpec::Kind::Path, {}, {}, spec};
	return parse_host_port(text, spec.rfind("tcp:", 0) == 0 ? spec.substr(4) : spec);
}

FdTransport::FdTransport(int fd, std::string description, int write_timeout_ms)
	: fd_(fd), description_(std::move(description)), write_timeout_ms_(write_timeout_ms)
{
	set_nonblocking(fd_);
}

FdTransport::~FdTransport()
{
	if (fd_ >= 0)
		close(fd_);
}

Result<void> FdTransport::wait_writable()
{
	auto deadline = Clock::now() + std::chrono::milliseconds(write_timeout_ms_);
	auto ready = poll_until(fd_, POLLOUT, deadline, "write to " + description_);
	if (!ready)
		return ready.error();
	if (!*ready)
		return make_error("write to " + description_ + ": the peer took no byte for " +
				  std::to_string(write_timeout_ms_) + " ms");
	return {};
}

Result<void> FdTransport::write_all(std::string_view bytes)
{
	if (closed_)
		return make_error("connection to " + description_ + " is closed");
	while (!bytes.empty()) {
		ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd_, bytes.data(), bytes.size());
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			if (auto ready = wait_writable(); !ready) {
				closed_ = true;
				return ready.error();
			}
			continue;
		}
		if (n <= 0) {
			closed_ = true;
			return errno_error("write to " + description_);
		}
		bytes.remove_prefix(static_cast<std::size_t>(n));
	}
	return {};
}

Result<std::string> FdTransport::read_some(std::size_t max, int timeout_ms)
{
	if (closed_)
		return make_error("connection to " + description_ + " is closed");
	pollfd pfd{fd_, POLLIN, 0};
	int rc = poll(&pfd, 1, timeout_ms);
	if (rc < 0 && errno == EINTR)
		return std::string();
	if (rc < 0)
		return errno_error("poll " + description_);
	if (rc == 0)
		return std::string();
	std::string buffer(max, '\0');
	ssize_t n = read(fd_, buffer.data(), max);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return std::string();
	if (n < 0)
		return errno_error("read from " + description_);
	if (n == 0) {
		closed_ = true;
		return make_error(description_ + " closed the connection");
	}
	buffer.resize(static_cast<std::size_t>(n));
	return buffer;
}

Result<std::unique_ptr<Transport>> connect_transport(std::string_view text, const TransportOptions &options)
{
	auto spec = parse_target_spec(text);
	if (!spec)
		return spec.error();
	Result<int> fd = make_error("unreachable");
	std::string description;
	switch (spec->kind) {
	case TargetSpec::Kind::Unix:
		fd = connect_unix(spec->path, options.connect_timeout_ms);
		description = "unix:" + spec->path;
		break;
	case TargetSpec::Kind::Path:
		fd = open_path_target(spec->path, options);
		description = "serial:" + spec->path;
		break;
	case TargetSpec::Kind::Tcp:
		fd = connect_tcp(spec->host, spec->port, options.connect_timeout_ms);
		description = "tcp:" + spec->host + ":" + spec->port;
		break;
	}
	if (!fd)
		return fd.error();
	return std::unique_ptr<Transport>(std::make_unique<FdTransport>(*fd, description, options.write_timeout_ms));
}

}  // namespace vtice::dbg::rsp
