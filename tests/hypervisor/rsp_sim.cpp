// vtice-rsp-sim: the hypervisor stub's RSP engine (hypervisor/debug/rsp*.c,
// the very C the module runs) served on a TCP port over a fake machine
// (rsp_fake_machine.hpp), so that real gdb can be its client in a test.
//
//   vtice-rsp-sim PORT [SCRIPT]     serve one connection, then exit
//
// The machine "runs" after each resume until an event: a step ends after
// one NOP, a continue reaches the lowest software breakpoint above CPU 0's
// RIP, else writes the first watchpoint's bytes, else runs until 0x03.
//
// A SCRIPT gives CPU 0 real code and a branch trace, for gdb's record
// btrace; one directive a line, addresses in hex, '#' starts a comment:
//   code FILE          raw bytes put at kTextBase (objcopy -O binary)
//   pc ADDR            CPU 0's RIP when gdb connects
//   run ADDR           a continue while CPU 0 is traced ends here ...
//   branch FROM TO [async]   ... and the tracer recorded these, in order
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "rsp_fake_machine.hpp"

using vtice::fake::FakeMachine;

namespace {

int g_fd = -1;

// What the SCRIPT says CPU 0 does between a Qbtrace:bts and the next stop.
struct Script {
	bool loaded = false;
	uint64_t run_to = 0;
	std::vector<vtice_record> records;
} g_script;

[[noreturn]] void script_error(const std::string &path, int line, const std::string &why)
{
	std::fprintf(stderr, "vtice-rsp-sim: %s:%d: %s\n", path.c_str(), line, why.c_str());
	std::exit(2);
}

void load_script(FakeMachine &m, const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		script_error(path, 0, "cannot open");
	std::string text;
	int n = 0;
	while (std::getline(in, text)) {
		n++;
		std::istringstream line(text.substr(0, text.find('#')));
		std::string what, arg;
		if (!(line >> what))
			continue;
		if (what == "code") {
			line >> arg;
			std::ifstream f(arg, std::ios::binary);
			std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
			if (!f && !f.eof())
				script_error(path, n, "cannot read " + arg);
			if (bytes.empty() || bytes.size() > FakeMachine::kTextSize)
				script_error(path, n, arg + ": empty or larger than the fake text");
			std::copy(bytes.begin(), bytes.end(), m.text.begin());
			continue;
		}
		uint64_t a = 0, b = 0;
		if (!(line >> std::hex >> a))
			script_error(path, n, "expected an address after " + what);
		if (what == "pc") {
			m.regs[0].rip = a;
		} else if (what == "run") {
			g_script.run_to = a;
			g_script.loaded = true;
		} else if (what == "branch" && line >> std::hex >> b) {
			vtice_record r{};
			r.type = VTICE_REC_BRANCH;
			r.flags = VTICE_BRANCH_FROM_STEP;
			if (line >> arg && arg == "async")
				r.flags |= VTICE_BRANCH_ASYNC;
			r.tsc = g_script.records.size() + 1;
			r.u.branch.from = a;
			r.u.branch.to = b;
			g_script.records.push_back(r);
		} else {
			script_error(path, n, "unknown directive or missing address: " + text);
		}
	}
}

// A continue of traced CPU 0: the script's run, as the tracer saw it.
bool scripted_run(FakeMachine &m, vt_dbg_stop *stop)
{
	if (!g_script.loaded || !m.tracing[0] || m.last_run.empty() || m.last_run[0] != VT_RUN_CONTINUE)
		return false;
	m.trace[0] = g_script.records;
	m.first_ip[0] = m.regs[0].rip;
	m.last_ip[0] = g_script.run_to;
	m.regs[0].rip = g_script.run_to;
	bool bp = m.points.count({VT_POINT_SW, g_script.run_to, 1}) != 0;
	*stop = {0, bp ? VT_STOP_SWBREAK : VT_STOP_SIGINT, 0};
	g_script.loaded = false;	// once: the next continue runs NOPs
	return true;
}

std::string g_reply;	// the engine's bytes, sent once it has consumed a byte

void put_byte(void *, u8 b)
{
	g_reply += (char)b;
}

// One write per reply, not per byte: with Nagle's algorithm and delayed ACKs
// a byte-at-a-time reply costs gdb ~40 ms a packet.
void flush()
{
	if (!g_reply.empty() && write(g_fd, g_reply.data(), g_reply.size()) != (ssize_t)g_reply.size())
		std::exit(0);	// gdb went away
	g_reply.clear();
}

// Where the fake machine stops after a resume, or false: it keeps running.
bool next_event(FakeMachine &m, vt_dbg_stop *stop)
{
	if (scripted_run(m, stop))
		return true;
	for (uint32_t c = 0; c < FakeMachine::kCpus; c++)
		if (c < m.last_run.size() && m.last_run[c] == VT_RUN_STEP) {
			m.regs[c].rip += 1;
			*stop = {c, VT_STOP_STEP, 0};
			return true;
		}
	uint64_t best = 0;
	for (auto &[type, addr, len] : m.points)
		if (type == VT_POINT_SW && addr > m.regs[0].rip && (!best || addr < best))
			best = addr;
	if (best) {
		m.regs[0].rip = best;
		*stop = {0, VT_STOP_SWBREAK, 0};
		return true;
	}
	for (auto &[type, addr, len] : m.points)
		if (type >= VT_POINT_WRITE) {
			m.regs[0].rip += 1;
			(*m.byte(addr))++;	// the "instruction" wrote the watched bytes
			*stop = {0, type == VT_POINT_WRITE ? VT_STOP_WATCH :
				 type == VT_POINT_READ ? VT_STOP_RWATCH : VT_STOP_AWATCH, addr};
			return true;
		}
	return false;
}

int listen_on(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (sockaddr *)&a, sizeof(a)) || listen(s, 1)) {
		std::perror("vtice-rsp-sim: bind/listen");
		std::exit(1);
	}
	return s;
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || std::atoi(argv[1]) <= 0) {
		std::fprintf(stderr, "usage: vtice-rsp-sim PORT [SCRIPT]\n"
				     "Serves the hypervisor stub's RSP engine over a fake 2-CPU "
				     "machine on 127.0.0.1:PORT, for one connection.\n");
		return 2;
	}
	static FakeMachine m;
	if (argc == 3)
		load_script(m, argv[2]);
	int s = listen_on(std::atoi(argv[1]));
	std::printf("listening\n");
	std::fflush(stdout);
	g_fd = accept(s, nullptr, nullptr);
	static vt_rsp rsp;
	vt_rsp_init(&rsp, &FakeMachine::ops, &m, put_byte);
	bool stopped = false;
	u8 b;
	while (read(g_fd, &b, 1) == 1) {
		vt_rsp_action act = vt_rsp_feed(&rsp, b, stopped);
		vt_dbg_stop stop{0, VT_STOP_SIGINT, 0};
		if (act == VT_RSP_BREAK) {
			stopped = true;
			vt_rsp_report_stop(&rsp, &stop);
		} else if (act == VT_RSP_RESUMED) {
			stopped = next_event(m, &stop);
			if (stopped)
				vt_rsp_report_stop(&rsp, &stop);
		}
		flush();
	}
	return 0;
}
