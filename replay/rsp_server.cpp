// The replay stub: packet meanings here, framing from debugger/rsp/packet.
#include "rsp_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "rsp/packet.hpp"
#include "rsp/transport.hpp"

namespace vtice::replay {

namespace rsp = dbg::rsp;

namespace {

std::string hex_u64(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "%llx", static_cast<unsigned long long>(value));
	return text;
}

bool starts_with(std::string_view text, std::string_view prefix)
{
	return text.substr(0, prefix.size()) == prefix;
}

// "ADDR,LEN" (m, Z) with both numbers in hex.
bool parse_pair(std::string_view args, std::uint64_t &first, std::uint64_t &second)
{
	auto comma = args.find(',');
	if (comma == std::string_view::npos)
		return false;
	auto a = rsp::parse_hex_u64(args.substr(0, comma));
	auto b = rsp::parse_hex_u64(args.substr(comma + 1));
	if (!a || !b)
		return false;
	first = *a;
	second = *b;
	return true;
}

// The registers of the i386 core feature, which gdb's amd64 support needs
// whole (x87 included) or it rejects the description, in its order.
const std::vector<std::string> &core_registers()
{
	static const std::vector<std::string> core = {
		"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
		"r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs", "st0", "st1", "st2", "st3",
		"st4", "st5", "st6", "st7", "fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop"};
	return core;
}

// A core register as gdb's own amd64 description has it.
RegisterSpec core_spec(const std::string &name)
{
	if (starts_with(name, "st"))
		return {name, 80, "i387_ext", "float"};
	if (name.size() == 2 && name[1] == 's')	// cs ss ds es fs gs
		return {name, 32, "int32", "general"};
	if (name[0] == 'f' || name == "eflags")
		return {name, 32, "int32", name == "eflags" ? "general" : "float"};
	return {name, 64, name == "rip" ? "code_ptr" : "int64", "general"};
}

// gdb's target description feature for a register, by its name: the core
// feature above; the rest go where gdb looks for them, or to a feature of
// ours.
const char *feature_of(const std::string &name)
{
	const auto &core = core_registers();
	if (std::find(core.begin(), core.end(), name) != core.end())
		return "org.gnu.gdb.i386.core";
	if (starts_with(name, "xmm") || name == "mxcsr")
		return "org.gnu.gdb.i386.sse";
	if (name == "fs_base" || name == "gs_base")
		return "org.gnu.gdb.i386.segments";
	if (starts_with(name, "ymm") && name.back() == 'h')
		return "org.gnu.gdb.i386.avx";
	return "org.vtice.x86-64.system";
}

// Only gdb's predefined types: a stub's own (QEMU's i386_eflags, vec128)
// would need their definitions, which the recording does not keep.
std::string gdb_type(const RegisterSpec &spec)
{
	static const std::set<std::string> predefined = {
		"int8", "int16", "int32", "int64", "int128", "uint8", "uint16", "uint32", "uint64", "uint128",
		"code_ptr", "data_ptr", "ieee_single", "ieee_double", "i387_ext", "int", "float"};
	if (predefined.count(spec.type))
		return spec.type;
	if (spec.bits == 80)
		return "i387_ext";
	if (spec.bits == 8 || spec.bits == 16 || spec.bits == 32 || spec.bits == 64 || spec.bits == 128)
		return (spec.bits == 128 ? "uint" : "int") + std::to_string(spec.bits);
	return "int";
}

}  // namespace

ReplayStub::ReplayStub(Replay &replay) : replay_(replay)
{
	const auto &specs = replay_.recording().registers;
	for (const std::string &name : core_registers())
		if (register_index(specs, name) < 0)
			unavailable_.push_back(core_spec(name));
}

std::string ReplayStub::target_xml() const
{
	std::vector<RegisterSpec> specs = replay_.recording().registers;
	specs.insert(specs.end(), unavailable_.begin(), unavailable_.end());
	std::string xml = "<?xml version=\"1.0\"?><!DOCTYPE target SYSTEM \"gdb-target.dtd\">"
			  "<target version=\"1.0\"><architecture>i386:x86-64</architecture>";
	std::vector<std::string> features;
	for (const RegisterSpec &spec : specs)
		if (std::find(features.begin(), features.end(), feature_of(spec.name)) == features.end())
			features.push_back(feature_of(spec.name));
	for (const std::string &feature : features) {
		xml += "<feature name=\"" + feature + "\">";
		for (std::size_t i = 0; i < specs.size(); i++) {
			if (feature_of(specs[i].name) != feature)
				continue;
			// regnum keeps the 'g' block in the recording's order across features.
			xml += "<reg name=\"" + specs[i].name + "\" bitsize=\"" + std::to_string(specs[i].bits) +
			       "\" type=\"" + gdb_type(specs[i]) + "\" regnum=\"" + std::to_string(i) + "\"";
			if (!specs[i].group.empty())
				xml += " group=\"" + specs[i].group + "\"";
			xml += "/>";
		}
		xml += "</feature>";
	}
	return xml + "</target>";
}

