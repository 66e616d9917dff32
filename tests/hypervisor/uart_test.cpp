// The stub's polled 16550 (hypervisor/debug/uart.c) on the fake CPU's
// ports, checked against the PC16550D register map: divisor latch behind
// LCR.DLAB, 8N1, interrupts off, LSR.DR/THRE/TEMT handshakes.
#include <gtest/gtest.h>

#include "fake_cpu.hpp"

extern "C" {
#include "../../hypervisor/debug/uart.h"
}

using namespace vtice::fake;

namespace {

constexpr uint16_t kBase = 0x2f8;

// A UART is there when its scratch register keeps what is written.
void seed_scratch_echo()
{
	cpu().port_in[kBase + 7] = {0x5a, 0xa5};
}

TEST(Uart, ProgramsDivisor8N1AndNoInterrupts)
{
	reset();
	seed_scratch_echo();
	vt_uart u{};
	ASSERT_EQ(vt_uart_init(&u, kBase, 9600), 0);
	std::vector<std::pair<uint16_t, uint8_t>> want = {
		{kBase + 7, 0x5a}, {kBase + 7, 0xa5},	// the presence probe
		{kBase + 1, 0x00},			// IER: no interrupts
		{kBase + 3, 0x80},			// DLAB
		{kBase + 0, 12}, {kBase + 1, 0},	// 115200 / 9600
		{kBase + 3, 0x03},			// 8N1, DLAB off
		{kBase + 2, 0x07},			// FIFOs on and cleared
		{kBase + 4, 0x03},			// DTR RTS, OUT2 off
	};
	EXPECT_EQ(cpu().port_out, want);
}

TEST(Uart, RefusesAMissingUartAndABadSpeed)
{
	reset();
	vt_uart u{};
	EXPECT_EQ(vt_uart_init(&u, kBase, 115200), -VT_ENODEV) << "floating bus reads 0xff";
	seed_scratch_echo();
	EXPECT_EQ(vt_uart_init(&u, kBase, 100000), -VT_EINVAL);
	EXPECT_EQ(vt_uart_init(&u, kBase, 0), -VT_EINVAL);
}

TEST(Uart, ReadsOnlyWhenDataReady)
{
	reset();
	vt_uart u{kBase, 0};
	uint8_t c = 0;
	cpu().port_in[kBase + 5] = {0x60};	// THRE|TEMT, no DR
	EXPECT_FALSE(vt_uart_getc(&u, &c));
	cpu().port_in[kBase + 5] = {0x61};
	cpu().port_in[kBase + 0] = {'$'};
	ASSERT_TRUE(vt_uart_getc(&u, &c));
	EXPECT_EQ(c, '$');
}

TEST(Uart, SendsWhenTheTransmitterIsFreeAndGivesUpOnADeadLine)
{
	reset();
	vt_uart u{kBase, 0};
	cpu().port_in[kBase + 5] = {0x00, 0x00, 0x20};
	vt_uart_putc(&u, '+');
	ASSERT_EQ(cpu().port_out.size(), 1u);
	EXPECT_EQ(cpu().port_out[0], std::make_pair(uint16_t(kBase), uint8_t('+')));
	// A line nobody drains: THRE never comes back.
	cpu().port_out.clear();
	cpu().port_in[kBase + 5] = std::deque<uint8_t>(3000000, 0x00);
	vt_uart_putc(&u, 'x');
	EXPECT_TRUE(cpu().port_out.empty());
	EXPECT_EQ(u.dropped, 1u);
}

TEST(Uart, DrainWaitsForTheLastBitToLeaveAndGivesUpOnADeadLine)
{
	reset();
	vt_uart u{kBase, 0};
	// THRE alone means the FIFO took the byte, not that it has been sent.
	cpu().port_in[kBase + 5] = {0x20, 0x20, 0x60, 0x00};
	vt_uart_drain(&u);
	EXPECT_EQ(cpu().port_in[kBase + 5].size(), 1u) << "stopped at the first TEMT";
	cpu().port_in[kBase + 5] = std::deque<uint8_t>(3000000, 0x20);
	vt_uart_drain(&u);
	EXPECT_FALSE(cpu().port_in[kBase + 5].empty()) << "a stuck shift register does not hold root forever";
}

}  // namespace
