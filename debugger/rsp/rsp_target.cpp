#include "rsp_target.hpp"

#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol.hpp"

namespace vtice::dbg::rsp {

namespace {

std::string hex_number(std::uint64_t value)
{
	char text[24];
	std::snprintf(text, sizeof(text), "%llx", static_cast<unsigned long long>(value));
	return text;
}

// A request's comm as the trap's and the profiler's arming packets carry
// it: its 16 bytes in hex, the last always the NUL the stub requires.
std::string comm_hex(const char (&comm)[16])
{
	std::string bytes(comm, sizeof(comm));
	bytes.back() = '\0';
	return to_hex(bytes);
}

Error reply_error(const std::string &what, const std::string &reply)
{
	if (reply.empty())
		return make_error(what + ": not supported by the stub");
	if (auto e = error_reply(reply))
		return make_error(what + ": " + *e);
	return make_error(what + ": unexpected reply '" + reply.substr(0, 40) + "'");
}

// text cut at each sep ("" gives none).
std::vector<std::string_view> split(std::string_view text, char sep)
{
	std::vector<std::string_view> parts;
	while (!text.empty()) {
		std::size_t at = text.find(sep);
		parts.push_back(text.substr(0, at));
		text = at == std::string_view::npos ? std::string_view() : text.substr(at + 1);
	}
	return parts;
}

// One slot of qVtice:probes:keys: "0" (free) or "COUNT:KEY0:KEY1:VALUE" with COUNT > 0.
std::optional<vtice_probe_key> parse_key_slot(std::string_view slot)
{
	std::vector<std::string_view> fields = split(slot, ':');
	vtice_probe_key k{};
	__u64 *into[] = {&k.count, &k.key[0], &k.key[1], &k.value};
	if (fields.size() != 1 && fields.size() != 4)
		return std::nullopt;
	for (std::size_t i = 0; i < fields.size(); i++) {
		auto value = parse_hex_u64(fields[i]);
		if (!value)
			return std::nullopt;
		*into[i] = *value;
	}
	if ((fields.size() == 1) != (k.count == 0))
		return std::nullopt;
	return k;
}

}  // namespace

RspTarget::RspTarget(std::unique_ptr<Transport> transport, ClientOptions options)
	: client_(std::move(transport), options)
{
}

Result<std::unique_ptr<RspTarget>> RspTarget::connect(std::unique_ptr<Transport> transport, ClientOptions options)
{
	std::unique_ptr<RspTarget> target(new RspTarget(std::move(transport), options));
	if (auto r = target->negotiate(); !r)
		return r.error();
	return target;
}

Result<std::unique_ptr<RspTarget>> RspTarget::connect(std::string_view spec, ClientOptions options,
						      const TransportOptions &transport_options)
{
	auto transport = connect_transport(spec, transport_options);
	if (!transport)
		return transport.error();
	return connect(std::move(*transport), options);
}

std::string RspTarget::describe() const
{
	if (!features_.stub.empty())
		return "rsp " + client_.describe() + " (" + features_.stub + ")";
	return "rsp " + client_.describe();
}

Result<std::string> RspTarget::expect_ok(std::string_view packet, const char *what)
{
	auto reply = client_.request(packet);
	if (!reply)
		return make_error(std::string(what) + ": " + reply.error().message);
	if (*reply != "OK")
		return reply_error(what, *reply);
	return *reply;
}

Result<void> RspTarget::negotiate()
{
	auto reply = client_.request(
		"qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;binary-upload+;xmlRegisters=i386");
	if (!reply)
		return make_error("qSupported: " + reply.error().message);
	auto supported = parse_supported(*reply);
	auto has = [&](const char *name) { return supported.count(name) && supported[name] == "+"; };
	if (supported.count("PacketSize")) {
		auto size = parse_hex_u64(supported["PacketSize"]);
		features_.max_packet = size ? static_cast<unsigned>(std::min<std::uint64_t>(*size, kMaxPacket)) : 0;
	}
	features_.multiprocess = has("multiprocess");
	features_.binary_read = has("binary-upload");
	if (has("QStartNoAckMode")) {
		if (expect_ok("QStartNoAckMode", "QStartNoAckMode"))
			client_.set_no_ack(true);
		features_.no_ack = client_.no_ack();
	}
	features_.target_description = has("qXfer:features:read");
	features_.branch_trace = has("Qbtrace:bts") && has("qXfer:vtice-trace:read");
	features_.probes = has("QVtice:probes");
	features_.reverse = has("ReverseStep") && has("ReverseContinue");
	auto layout = features_.target_description
			      ? parse_target_description("target.xml",
							 [this](const std::string &annex) {
								 return read_xfer("features", annex);
							 })
			      : default_amd64_layout();
	if (!layout)
		return layout.error();
	layout_ = std::move(*layout);
	if (auto vcont = client_.request("vCont?"); vcont && vcont->rfind("vCont", 0) == 0)
		features_.vcont = vcont->find(";s") != std::string::npos && vcont->find(";c") != std::string::npos;
	if (auto phys = client_.request("qqemu.PhyMemMode"); phys && (*phys == "0" || *phys == "1")) {
		features_.physical_memory = true;
		// A session killed mid-translation leaves QEMU reading physical
		// memory: every virtual read would then return the wrong bytes.
		if (*phys == "1") {
			bool reset = static_cast<bool>(expect_ok("Qqemu.PhyMemMode:0", "physical mode"));
			features_.warnings.push_back(reset ? "QEMU's gdbstub was left in physical-memory mode by an earlier "
							     "session; switched back to virtual"
							   : "QEMU's gdbstub is in physical-memory mode and would not leave it");
		}
	}
	features_.stub = identify_stub();
	bool qemu = features_.stub == "QEMU gdbstub";
	if (qemu)
		repair_task_priority();
	// QEMU's system-mode gdbstub takes packets as a queue and never waits
	// for an ack (gdbstub.c: put_packet_binary), so reads can be queued.
	features_.pipelined_reads = qemu;
	return {};
}

// vtice's tracer raises CR8 (the task priority) to 15 while it traces and
// puts it back when done; a session whose connection was lost in between
// left the guest with every external interrupt masked. Linux sets the
// task priority once, at boot, to accept every vector but 0-31 (TPR 0x10,
// so CR8 1: setup_local_APIC, arch/x86/kernel/apic/apic.c) and never
// changes it; 15 masks its timer, so only that value is the leftover, and
// it goes back to Linux's.
void RspTarget::repair_task_priority()
{
	constexpr std::uint64_t kTracing = 15, kLinux = 1;
	const RegisterInfo *cr8 = layout_.find("cr8");
	if (!cr8)
		return;
	auto value = read_register(*cr8);
	if (!value || *value != kTracing)
		return;
	bool reset = static_cast<bool>(write_register(*cr8, kLinux));
	features_.warnings.push_back(reset ? "the guest's CR8 was 15 (an interrupted vtice trace masks interrupts "
					     "with it); set back to 1, the task priority Linux sets at boot"
					   : "the guest's CR8 is 15 and could not be set back to 1: external "
					     "interrupts stay masked");
}

// Which stub answers: QEMU's has its own packets (qqemu.*), vtice's
// hypervisor stub answers "monitor vtice" (docs/debugger.md), and kgdb
// names its per-CPU shadow threads "shadowCPU<n>" (kernel/debug/gdbstub.c),
// which no other stub does. kgdb has no qRcmd without kdb, so it is asked
// first: a monitor command it does not know would go unanswered.
std::string RspTarget::identify_stub()
{
	if (features_.physical_memory)
		return "QEMU gdbstub";
	if (!features_.target_description && names_shadow_cpu_threads())
		return "kgdb";
	// serve-replay answers with its name (replay/rsp_server.hpp), the hypervisor's stub with its own.
	auto out = monitor("vtice");
	if (out && out->rfind("vtice serve-replay", 0) == 0)
		return "vtice serve-replay";
	if (out && out->rfind("vtice", 0) == 0)
		return "vtice hypervisor stub";
	return "";
}

bool RspTarget::names_shadow_cpu_threads()
{
	auto list = client_.request("qfThreadInfo");
	if (!list || list->size() < 2 || (*list)[0] != 'm')
		return false;
	std::string first = list->substr(1, list->find(',') - 1);
	auto extra = client_.request("qThreadExtraInfo," + first);
	if (!extra)
		return false;
	auto text = from_hex(*extra);
	return text && std::string(text->begin(), text->end()).rfind("shadowCPU", 0) == 0;
}

Result<std::string> RspTarget::read_xfer(const std::string &object, const std::string &annex)
{
	std::string data;
	const std::size_t chunk = 0xf00;
	for (int round = 0; round < 4096; round++) {
		std::string packet = "qXfer:" + object + ":read:" + annex + ":" + hex_number(data.size()) + "," +
				     hex_number(chunk);
		auto reply = client_.request(packet);
		if (!reply)
			return reply.error();
		if (reply->empty() || ((*reply)[0] != 'm' && (*reply)[0] != 'l'))
			return reply_error("qXfer " + annex, *reply);
		auto bytes = unescape_binary(std::string_view(*reply).substr(1));
		if (!bytes)
			return make_error("qXfer " + annex + ": " + bytes.error().to_string());
		data.append(bytes->begin(), bytes->end());
		if ((*reply)[0] == 'l')
			return data;
		if (bytes->empty())
			return make_error("qXfer " + annex + ": stub sent an empty partial chunk");
	}
	return make_error("qXfer " + annex + ": object larger than 14 MiB");
}

// "xx" marks a byte the stub cannot provide (GDB manual, 'g' reply: an
// unavailable register, e.g. the hypervisor stub's x87/SSE state). The
// console shows such registers as 0.
static std::string unavailable_as_zero(std::string hex)
{
	for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
		if (hex[i] == 'x' && hex[i + 1] == 'x')
			hex[i] = hex[i + 1] = '0';
	return hex;
}

Result<RegisterValues> RspTarget::read_registers()
{
	auto reply = client_.request("g");
	if (!reply)
		return reply.error();
	if (auto e = error_reply(*reply))
		return make_error("reading registers: " + *e);
	auto raw = from_hex(unavailable_as_zero(*reply));
	if (!raw)
		return make_error("malformed 'g' reply: " + raw.error().to_string());
	RegisterValues values{std::move(*raw)};
	// Registers past the 'g' block (QEMU: control registers) come from 'p'.
	for (const auto &reg : layout_.registers) {
		if (reg.offset + (reg.bits + 7) / 8 <= values.raw.size() || reg.bits > 64)
			continue;
		if (reg.group != "system" && reg.group != "general")
			continue;
		auto value = read_register(reg);
		values.set(reg, value ? *value : 0);
	}
	return values;
}

Result<std::uint64_t> RspTarget::read_register(const RegisterInfo &reg)
{
	if (!p_supported_)
		return make_error("stub does not support reading single registers ('p')");
	auto reply = client_.request("p" + hex_number(reg.number));
	if (!reply)
		return reply.error();
	if (reply->empty()) {
		p_supported_ = false;
		return make_error("stub does not support reading single registers ('p')");
	}
	if (auto e = error_reply(*reply))
		return make_error("reading " + reg.name + ": " + *e);
	auto raw = from_hex(unavailable_as_zero(*reply));
	if (!raw)
		return make_error("malformed 'p' reply for " + reg.name + ": " + raw.error().to_string());
	RegisterValues values{std::move(*raw)};
	RegisterInfo at_zero = reg;
	at_zero.offset = 0;
	auto value = values.get(at_zero);
	if (!value)
		return make_error("short 'p' reply for " + reg.name);
	return *value;
}

Result<void> RspTarget::write_register(const RegisterInfo &reg, std::uint64_t value)
{
	RegisterValues bytes;
	RegisterInfo at_zero = reg;
	at_zero.offset = 0;
	bytes.set(at_zero, value);
	auto r = expect_ok("P" + hex_number(reg.number) + "=" + to_hex(bytes.raw), "writing register");
	if (!r)
		return make_error(r.error().message + " (" + reg.name + ")");
	return {};
}

std::size_t RspTarget::chunk_size() const
{
	// Hex doubles the size; leave room for the framing. A stub that does
	// not say gets gdb's own assumption, 400 bytes (kgdb's buffer is 1024).
	std::size_t packet = features_.max_packet ? features_.max_packet : 400;
	return std::max<std::size_t>(16, (packet - 32) / 2);
}

// 'x' (binary, gdb 16's binary-upload) when offered, else 'm' (hex).
std::string RspTarget::read_request(std::uint64_t address, std::size_t length) const
{
	return std::string(1, features_.binary_read ? 'x' : 'm') + hex_number(address) + "," + hex_number(length);
}

Result<std::vector<std::uint8_t>> RspTarget::parse_read_reply(std::uint64_t address, std::size_t length,
							      const std::string &reply) const
{
	if (auto e = error_reply(reply))
		return make_error("cannot read memory at 0x" + hex_number(address) + ": " + *e);
	Result<std::vector<std::uint8_t>> bytes = make_error("");
	if (features_.binary_read) {
		if (reply.empty() || reply[0] != 'b')
			return make_error("malformed 'x' reply at 0x" + hex_number(address) + " (no 'b' prefix)");
		bytes = unescape_binary(std::string_view(reply).substr(1));
	} else {
		bytes = from_hex(reply);
	}
	if (!bytes)
		return make_error("malformed memory reply at 0x" + hex_number(address) + ": " + bytes.error().to_string());
	if (bytes->empty() || bytes->size() > length)
		return make_error("cannot read memory at 0x" + hex_number(address) + " (" +
				  std::to_string(bytes->size()) + " bytes in the reply)");
	return bytes;
}

Result<std::vector<std::uint8_t>> RspTarget::read_chunk(std::uint64_t address, std::size_t length)
{
	auto reply = client_.request(read_request(address, length));
	if (!reply)
		return reply.error();
	return parse_read_reply(address, length, *reply);
}

// A long read as a queue of chunk reads kept in flight: over QEMU's socket
// each round trip costs more than the stub's work on it. Stops at the first
// short reply; the caller goes on one chunk at a time from there.
Result<void> RspTarget::read_pipelined(std::uint64_t address, std::size_t length, std::vector<std::uint8_t> &out)
{
	constexpr std::size_t kWindow = 32, kBatch = 256;
	while (length - out.size() > chunk_size()) {
		std::vector<std::string> requests;
		std::vector<std::pair<std::uint64_t, std::size_t>> asked;
		for (std::size_t at = out.size(); at < length && asked.size() < kBatch; at += chunk_size()) {
			std::size_t want = std::min(chunk_size(), length - at);
			asked.emplace_back(address + at, want);
			requests.push_back(read_request(address + at, want));
		}
		auto replies = client_.request_pipelined(requests, kWindow);
		if (!replies)
			return replies.error();
		for (std::size_t i = 0; i < asked.size(); i++) {
			auto bytes = parse_read_reply(asked[i].first, asked[i].second, (*replies)[i]);
			if (!bytes)
				return bytes.error();
			out.insert(out.end(), bytes->begin(), bytes->end());
			if (bytes->size() < asked[i].second)
				return {};
		}
	}
	return {};
}

Result<std::vector<std::uint8_t>> RspTarget::read_memory(std::uint64_t address, std::size_t length)
{
	std::vector<std::uint8_t> out;
	out.reserve(length);
	if (features_.pipelined_reads)
		if (auto r = read_pipelined(address, length, out); !r)
			return r.error();
	while (out.size() < length) {
		std::size_t want = std::min(chunk_size(), length - out.size());
		auto chunk = read_chunk(address + out.size(), want);
		if (!chunk)
			return chunk.error();
		out.insert(out.end(), chunk->begin(), chunk->end());
	}
	return out;
}

// 'X' (binary) once a zero-length probe says the stub takes it, else 'M'.
Result<void> RspTarget::write_memory(std::uint64_t address, const std::vector<std::uint8_t> &bytes)
{
	if (!x_probed_) {
		auto probe = client_.request("X" + hex_number(address) + ",0:");
		if (!probe)
			return probe.error();
		features_.binary_write = *probe == "OK";
		x_probed_ = true;
	}
	std::size_t done = 0;
	while (done < bytes.size()) {
		std::size_t n = std::min(chunk_size(), bytes.size() - done);
		std::span<const std::uint8_t> chunk(bytes.data() + done, n);
		// Raw bytes: frame_packet escapes '$', '#', '}' and '*' on the wire.
		std::string data = features_.binary_write ? std::string(chunk.begin(), chunk.end()) : to_hex(chunk);
		std::string packet = std::string(features_.binary_write ? "X" : "M") + hex_number(address + done) + "," +
				     hex_number(n) + ":" + data;
		if (auto r = expect_ok(packet, "writing memory"); !r)
			return make_error(r.error().message + " at 0x" + hex_number(address + done));
		done += n;
	}
	return {};
}

Result<void> RspTarget::set_physical_mode(bool physical)
{
	if (!features_.physical_memory)
		return make_error("stub has no physical memory mode");
	if (auto r = expect_ok(physical ? "Qqemu.PhyMemMode:1" : "Qqemu.PhyMemMode:0", "physical mode"); !r)
		return r.error();
	return {};
}

static std::string breakpoint_text(char op, BreakKind type, std::uint64_t address, unsigned kind)
{
	return std::string(1, op) + std::to_string(static_cast<int>(type)) + "," + hex_number(address) + "," +
	       hex_number(kind);
}

Result<void> RspTarget::breakpoint_packet(char op, BreakKind type, std::uint64_t address, unsigned kind)
{
	std::string packet = breakpoint_text(op, type, address, kind);
	const char *what = op == 'Z' ? "inserting breakpoint" : "removing breakpoint";
	if (auto r = expect_ok(packet, what); !r)
		return make_error(r.error().message + " (" + break_kind_name(type) + " at 0x" + hex_number(address) + ")");
	return {};
}

Result<void> RspTarget::insert_breakpoint(BreakKind type, std::uint64_t address, unsigned kind)
{
	if (auto r = breakpoint_packet('Z', type, address, kind); !r)
		return r;
	if (type == BreakKind::Hardware)
		features_.hw_breakpoints = true;
	return {};
}

Result<void> RspTarget::remove_breakpoint(BreakKind type, std::uint64_t address, unsigned kind)
{
	return breakpoint_packet('z', type, address, kind);
}

std::string RspTarget::thread_text(int thread) const
{
	if (features_.multiprocess)
		return "p1." + hex_number(static_cast<unsigned>(thread));
	return hex_number(static_cast<unsigned>(thread));
}

std::string RspTarget::resume_packet(ResumeAction action) const
{
	// vCont has no reverse actions (GDB manual, "Packets": bc, bs).
	if (action == ResumeAction::ReverseContinue)
		return "bc";
	if (action == ResumeAction::ReverseStep)
		return "bs";
	if (features_.vcont)
		return action == ResumeAction::Continue ? "vCont;c" : "vCont;s:" + thread_text(thread_ > 0 ? thread_ : 1);
	return action == ResumeAction::Continue ? "c" : "s";
}

Result<void> RspTarget::resume(ResumeAction action)
{
	bool backwards = action == ResumeAction::ReverseContinue || action == ResumeAction::ReverseStep;
	if (backwards && !features_.reverse)
		return make_error("this target cannot run backwards (its stub offers no ReverseStep/ReverseContinue); "
				  "record the path with 'trace --record -o FILE' and open it with vtice serve-replay");
	if (auto r = client_.send(resume_packet(action)); !r)
		return r;
	running_ = true;
	return {};
}

// QEMU's gdbstub handles the queued packets in order, the resume last (it
// must be: any byte arriving while the guest runs stops it), so the
// changes and the resume cost one exchange instead of one each.
Result<void> RspTarget::resume_with(std::span<const BreakpointChange> changes, ResumeAction action)
{
	if (changes.empty() || !features_.pipelined_reads)
		return Target::resume_with(changes, action);
	std::vector<std::string> packets;
	for (const BreakpointChange &c : changes)
		packets.push_back(breakpoint_text(c.insert ? 'Z' : 'z', c.type, c.address, c.kind));
	packets.push_back(resume_packet(action));
	auto replies = client_.send_then_collect(packets, changes.size());
	if (!replies)
		return replies.error();
	running_ = true;
	for (std::size_t i = 0; i < changes.size(); i++) {
		if ((*replies)[i] == "OK")
			continue;
		const BreakpointChange &c = changes[i];
		Error error = reply_error(c.insert ? "inserting breakpoint" : "removing breakpoint", (*replies)[i]);
		// The guest runs without the breakpoint the caller counts on: stop it.
		constexpr int kStopWaitMs = 10000;
		if (interrupt())
			(void)wait_stop(kStopWaitMs);
		return make_error(error.message + " (" + break_kind_name(c.type) + " at 0x" + hex_number(c.address) + ")");
	}
	return {};
}

Result<std::optional<StopEvent>> RspTarget::wait_stop(int timeout_ms)
{
	if (!running_)
		return make_error("target is not running");
	auto reply = client_.receive(timeout_ms);
	if (!reply)
		return reply.error();
	if (!*reply)
		return std::optional<StopEvent>();
	auto event = parse_stop_reply(**reply);
	if (!event)
		return event.error();  // still running: the caller may wait again or interrupt
	running_ = false;
	if (event->thread && *event->thread > 0)
		thread_ = *event->thread;
	return std::optional<StopEvent>(std::move(*event));
}

Result<void> RspTarget::interrupt()
{
	return client_.send_interrupt();
}

Result<StopEvent> RspTarget::query_stop()
{
	auto reply = client_.request("?");
	if (!reply)
		return reply.error();
	auto event = parse_stop_reply(*reply);
	if (event && event->thread && *event->thread > 0)
		thread_ = *event->thread;
	return event;
}

Result<std::vector<int>> RspTarget::threads()
{
	std::vector<int> out;
	std::string packet = "qfThreadInfo";
	for (int round = 0; round < 1024; round++) {
		auto reply = client_.request(packet);
		if (!reply)
			return reply.error();
		if (*reply == "l" || reply->empty())
			return out;
		if ((*reply)[0] != 'm')
			return reply_error("thread list", *reply);
		std::string_view list = std::string_view(*reply).substr(1);
		while (!list.empty()) {
			auto comma = list.find(',');
			auto id = parse_thread_id(list.substr(0, comma));
			if (!id)
				return id.error();
			out.push_back(*id);
			list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
		}
		packet = "qsThreadInfo";
	}
	return make_error("thread list does not end");
}

Result<void> RspTarget::select_thread(int thread)
{
	if (auto r = expect_ok("Hg" + thread_text(thread), "selecting thread"); !r)
		return r.error();
	thread_ = thread;
	return {};
}

// Qbtrace applies to the Hg thread (GDB manual, "General Query Packets").
Result<void> RspTarget::set_branch_trace(int thread, bool on)
{
	if (!features_.branch_trace)
		return Target::set_branch_trace(thread, on);
	if (auto r = select_thread(thread); !r)
		return r;
	if (auto r = expect_ok(on ? "Qbtrace:bts" : "Qbtrace:off", "branch trace"); !r)
		return r.error();
	return {};
}

// The vtice stub's records of one CPU (thread - 1), 32 bytes each.
Result<std::vector<vtice_record>> RspTarget::read_branch_trace(int thread)
{
	if (!features_.branch_trace)
		return Target::read_branch_trace(thread);
	auto data = read_xfer("vtice-trace", hex_number(static_cast<unsigned>(thread - 1)));
	if (!data)
		return data.error();
	if (data->size() % sizeof(vtice_record))
		return make_error("branch trace of thread " + std::to_string(thread) + ": " +
				  std::to_string(data->size()) + " bytes is not a whole number of records");
	std::vector<vtice_record> records(data->size() / sizeof(vtice_record));
	std::memcpy(records.data(), data->data(), data->size());
	return records;
}

// QVtice:probes (hypervisor/debug/rsp_probes.c): the kernel side's steps,
// one packet each; the module removes what is armed when one is refused.
Result<void> RspTarget::arm_probes(const vtice_probes &req)
{
	if (!features_.probes)
		return Target::arm_probes(req);
	std::string comm = to_hex(std::string(req.comm, sizeof(req.comm)));
	std::vector<std::string> packets = {"QVtice:probes:arm:" + hex_number(req.pid) + "," +
					    hex_number(req.stack_bytes) + "," +
					    hex_number((req.flags & VTICE_PROBES_MORE_REGS) ? 1 : 0) + "," + comm};
	for (std::uint32_t p = 0; p < req.nr_programs && p < VTICE_FETCH_PROGRAMS_MAX; p++)
		packets.push_back("QVtice:probes:fetch:" + hex_number(p) + ":" +
				  to_hex(std::string(reinterpret_cast<const char *>(req.fetch[p]), sizeof(req.fetch[p]))));
	for (std::uint32_t i = 0; i < req.count && i < VTICE_PROBES_MAX; i++)
		packets.push_back("QVtice:probes:add:" + hex_number(req.addrs[i]) + "," + hex_number(req.program[i]) +
				  "," + hex_number(req.stack_points >> i & 1));
	for (std::uint32_t i = 0; i < req.nr_watches && i < VTICE_PROBE_WATCHES_MAX; i++)
		packets.push_back("QVtice:probes:watch:" + hex_number(req.watch[i].addr) + "," +
				  hex_number(req.watch[i].len) + "," + hex_number(req.watch[i].type) + "," +
				  hex_number(req.stack_watches >> i & 1));
	for (const std::string &packet : packets) {
		auto reply = client_.request(packet);
		if (reply && *reply == "OK")
			continue;
		(void)expect_ok("QVtice:probes:off", "probes off");
		std::string step = packet.substr(0, packet.find(':', 14));
		if (!reply)
			return make_error(step + ": " + reply.error().message);
		if (*reply == "E10")
			return make_error(step + ": the probes are taken (E10, EBUSY): a vtice probe runs on the traced "
					  "machine itself");
		return reply_error(step.c_str(), *reply);
	}
	return {};
}

Result<std::uint64_t> RspTarget::disarm_probes()
{
	if (!features_.probes)
		return Target::disarm_probes();
	if (auto ok = expect_ok("QVtice:probes:off", "probes off"); !ok)
		return ok.error();
	return probe_hits();
}

Result<std::uint64_t> RspTarget::probe_hits()
{
	if (!features_.probes)
		return Target::probe_hits();
	return query_number("qVtice:probes");
}

Result<std::uint64_t> RspTarget::probe_passed_over()
{
	if (!features_.probes)
		return Target::probe_passed_over();
	return query_number("qVtice:probes:passed");
}

Result<std::uint64_t> RspTarget::probes_removed()
{
	if (!features_.probes)
		return Target::probes_removed();
	return query_number("qVtice:probes:removed");
}

Result<std::vector<std::uint64_t>> RspTarget::probe_counts(bool sums)
{
	if (!features_.probes)
		return Target::probe_counts(sums);
	return query_numbers(sums ? "qVtice:probes:sums" : "qVtice:probes:counts");
}

// Per address in the reply, added up: an older stub's empty reply is 0.
Result<std::uint64_t> RspTarget::probe_unreadable()
{
	if (!features_.probes)
		return Target::probe_unreadable();
	auto per_address = query_numbers("qVtice:probes:unreadable");
	if (!per_address)
		return per_address.error();
	std::uint64_t total = 0;
	for (std::uint64_t n : *per_address)
		total += n;
	return total;
}

Result<std::vector<std::uint64_t>> RspTarget::probe_hist(std::uint32_t index)
{
	if (!features_.probes)
		return Target::probe_hist(index);
	auto buckets = query_numbers("qVtice:probes:hist:" + hex_number(index));
	if (!buckets)
		return buckets.error();
	if (buckets->size() != VTICE_FETCH_HIST_BUCKETS)	// an empty reply: a stub without the packet
		return make_error("qVtice:probes:hist answered " + std::to_string(buckets->size()) + " buckets, not " +
				  std::to_string(VTICE_FETCH_HIST_BUCKETS) + ": the module's stub is older than this "
				  "console");
	return buckets;
}

// qVtice:probes:keys:I: each slot "COUNT:KEY0:KEY1", or "0" while free.
Result<std::vector<vtice_probe_key>> RspTarget::probe_keys(std::uint32_t index)
{
	if (!features_.probes)
		return Target::probe_keys(index);
	std::string packet = "qVtice:probes:keys:" + hex_number(index);
	auto reply = client_.request(packet);
	if (!reply)
		return make_error(packet + ": " + reply.error().message);
	if (reply->empty() || error_reply(*reply))
		return reply_error(packet, *reply);
	std::vector<vtice_probe_key> slots;
	for (std::string_view slot : split(*reply, ',')) {
		auto k = parse_key_slot(slot);
		if (!k)
			return reply_error(packet, *reply);
		slots.push_back(*k);
	}
	if (slots.size() != VTICE_FETCH_KEYED_SLOTS)
		return make_error(packet + " answered " + std::to_string(slots.size()) + " slots, not " +
				  std::to_string(VTICE_FETCH_KEYED_SLOTS) + ": the module's stub is older than this console");
	return slots;
}

// QVtice:syscalls:arm (hypervisor/debug/rsp_probes.c): the request's
// string slots packed as VTICE_VMCALL_SYSCALL_STRINGS takes them, four
// 16-bit ones a word, number | N << 12, then its set of syscalls
// recorded, when it chose them, as 64 bytes.
Result<void> RspTarget::arm_syscalls(const vtice_syscalls &req)
{
	if (!features_.probes)
		return Target::arm_syscalls(req);
	std::uint64_t slots[2] = {0, 0};
	for (unsigned i = 0; i < VTICE_SYSCALL_STRINGS_MAX; i++) {
		if (!req.str_arg[i])
			continue;
		if (req.str_arg[i] > VTICE_PROBE_ARGS || req.str_nr[i] >= VTICE_SYSCALL_STRING_NR_LIMIT)
			return make_error("syscall trap: string slot " + std::to_string(i) + " (syscall " +
					  std::to_string(req.str_nr[i]) + ", argument " + std::to_string(req.str_arg[i]) +
					  ") is not one the hypervisor takes");
		slots[i / 4] |= static_cast<std::uint64_t>(req.str_nr[i] | req.str_arg[i] << 12) << (16 * (i % 4));
	}
	std::string packet = "QVtice:syscalls:arm:" + hex_number(req.pid) + "," + hex_number(slots[0]) + "," +
			     hex_number(slots[1]) + "," + comm_hex(req.comm);
	if (req.flags & VTICE_SYSCALLS_CHOSEN)
		packet += "," + to_hex(std::string(reinterpret_cast<const char *>(req.nrs), sizeof(req.nrs)));
	auto reply = client_.request(packet);
	if (!reply)
		return make_error("syscall trap: " + reply.error().message);
	if (*reply == "E10")
		return make_error("syscall trap: taken (E10, EBUSY): a vtice trace or probe on the traced machine "
				  "itself owns it");
	if (*reply == "E5f")
		return make_error("syscall trap: a CPU cannot trap syscalls (E5f, EOPNOTSUPP): the hypervisor needs "
				  "the VM-entry control \"load IA32_EFER\", and with CET on \"load CET state\"");
	if (*reply != "OK")
		return reply_error("syscall trap", *reply);
	return {};
}

Result<void> RspTarget::disarm_syscalls()
{
	if (!features_.probes)
		return Target::disarm_syscalls();
	if (auto ok = expect_ok("QVtice:syscalls:off", "syscall trap off"); !ok)
		return ok.error();
	return {};
}

Result<dbg::SyscallTrapCounts> RspTarget::syscall_counts()
{
	if (!features_.probes)
		return Target::syscall_counts();
	auto numbers = query_numbers("qVtice:syscalls");
	if (!numbers)
		return numbers.error();
	if (numbers->size() != 3)
		return make_error("qVtice:syscalls answered " + std::to_string(numbers->size()) +
				  " numbers, not 3: the module's stub is older than this console");
	return dbg::SyscallTrapCounts{(*numbers)[0], (*numbers)[1], (*numbers)[2]};
}

// QVtice:profile:arm:HZ,STACK,PID,COMM (hypervisor/debug/rsp_probes.c).
Result<void> RspTarget::arm_profile(const vtice_profile &req)
{
	if (!features_.probes)
		return Target::arm_profile(req);
	std::string packet = "QVtice:profile:arm:" + hex_number(req.hz) + "," + hex_number(req.stack_bytes) + "," +
			     hex_number(req.pid) + "," + comm_hex(req.comm);
	auto reply = client_.request(packet);
	if (!reply)
		return make_error("profiler: " + reply.error().message);
	if (*reply == "E10")
		return make_error("profiler: taken (E10, EBUSY): a vtice profile or probe on the traced machine itself "
				  "owns it");
	if (*reply == "E5f")
		return make_error("profiler: this CPU has no VMX-preemption timer (E5f, EOPNOTSUPP), which the "
				  "profiler samples with");
	if (*reply == "E16")
		return make_error("profiler: the stub refused " + std::to_string(req.hz) + " Hz with " +
				  std::to_string(req.stack_bytes) + " bytes of stack (E16, EINVAL)");
	if (*reply != "OK")
		return reply_error("profiler", *reply);
	return {};
}

Result<void> RspTarget::disarm_profile()
{
	if (!features_.probes)
		return Target::disarm_profile();
	if (auto ok = expect_ok("QVtice:profile:off", "profiler off"); !ok)
		return ok.error();
	return {};
}

Result<dbg::ProfilerCounts> RspTarget::profiler_counts()
{
	if (!features_.probes)
		return Target::profiler_counts();
	auto numbers = query_numbers("qVtice:profile");
	if (!numbers)
		return numbers.error();
	if (numbers->size() != 2)
		return make_error("qVtice:profile answered " + std::to_string(numbers->size()) +
				  " numbers, not 2: the module's stub is older than this console");
	return dbg::ProfilerCounts{(*numbers)[0], (*numbers)[1]};
}

Result<std::uint64_t> RspTarget::tsc_khz()
{
	if (!features_.probes)
		return Target::tsc_khz();
	return query_number("qVtice:tsc");
}

// Hex numbers separated by commas; none for an empty reply.
Result<std::vector<std::uint64_t>> RspTarget::query_numbers(const std::string &packet)
{
	auto reply = client_.request(packet);
	if (!reply)
		return make_error(packet + ": " + reply.error().message);
	if (error_reply(*reply))	// E16 would read as the number 0xe16
		return reply_error(packet, *reply);
	std::vector<std::uint64_t> numbers;
	for (std::string_view number : split(*reply, ',')) {
		auto value = parse_hex_u64(number);
		if (!value)
			return reply_error(packet, *reply);
		numbers.push_back(*value);
	}
	return numbers;
}

Result<std::uint64_t> RspTarget::query_number(const std::string &packet)
{
	auto reply = client_.request(packet);
	if (!reply)
		return make_error(packet + ": " + reply.error().message);
	auto value = parse_hex_u64(*reply);
	if (!value)
		return reply_error(packet.c_str(), *reply);
	return *value;
}

// Read whole, then taken: a reply the line lost is read again, never lost.
Result<std::vector<vtice_record>> RspTarget::take_ring(int thread)
{
	if (!features_.probes)
		return Target::take_ring(thread);
	std::string cpu = hex_number(static_cast<unsigned>(thread - 1));
	auto data = read_xfer("vtice-ring", cpu);
	if (!data)
		return data.error();
	if (data->size() % sizeof(vtice_record))
		return make_error("ring of thread " + std::to_string(thread) + ": " + std::to_string(data->size()) +
				  " bytes is not a whole number of records");
	std::vector<vtice_record> records(data->size() / sizeof(vtice_record));
	std::memcpy(records.data(), data->data(), data->size());
	if (!records.empty())
		if (auto ok = expect_ok("QVtice:ring:consume:" + cpu + "," + hex_number(records.size()), "ring consume");
		    !ok)
			return ok.error();
	return records;
}

Result<std::string> RspTarget::monitor(const std::string &command)
{
	if (auto r = client_.send("qRcmd," + to_hex(command)); !r)
		return r.error();
	std::string output;
	for (int round = 0; round < 100000; round++) {
		auto reply = client_.receive(10000, true);
		if (!reply)
			return reply.error();
		if (!*reply)
			return make_error("monitor '" + command + "': no reply");
		const std::string &text = **reply;
		if (text == "OK")
			return output;
		if (text.size() > 1 && text[0] == 'O') {
			auto bytes = from_hex(std::string_view(text).substr(1));
			if (bytes)
				output.append(bytes->begin(), bytes->end());
			continue;
		}
		// GDB manual, qRcmd: the reply may also be the hex output itself.
		if (text[0] != 'E') {
			if (auto bytes = from_hex(text))
				return output.append(bytes->begin(), bytes->end());
		}
		return reply_error("monitor '" + command + "'", text);
	}
	return make_error("monitor '" + command + "': output does not end");
}

Result<void> RspTarget::detach()
{
	auto r = expect_ok(features_.multiprocess ? "D;1" : "D", "detach");
	if (!r)
		return r.error();
	return {};
}

}  // namespace vtice::dbg::rsp
