#include "protocol.hpp"

#include <cstdlib>

#include "packet.hpp"

namespace vtice::dbg::rsp {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep)
{
	std::vector<std::string_view> parts;
	while (!text.empty()) {
		auto at = text.find(sep);
		parts.push_back(text.substr(0, at));
		if (at == std::string_view::npos)
			break;
		text.remove_prefix(at + 1);
	}
	return parts;
}

Result<int> parse_signal(std::string_view reply)
{
	if (reply.size() < 3)
		return make_error("stop reply '" + std::string(reply) + "' is too short");
	auto value = parse_hex_u64(reply.substr(1, 2));
	if (!value)
		return make_error("stop reply '" + std::string(reply.substr(0, 40)) + "' has no signal number", 1);
	return static_cast<int>(*value);
}

Result<void> apply_stop_field(StopEvent &event, std::string_view name, std::string_view value)
{
	auto watch = [&](BreakKind kind) -> Result<void> {
		auto address = parse_hex_u64(value);
		if (!address)
			return make_error("bad watchpoint address '" + std::string(value) + "' in stop reply");
		event.reason = StopReason::Watchpoint;
		event.watch_kind = kind;
		event.watch_address = *address;
		return {};
	};
	if (name == "thread") {
		auto thread = parse_thread_id(value);
		if (!thread)
			return thread.error();
		event.thread = *thread;
	} else if (name == "watch") {
		return watch(BreakKind::WriteWatch);
	} else if (name == "rwatch") {
		return watch(BreakKind::ReadWatch);
	} else if (name == "awatch") {
		return watch(BreakKind::AccessWatch);
	} else if (name == "replaylog") {
		event.replay_log = std::string(value);
	} else if (name == "swbreak" || name == "hwbreak") {
		event.reason = StopReason::Breakpoint;
		(name == "swbreak" ? event.swbreak : event.hwbreak) = true;
	}
	// Register values ("06:0000..."), core:, library:, ... are not needed.
	return {};
}

}  // namespace

Result<int> parse_thread_id(std::string_view text)
{
	if (text == "-1")
		return -1;
	if (!text.empty() && text[0] == 'p') {
		auto dot = text.find('.');
		if (dot == std::string_view::npos)
			return make_error("thread id '" + std::string(text) + "' has a process but no thread");
		text.remove_prefix(dot + 1);
		if (text == "-1")
			return -1;
	}
	auto value = parse_hex_u64(text);
	if (!value || *value > 0xffffffff)
		return make_error("bad thread id '" + std::string(text) + "'");
	// kgdb numbers each CPU's shadow thread -(cpu + 2), sent as 32 bits.
	return static_cast<int>(static_cast<std::int32_t>(static_cast<std::uint32_t>(*value)));
}

Result<StopEvent> parse_stop_reply(std::string_view reply)
{
	StopEvent event;
	event.raw = std::string(reply);
	if (reply.empty())
		return make_error("empty stop reply");
	char kind = reply[0];
	if (kind != 'S' && kind != 'T' && kind != 'W' && kind != 'X')
		return make_error("unknown stop reply '" + std::string(reply.substr(0, 40)) + "'");
	auto signal = parse_signal(reply);
	if (!signal)
		return signal.error();
	event.signal = *signal;
	if (kind == 'W' || kind == 'X') {
		event.reason = kind == 'W' ? StopReason::Exited : StopReason::Terminated;
		return event;
	}
	if (kind == 'S')
		return event;
	for (auto field : split(reply.substr(3), ';')) {
		if (field.empty())
			continue;
		auto colon = field.find(':');
		if (colon == std::string_view::npos)
			return make_error("stop reply field '" + std::string(field.substr(0, 40)) + "' has no ':'");
		if (auto r = apply_stop_field(event, field.substr(0, colon), field.substr(colon + 1)); !r)
			return r.error();
	}
	return event;
}

std::map<std::string, std::string> parse_supported(std::string_view reply)
{
	std::map<std::string, std::string> out;
	for (auto item : split(reply, ';')) {
		if (item.empty())
			continue;
		auto eq = item.find('=');
		if (eq != std::string_view::npos)
			out[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
		else if (item.back() == '+' || item.back() == '-' || item.back() == '?')
			out[std::string(item.substr(0, item.size() - 1))] = std::string(1, item.back());
		else
			out[std::string(item)] = "+";
	}
	return out;
}

}  // namespace vtice::dbg::rsp
