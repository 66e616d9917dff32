#include "transport.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

namespace vtice::dbg::rsp {

namespace {

Error errno_error(const std::string &what)
{
	return make_error(what + ": " + std::strerror(errno));
}

Result<int> connect_tcp(const std::string &host, const std::string &port)
{
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	addrinfo *list = nullptr;
	int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
	if (rc != 0)
		return make_error("cannot resolve '" + host + ":" + port + "': " + gai_strerror(rc));
	std::string last = "no address";
	for (addrinfo *ai = list; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			freeaddrinfo(list);
			int one = 1;
			// Every packet is a round trip; Nagle would add 40 ms to each.
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		last = std::strerror(errno);
		close(fd);
	}
	freeaddrinfo(list);
	return make_error("cannot connect to " + host + ":" + port + ": " + last);
}

Result<int> connect_unix(const std::string &path)
{
	sockaddr_un addr{};
	if (path.size() >= sizeof(addr.sun_path))
		return make_error("unix socket path too long: " + path);
	addr.sun_family = AF_UNIX;
	std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno_error("socket");
	if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
		auto err = errno_error("cannot connect to unix:" + path);
		close(fd);
		return err;
	}
	return fd;
}

Result<int> open_serial(const std::string &path)
{
	int fd = open(path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno_error("cannot open " + path);
	termios tio{};
	if (tcgetattr(fd, &tio) == 0) {
		cfmakeraw(&tio);
		cfsetispeed(&tio, B115200);
		cfsetospeed(&tio, B115200);
		tio.c_cc[VMIN] = 0;
		tio.c_cc[VTIME] = 0;
		tcsetattr(fd, TCSANOW, &tio);
	}
	return fd;
}

}  // namespace

FdTransport::FdTransport(int fd, std::string description) : fd_(fd), description_(std::move(description)) {}

FdTransport::~FdTransport()
{
	if (fd_ >= 0)
		close(fd_);
}

Result<void> FdTransport::write_all(std::string_view bytes)
{
	if (closed_)
		return make_error("connection to " + description_ + " is closed");
	while (!bytes.empty()) {
		ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd_, bytes.data(), bytes.size());
		if (n < 0 && errno == EINTR)
			continue;
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
	int rc;
	do
		rc = poll(&pfd, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return errno_error("poll " + description_);
	if (rc == 0)
		return std::string();
	std::string buffer(max, '\0');
	ssize_t n;
	do
		n = read(fd_, buffer.data(), max);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno_error("read from " + description_);
	if (n == 0) {
		closed_ = true;
		return make_error(description_ + " closed the connection");
	}
	buffer.resize(static_cast<std::size_t>(n));
	return buffer;
}

Result<std::unique_ptr<Transport>> connect_transport(std::string_view spec_view, int)
{
	std::string spec(spec_view);
	Result<int> fd = make_error("unreachable");
	std::string description;
	if (spec.rfind("unix:", 0) == 0) {
		fd = connect_unix(spec.substr(5));
		description = spec;
	} else if (!spec.empty() && spec[0] == '/') {
		fd = open_serial(spec);
		description = "serial:" + spec;
	} else {
		// gdb's forms: HOST:PORT, :PORT, tcp:HOST:PORT, [IPV6]:PORT.
		std::string address = spec.rfind("tcp:", 0) == 0 ? spec.substr(4) : spec;
		auto colon = address.rfind(':');
		if (colon == std::string::npos || colon + 1 == address.size())
			return make_error("target '" + spec + "' is not host:port, tcp:host:port, unix:PATH or /dev/...");
		std::string host = colon == 0 ? "127.0.0.1" : address.substr(0, colon);
		if (host.size() > 2 && host.front() == '[' && host.back() == ']')
			host = host.substr(1, host.size() - 2);
		std::string port = address.substr(colon + 1);
		char *end = nullptr;
		long number = std::strtol(port.c_str(), &end, 10);
		if (*end || number < 1 || number > 65535)
			return make_error("target '" + spec + "': port '" + port + "' is not a number in 1..65535");
		fd = connect_tcp(host, port);
		description = "tcp:" + host + ":" + port;
	}
	if (!fd)
		return fd.error();
	return std::unique_ptr<Transport>(std::make_unique<FdTransport>(*fd, description));
}

}  // namespace vtice::dbg::rsp