std::string ReplayStub::xfer_features(std::string_view args) const
{
	// "target.xml:OFFSET,LENGTH"
	if (!starts_with(args, "target.xml:"))
		return "E00";
	std::uint64_t offset = 0, length = 0;
	if (!parse_pair(args.substr(11), offset, length))
		return "E01";
	std::string xml = target_xml();
	if (offset >= xml.size())
		return "l";
	std::string part = xml.substr(offset, length);
	return (offset + part.size() >= xml.size() ? "l" : "m") + part;
}

std::string ReplayStub::stop_reply(const std::string &reason) const
{
	return "T05" + reason + "thread:1;";
}

// The watchpoint step j set off, as a stop reason; "" when none.
std::string ReplayStub::watch_hit(std::size_t j) const
{
	for (const Watchpoint &w : watchpoints_) {
		bool wrote = replay_.step_writes(j, w.address, w.length);
		bool read = replay_.step_reads(j, w.address, w.length);
		if (w.kind == Watch::Write && wrote)
			return "watch:" + hex_u64(w.address) + ";";
		if (w.kind == Watch::Read && read)
			return "rwatch:" + hex_u64(w.address) + ";";
		if (w.kind == Watch::Access && (read || wrote))
			return "awatch:" + hex_u64(w.address) + ";";
	}
	return "";
}

// Forward, a step runs the instruction at the position and a watchpoint it
// sets off stops after it; backward, the step is undone and the stop is at
// the instruction that did the access, where gdb's record target stops too.
std::string ReplayStub::run(bool forward, bool single)
{
	for (;;) {
		std::size_t at = replay_.position();
		if (forward ? at == replay_.steps() : at == 0)
			return stop_reply(forward ? "replaylog:end;" : "replaylog:begin;");
		std::size_t step = forward ? at : at - 1;
		replay_.seek(forward ? at + 1 : at - 1);
		if (single)
			return stop_reply();
		if (std::string watch = watch_hit(step); !watch.empty())
			return stop_reply(watch);
		if (breakpoints_.count(replay_.pc_at(replay_.position())))
			return stop_reply("swbreak:;");
	}
}

std::string ReplayStub::read_memory(std::string_view args) const
{
	std::uint64_t address = 0, length = 0;
	if (!parse_pair(args, address, length))
		return "E01";
	auto bytes = replay_.read(address, std::min<std::uint64_t>(length, 0x10000));
	// Short reads are allowed; none at all is an error, never a guess.
	return bytes.empty() ? "E14" : rsp::to_hex(bytes);
}

std::string ReplayStub::read_register(std::string_view args) const
{
	auto number = rsp::parse_hex_u64(args);
	const auto &specs = replay_.recording().registers;
	if (number && *number >= specs.size() && *number - specs.size() < unavailable_.size())
		return std::string(2 * unavailable_[*number - specs.size()].bytes(), 'x');
	if (!number || *number >= specs.size())
		return "E00";
	const auto &regs = replay_.registers();
	std::size_t offset = replay_.register_offset(*number);
	return rsp::to_hex(std::span(regs.data() + offset, specs[*number].bytes()));
}

std::string ReplayStub::set_point(std::string_view args, bool insert)
{
	// "TYPE,ADDR,KIND"
	if (args.size() < 2 || args[1] != ',')
		return "E01";
	char type = args[0];
	std::uint64_t address = 0, kind = 0;
	if (!parse_pair(args.substr(2), address, kind))
		return "E01";
	if (type == '0' || type == '1') {
		if (insert)
			breakpoints_.insert(address);
		else
			breakpoints_.erase(address);
		return "OK";
	}
	if (type < '2' || type > '4' || kind == 0 || kind > 4096)
		return "";
	Watchpoint w{static_cast<Watch>(type - '0'), address, kind};
	auto same = [&](const Watchpoint &o) { return o.kind == w.kind && o.address == address && o.length == kind; };
	watchpoints_.erase(std::remove_if(watchpoints_.begin(), watchpoints_.end(), same), watchpoints_.end());
	if (insert)
		watchpoints_.push_back(w);
	return "OK";
}

// monitor position | monitor goto N: where the replay stands (the step, and
// the instruction of the trace it is at), and a jump.
std::string ReplayStub::monitor(std::string_view hex)
{
	auto bytes = rsp::from_hex(hex);
	if (!bytes)
		return "E01";
	std::string command(bytes->begin(), bytes->end());
	std::string out;
	if (command == "vtice") {	// who is serving (attach's identify_stub)
		out = std::string(kServeReplayBanner) + ": a recording of " + std::to_string(replay_.steps()) + " steps\n";
	} else if (command == "position" || command.empty()) {
		std::size_t at = replay_.position();
		out = "step " + std::to_string(at) + " of " + std::to_string(replay_.steps()) + ", instruction " +
		      std::to_string(replay_.instructions_at(at)) + "\n";
	} else if (starts_with(command, "goto ")) {
		char *end = nullptr;
		unsigned long long k = std::strtoull(command.c_str() + 5, &end, 0);
		if (!end || *end || k > replay_.steps())
			out = "goto: a step from 0 to " + std::to_string(replay_.steps()) + "\n";
		else {
			replay_.seek(k);
			out = "step " + std::to_string(replay_.position()) + "\n";
		}
	} else {
		out = "replay monitor commands: position, goto N\n";
	}
	return rsp::to_hex(out);
}

