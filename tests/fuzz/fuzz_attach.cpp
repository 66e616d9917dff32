// libFuzzer target: `vtice attach` against a stub the fuzzer plays. The
// input is the stub's side of the conversation, cut into pieces (each a
// length byte, then that many bytes) that arrive one per read: acks, NAKs,
// packets, garbage, stale replies, a line that closes mid-packet. Over it run
// the handshake (qSupported, target.xml, vCont?, stub identification), the
// attach and kernel setup (IDT, kallsyms window, ORC), and a batch of
// commands. Any conversation must end in errors or a session, never a
// crash, undefined behaviour, a hang or memory without bound.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "commands/command.hpp"
#include "kernel_setup.hpp"
#include "rsp/rsp_target.hpp"
#include "session.hpp"

using namespace vtice;
using namespace vtice::dbg;

namespace {

// The stub: what the fuzzer says, piece by piece; then a closed line.
class FuzzStub final : public rsp::Transport {
public:
	explicit FuzzStub(std::string_view script)
	{
		while (!script.empty()) {
			std::size_t length = static_cast<unsigned char>(script[0]);
			script.remove_prefix(1);
			pieces_.emplace_back(script.substr(0, length));
			script.remove_prefix(std::min(length, script.size()));
		}
	}
	Result<void> write_all(std::string_view bytes) override
	{
		written_ += bytes.size();
		if (written_ > kMaxWritten)
			return make_error("the client wrote more than any conversation needs");
		return {};
	}
	Result<std::string> read_some(std::size_t max, int) override
	{
		if (pieces_.empty())
			return make_error("fuzz stub closed the connection");
		std::string piece = std::move(pieces_.front());
		pieces_.pop_front();
		if (piece.size() > max) {
			pieces_.push_front(piece.substr(max));
			piece.resize(max);
		}
		return piece;
	}
	std::string describe() const override { return "fuzz-stub"; }

private:
	static constexpr std::size_t kMaxWritten = 1 << 20;
	std::deque<std::string> pieces_;
	std::size_t written_ = 0;
};

const char *const kCommands[] = {
	"info registers", "x/8gx $pc", "bt", "stepi", "continue", "monitor vtice", "info threads",
	"break *0xffffffff81000000 if $rax == 1", "continue", "finish", "detach",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	rsp::ClientOptions options;
	options.reply_timeout_ms = 20;
	auto transport = std::make_unique<FuzzStub>(std::string_view(reinterpret_cast<const char *>(data), size));
	auto target = rsp::RspTarget::connect(std::move(transport), options);
	if (!target)
		return 0;
	Session session(std::move(*target));
	auto stop = session.attach();
	if (!stop)
		return 0;
	StringOutput out;
	KernelSetupOptions setup;
	(void)setup_kernel(session, setup, out);
	CommandContext ctx{session, out, 50};
	for (const char *line : kCommands) {
		if (session.state() == SessionState::Detached)
			break;
		(void)execute_line(ctx, line);
	}
	return 0;
}
