#include "fake_stub.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rsp/packet.hpp"

namespace vtice::dbg::test {

FakeStub::FakeStub(Script script) : script_(std::move(script))
{
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0) {
		server_fd_ = fds[0];
		client_fd_ = fds[1];
	}
	thread_ = std::thread([this] { run(); });
}

FakeStub::~FakeStub()
{
	if (server_fd_ >= 0)
		shutdown(server_fd_, SHUT_RDWR);
	thread_.join();
	if (server_fd_ >= 0)
		close(server_fd_);
}

std::unique_ptr<rsp::Transport> FakeStub::client_transport()
{
	int fd = client_fd_;
	client_fd_ = -1;
	return std::make_unique<rsp::FdTransport>(fd, "fake-stub");
}

std::string FakeStub::packet(const std::string &payload)
{
	return rsp::frame_packet(payload);
}

std::vector<std::string> FakeStub::received()
{
	std::lock_guard lock(mutex_);
	return received_;
}

int FakeStub::naks_received()
{
	std::lock_guard lock(mutex_);
	return naks_;
}

void FakeStub::run()
{
	rsp::FrameReader reader;
	char buffer[4096];
	for (;;) {
		ssize_t n = read(server_fd_, buffer, sizeof(buffer));
		if (n <= 0)
			return;
		reader.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
		while (auto frame = reader.next()) {
			if (frame->kind == rsp::Frame::Kind::Nak) {
				std::lock_guard lock(mutex_);
				naks_++;
			}
			bool nak = frame->kind == rsp::Frame::Kind::Nak;
			if (frame->kind != rsp::Frame::Kind::Packet && frame->kind != rsp::Frame::Kind::Interrupt && !nak)
				continue;
			std::string payload = frame->kind == rsp::Frame::Kind::Interrupt ? "\x03" : nak ? "-" : frame->payload;
			{
				std::lock_guard lock(mutex_);
				received_.push_back(payload);
			}
			std::string reply = script_(payload);
			auto close_at = reply.find("<close>");
			std::string bytes = reply.substr(0, close_at);
			if (!bytes.empty() && write(server_fd_, bytes.data(), bytes.size()) < 0)
				return;
			if (close_at != std::string::npos) {
				shutdown(server_fd_, SHUT_RDWR);
				return;
			}
		}
	}
}

}  // namespace vtice::dbg::test