std::string ReplayStub::handle(std::string_view p, bool &ended)
{
	if (p.empty())
		return "";
	if (starts_with(p, "qSupported"))
		return "PacketSize=20000;qXfer:features:read+;QStartNoAckMode+;ReverseStep+;ReverseContinue+;"
		       "swbreak+;hwbreak+";
	if (p == "QStartNoAckMode") {
		no_ack_ = true;
		return "OK";
	}
	if (starts_with(p, "qXfer:features:read:"))
		return xfer_features(p.substr(20));
	if (p == "?")
		return stop_reply();
	if (p == "qC")
		return "QC1";
	if (p == "qfThreadInfo")
		return "m1";
	if (p == "qsThreadInfo")
		return "l";
	if (p == "qAttached")
		return "1";
	if (starts_with(p, "H") || starts_with(p, "T"))
		return "OK";
	if (starts_with(p, "qSymbol"))
		return "OK";
	if (starts_with(p, "qRcmd,"))
		return monitor(p.substr(6));
	if (p == "g") {
		const auto &regs = replay_.registers();
		std::string block = rsp::to_hex(std::span(regs.data(), regs.size()));
		for (const RegisterSpec &spec : unavailable_)
			block.append(2 * spec.bytes(), 'x');	// gdb: "xx", a byte the target does not have
		return block;
	}
	if (p[0] == 'p')
		return read_register(p.substr(1));
	if (p[0] == 'm')
		return read_memory(p.substr(1));
	if (p[0] == 'G' || p[0] == 'P' || p[0] == 'M' || p[0] == 'X')
		return "E01";  // a recording is not changed by looking at it
	if (p[0] == 'Z' || p[0] == 'z')
		return set_point(p.substr(1), p[0] == 'Z');
	if (p == "s")
		return run(true, true);
	if (p == "c")
		return run(true, false);
	if (p == "bs")
		return run(false, true);
	if (p == "bc")
		return run(false, false);
	if (p[0] == 'D' || p == "k" || p == "vKill;1") {
		ended = true;
		return p[0] == 'k' ? "" : "OK";
	}
	return "";
}

namespace {

Result<int> listen_on(const ServeOptions &options)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return make_error(std::string("socket: ") + std::strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sockaddr_in addr{};
	addr.sin_family = AF_INET;
	addr.sin_port = htons(static_cast<std::uint16_t>(options.port));
	if (inet_pton(AF_INET, options.host.c_str(), &addr.sin_addr) != 1) {
		close(fd);
		return make_error("not an IPv4 address: " + options.host);
	}
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 || listen(fd, 1) != 0) {
		std::string why = std::strerror(errno);
		close(fd);
		return make_error("cannot listen on " + options.host + ":" + std::to_string(options.port) + ": " + why);
	}
	return fd;
}

// One client: frames in, replies out, until it detaches, kills or leaves.
Result<bool> serve_client(Replay &replay, int fd)
{
	rsp::FdTransport link(fd, "gdb client");
	rsp::FrameReader frames;
	replay.seek(0);  // every client starts where the recording starts
	ReplayStub stub(replay);
	for (;;) {
		auto got = link.read_some(4096, 60'000);
		if (!got)
			return false;  // the client went away
		frames.feed(*got);
		while (auto frame = frames.next()) {
			if (frame->kind == rsp::Frame::Kind::BadChecksum) {
				if (!stub.no_ack())
					(void)link.write_all("-");
				continue;
			}
			if (frame->kind != rsp::Frame::Kind::Packet)
				continue;  // acks, an interrupt (every run here ends at once), line noise
			bool was_no_ack = stub.no_ack();
			if (!was_no_ack)
				(void)link.write_all("+");
			auto payload = rsp::expand_rle(frame->payload);
			bool ended = false;
			std::string reply = payload ? stub.handle(*payload, ended) : "E01";
			if (auto r = link.write_all(rsp::frame_packet(reply)); !r)
				return false;
			if (ended)
				return frame->payload == "k" || frame->payload == "vKill;1";
		}
	}
}

}  // namespace

Result<void> serve_replay(Replay &replay, const ServeOptions &options)
{
	auto listener = listen_on(options);
	if (!listener)
		return listener.error();
	if (options.announce) {
		sockaddr_in bound{};
		socklen_t len = sizeof(bound);
		getsockname(*listener, reinterpret_cast<sockaddr *>(&bound), &len);
		options.announce(options.host + ":" + std::to_string(ntohs(bound.sin_port)));
	}
	for (;;) {
		int client = accept4(*listener, nullptr, nullptr, SOCK_CLOEXEC);
		if (client < 0) {
			if (errno == EINTR)
				continue;
			std::string why = std::strerror(errno);
			close(*listener);
			return make_error("accept: " + why);
		}
		auto killed = serve_client(replay, client);
		if ((killed && *killed) || options.once)
			break;
	}
	close(*listener);
	return {};
}

}  // namespace vtice::replay
