// libFuzzer target for the hypervisor stub's RSP engine (hypervisor/debug/
// rsp*.c), the code that parses whatever arrives on the serial line in VMX
// root. Arbitrary bytes are fed with the machine alternately running and
// stopped, as the stub does; every byte the engine emits must belong to a
// well-formed reply ('+', '-' or $body#checksum with the right checksum),
// and AddressSanitizer catches any access outside its buffers.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "../hypervisor/rsp_fake_machine.hpp"

namespace {

std::string g_out;

void check_output(const std::string &out)
{
	size_t i = 0;
	while (i < out.size()) {
		if (out[i] == '+' || out[i] == '-') {
			i++;
			continue;
		}
		if (out[i] != '$')
			std::abort();
		size_t hash = out.find('#', i);
		if (hash == std::string::npos || hash + 2 >= out.size())
			std::abort();
		unsigned sum = 0;
		for (size_t k = i + 1; k < hash; k++)
			sum += (unsigned char)out[k];
		unsigned want = std::strtoul(out.substr(hash + 1, 2).c_str(), nullptr, 16);
		if ((sum & 0xff) != want)
			std::abort();
		i = hash + 3;
	}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static vtice::fake::FakeMachine *m;
	static vt_rsp rsp;
	delete m;
	m = new vtice::fake::FakeMachine();
	m->ring[0].resize(2);	// records for qXfer:vtice-ring to read and QVtice:ring:consume to take
	g_out.clear();
	vt_rsp_init(&rsp, &vtice::fake::FakeMachine::ops, m, [](void *, u8 b) { g_out += (char)b; });
	bool stopped = size && (data[0] & 1);
	for (size_t i = 1; i < size; i++) {
		vt_rsp_action a = vt_rsp_feed(&rsp, data[i], stopped);
		if (a == VT_RSP_BREAK) {
			stopped = true;
			vt_dbg_stop stop{(u32)(data[i] & 1), (vt_dbg_stop_reason)(data[i] % 8),
					 0xffff888000100000ull};
			vt_rsp_report_stop(&rsp, &stop);
		} else if (a == VT_RSP_RESUMED) {
			stopped = false;
		}
	}
	check_output(g_out);
	return 0;
}
