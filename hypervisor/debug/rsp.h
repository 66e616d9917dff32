/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GDB Remote Serial Protocol engine for the stub in VMX root. Portable C:
 * no VMX, no OS, no allocation. It is fed one received byte at a time and
 * emits bytes through a put_byte callback; everything it knows about the
 * machine goes through struct vt_dbg_target_ops (target.h).
 *
 * Bounded by construction: a packet longer than VT_RSP_PACKET_MAX is
 * dropped and NAKed, every hex field is length-checked, and no input makes
 * the engine wait for more than the next byte.
 */
#ifndef VT_DEBUG_RSP_H
#define VT_DEBUG_RSP_H

#include "target.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VT_RSP_PACKET_MAX	4096	/* advertised as PacketSize */

struct vt_rsp;	/* layout in rsp_engine.h, for the module's static storage */

/*
 * What vt_rsp_feed() tells its caller to do next:
 *  VT_RSP_STAY    keep feeding bytes (the machine stays stopped);
 *  VT_RSP_RESUMED the target's resume op ran: the machine runs again;
 *  VT_RSP_BREAK   while running: the debugger asked to stop (0x03 or a
 *                 first packet); the caller stops every CPU and then calls
 *                 vt_rsp_report_stop().
 */
enum vt_rsp_action { VT_RSP_STAY, VT_RSP_RESUMED, VT_RSP_BREAK };

void vt_rsp_init(struct vt_rsp *rsp, const struct vt_dbg_target_ops *ops, void *ctx,
		 void (*put_byte)(void *ctx, u8 byte));
enum vt_rsp_action vt_rsp_feed(struct vt_rsp *rsp, u8 byte, bool machine_stopped);
/* The machine has stopped: send the stop reply if a debugger waits for one. */
void vt_rsp_report_stop(struct vt_rsp *rsp, const struct vt_dbg_stop *stop);

#ifdef __cplusplus
}
#endif

#endif /* VT_DEBUG_RSP_H */
