/* SPDX-License-Identifier: GPL-2.0 */
/* A polled 16550 UART for the debug stub in VMX root (no interrupts). */
#ifndef VT_DEBUG_UART_H
#define VT_DEBUG_UART_H

#include "../core/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vt_uart {
	u16 base;
	u32 dropped;		/* bytes not sent because the line stayed busy */
};

int vt_uart_init(struct vt_uart *u, u16 base, u32 baud);
bool vt_uart_getc(struct vt_uart *u, u8 *c);
void vt_uart_putc(struct vt_uart *u, u8 c);
void vt_uart_drain(struct vt_uart *u);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_UART_H */
