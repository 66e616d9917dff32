/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layout of the RSP engine's state (rsp.h), public only so the module can
 * keep it in static storage: nothing in it is for the caller to touch.
 */
#ifndef VT_DEBUG_RSP_ENGINE_H
#define VT_DEBUG_RSP_ENGINE_H

#include "rsp.h"

#define VT_RSP_MAX_CPUS		256	/* threads the engine can name */
#define VT_RSP_MONITOR_MAX	1024	/* monitor command output, NUL included */

enum vt_rsp_state {
	VT_RSP_IDLE,		/* between packets: '+', '-', 0x03 or '$' */
	VT_RSP_DATA,		/* after '$', up to '#' */
	VT_RSP_CSUM_HI,		/* first checksum digit */
	VT_RSP_CSUM_LO,
};

struct vt_rsp {
	const struct vt_dbg_target_ops *ops;
	void *ctx;
	void (*put_byte)(void *ctx, u8 byte);

	enum vt_rsp_state state;
	u8 in[VT_RSP_PACKET_MAX];	/* the packet being received, raw */
	u32 in_len;
	bool in_overflow;
	u8 in_sum, csum_hi;

	u8 out[VT_RSP_PACKET_MAX];	/* the reply, body only, kept for '-' */
	u32 out_len;
	bool out_overflow;

	bool no_ack;		/* QStartNoAckMode accepted */
	bool stop_wanted;	/* the debugger waits for a stop reply */
	bool have_stop;
	struct vt_dbg_stop last_stop;
	s32 g_cpu;		/* Hg: registers and memory of this CPU */
	s32 c_cpu;		/* Hc: the CPU s/c act on; -1 = all */
	u32 thread_cursor;	/* qsThreadInfo */
	/*
	 * qXfer:btrace:read "new": each CPU's trace as last served (records + 1,
	 * 0 = never; and where it ended), and whether the "new" read under way
	 * found it unchanged.
	 */
	u64 btrace_seen[VT_RSP_MAX_CPUS];
	u64 btrace_seen_ip[VT_RSP_MAX_CPUS];
	bool btrace_new_unchanged;
	enum vt_dbg_run run[VT_RSP_MAX_CPUS];
	u8 scratch[VT_RSP_PACKET_MAX];	/* memory and register transfers */
	char monitor[VT_RSP_MONITOR_MAX];
};

#endif /* VT_DEBUG_RSP_ENGINE_H */
