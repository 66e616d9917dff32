// libFuzzer target: every parser that sees bytes from an RSP stub.
#include <cstddef>
#include <cstdint>
#include <string>

#include "rsp/packet.hpp"
#include "rsp/protocol.hpp"

using namespace vtice::dbg::rsp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::string_view input(reinterpret_cast<const char *>(data), size);
	FrameReader reader(4096);
	// Feed in two pieces so fragment handling is exercised too.
	reader.feed(input.substr(0, size / 2));
	reader.feed(input.substr(size / 2));
	while (auto frame = reader.next()) {
		if (frame->kind != Frame::Kind::Packet)
			continue;
		auto expanded = expand_rle(frame->payload);
		if (!expanded)
			continue;
		(void)unescape_binary(*expanded);
		(void)from_hex(*expanded);
		(void)parse_stop_reply(*expanded);
		(void)parse_supported(*expanded);
	}
	std::string xml(input);
	(void)parse_target_description("target.xml", [&](const std::string &annex) -> vtice::Result<std::string> {
		if (annex == "target.xml")
			return xml;
		return std::string("<reg name=\"x\" bitsize=\"64\"/>");
	});
	return 0;
}
