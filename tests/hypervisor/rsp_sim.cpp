// vtice-rsp-sim: the hypervisor stub's RSP engine (hypervisor/debug/rsp*.c,
// the very C the module runs) served on a TCP port over a fake machine
// (rsp_fake_machine.hpp), so that real gdb can be its client in a test.
//
//   vtice-rsp-sim PORT     serve one connection, then exit
//
// The machine "runs" after each resume until an event: a step ends after
// one NOP, a continue reaches the lowest software breakpoint above CPU 0's
// RIP, else writes the first watchpoint's bytes, else runs until 0x03.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "rsp_fake_machine.hpp"

using vtice::fake::FakeMachine;

namespace {

int g_fd = -1;

void put_byte(void *, u8 b)
{
	if (write(g_fd, &b, 1) != 1)
		std::exit(0);	// gdb went away
}

// Where the fake machine stops after a resume, or false: it keeps running.
bool next_event(FakeMachine &m, vt_dbg_stop *stop)
{
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
	if (argc != 2 || std::atoi(argv[1]) <= 0) {
		std::fprintf(stderr, "usage: vtice-rsp-sim PORT\n"
				     "Serves the hypervisor stub's RSP engine over a fake 2-CPU "
				     "machine on 127.0.0.1:PORT, for one connection.\n");
		return 2;
	}
	int s = listen_on(std::atoi(argv[1]));
	std::printf("listening\n");
	std::fflush(stdout);
	g_fd = accept(s, nullptr, nullptr);
	static FakeMachine m;
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
	}
	return 0;
}
