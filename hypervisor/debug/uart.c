// SPDX-License-Identifier: GPL-2.0
/*
 * The 16550 the stub owns. Register layout and bits as in the National
 * Semiconductor PC16550D data sheet: THR/RBR at +0, IER +1, FCR +2, LCR
 * +3, MCR +4, LSR +5, SCR +7; divisor latch at +0/+1 while LCR.DLAB = 1.
 * Polled only: interrupts stay off so nothing reaches the guest's IDT.
 */
#include "uart.h"
#include "../core/intrin.h"

#define UART_THR	0
#define UART_RBR	0
#define UART_DLL	0
#define UART_IER	1
#define UART_DLM	1
#define UART_FCR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_SCR	7

#define UART_LCR_8N1	0x03
#define UART_LCR_DLAB	0x80
#define UART_FCR_ON	0x07	/* enable and clear both FIFOs */
#define UART_MCR_DTR_RTS 0x03	/* OUT2 clear: the IRQ line stays off */
#define UART_LSR_DR	0x01	/* a byte is waiting */
#define UART_LSR_THRE	0x20	/* the transmitter takes a byte */
#define UART_LSR_TEMT	0x40	/* the FIFO and the shift register are empty */

#define UART_CLOCK_DIV	115200u
/* ~100 ms at any speed the emulators and hardware run PAUSE at. */
#define UART_TX_SPINS	2000000u

/* The scratch register keeps what was written only if a UART is there. */
static bool vt_uart_present(u16 base)
{
	vt_outb(base + UART_SCR, 0x5a);
	if (vt_inb(base + UART_SCR) != 0x5a)
		return false;
	vt_outb(base + UART_SCR, 0xa5);
	return vt_inb(base + UART_SCR) == 0xa5;
}

int vt_uart_init(struct vt_uart *u, u16 base, u32 baud)
{
	u32 div;

	if (!baud || baud > UART_CLOCK_DIV || UART_CLOCK_DIV % baud)
		return -VT_EINVAL;	/* not a divisor of 115200 */
	if (!vt_uart_present(base))
		return -VT_ENODEV;
	div = UART_CLOCK_DIV / baud;
	u->base = base;
	u->dropped = 0;
	vt_outb(base + UART_IER, 0);
	vt_outb(base + UART_LCR, UART_LCR_DLAB);
	vt_outb(base + UART_DLL, div & 0xff);
	vt_outb(base + UART_DLM, (div >> 8) & 0xff);
	vt_outb(base + UART_LCR, UART_LCR_8N1);
	vt_outb(base + UART_FCR, UART_FCR_ON);
	vt_outb(base + UART_MCR, UART_MCR_DTR_RTS);
	return 0;
}

bool vt_uart_getc(struct vt_uart *u, u8 *c)
{
	if (!(vt_inb(u->base + UART_LSR) & UART_LSR_DR))
		return false;
	*c = vt_inb(u->base + UART_RBR);
	return true;
}

/* Bounded: a line nobody drains must not hold VMX root forever. */
void vt_uart_putc(struct vt_uart *u, u8 c)
{
	u32 spins;

	for (spins = 0; spins < UART_TX_SPINS; spins++) {
		if (vt_inb(u->base + UART_LSR) & UART_LSR_THRE) {
			vt_outb(u->base + UART_THR, c);
			return;
		}
		vt_pause();
	}
	u->dropped++;
}

/*
 * Bounded like putc: wait until the last byte written has left the wire.
 * A reply the FIFO still holds is lost if the machine resets under it.
 */
void vt_uart_drain(struct vt_uart *u)
{
	u32 spins;

	for (spins = 0; spins < UART_TX_SPINS; spins++) {
		if (vt_inb(u->base + UART_LSR) & UART_LSR_TEMT)
			return;
		vt_pause();
	}
}
