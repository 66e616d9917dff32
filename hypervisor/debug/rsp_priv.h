/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the RSP engine's files (rsp*.c); not an interface. */
#ifndef VT_DEBUG_RSP_PRIV_H
#define VT_DEBUG_RSP_PRIV_H

#include "rsp_engine.h"

/* A packet's body being parsed: a cursor that never runs past the end. */
struct vt_rsp_cursor {
	const u8 *p, *end;
};

/* rsp_text.c: parsing and formatting */
int vt_rsp_hex_digit(u8 c);
bool vt_rsp_parse_hex(struct vt_rsp_cursor *c, u64 *value);	/* 1-16 digits */
bool vt_rsp_expect(struct vt_rsp_cursor *c, u8 ch);
bool vt_rsp_prefix(struct vt_rsp_cursor *c, const char *s);	/* consumes it */
bool vt_rsp_at_end(const struct vt_rsp_cursor *c);
/* Decodes pairs of hex digits into out; false on odd length or bad digits. */
bool vt_rsp_unhex(struct vt_rsp_cursor *c, u8 *out, u32 max, u32 *len);
/* Exactly n bytes (2n hex digits) at the cursor, past them; what follows is the caller's. */
bool vt_rsp_unhex_exact(struct vt_rsp_cursor *c, u8 *out, u32 n);

void vt_rsp_reply_reset(struct vt_rsp *r);
void vt_rsp_put(struct vt_rsp *r, const char *s);
void vt_rsp_put_raw(struct vt_rsp *r, const void *data, u32 len);
void vt_rsp_put_hex_bytes(struct vt_rsp *r, const void *data, u32 len);
void vt_rsp_put_hex(struct vt_rsp *r, u64 value);		/* minimal digits */
void vt_rsp_put_le(struct vt_rsp *r, u64 value, u32 bytes);	/* target order */
void vt_rsp_put_unavailable(struct vt_rsp *r, u32 bytes);	/* "xx" per byte */
void vt_rsp_error(struct vt_rsp *r, u32 code);			/* "Enn" */
/* Binary data in a reply (qXfer): '#', '$', '}' and '*' escaped. */
void vt_rsp_put_escaped(struct vt_rsp *r, const u8 *p, u32 len);

/* Thread ids are CPU + 1; 0 and -1 mean "any"/"all" (-1 returned). */
bool vt_rsp_parse_thread(struct vt_rsp_cursor *c, s32 *cpu);
bool vt_rsp_cpu_ok(struct vt_rsp *r, s32 cpu);
u32 vt_rsp_cpus(struct vt_rsp *r);
/* The CPU Hg chose, or the one that stopped when Hg named none that is online. */
s32 vt_rsp_general_cpu(struct vt_rsp *r);

/* Handlers by family; each fills the reply and returns the action. */
enum vt_rsp_action vt_rsp_query(struct vt_rsp *r, struct vt_rsp_cursor *c);	/* q, Q */
void vt_rsp_regs(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c);		/* g G p P */
void vt_rsp_mem(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c);		/* m M X */
void vt_rsp_points(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c);	/* Z z */
enum vt_rsp_action vt_rsp_run(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c); /* c s v D k */
void vt_rsp_threads(struct vt_rsp *r, u8 cmd, struct vt_rsp_cursor *c);	/* H T */
void vt_rsp_stop_reply(struct vt_rsp *r, const struct vt_dbg_stop *stop);

/*
 * qXfer reads (rsp_query.c): "OFF,LEN" to the end of the packet, LEN cut to
 * what a reply holds (E16 when malformed); then the reply's start for
 * [off, off + *len) of an object of `size` bytes: 'l' alone past its end
 * (false), else 'm' or 'l' with *len cut to the object (true).
 */
bool vt_rsp_xfer_window(struct vt_rsp *r, struct vt_rsp_cursor *c, u64 *off, u64 *len);
bool vt_rsp_xfer_begin(struct vt_rsp *r, u64 size, u64 off, u64 *len);
/*
 * The reply to a qXfer read of count records (vtice_record, escaped),
 * fetched one by one with read (E0e when one cannot be).
 */
typedef bool (*vt_rsp_record_fn)(void *ctx, u32 cpu, u64 index, struct vtice_record *out);
void vt_rsp_xfer_records(struct vt_rsp *r, u32 cpu, u64 count, vt_rsp_record_fn read, u64 off, u64 len);

/* rsp_btrace.c: Qbtrace and the qXfer objects of the branch trace; false: not one. */
bool vt_rsp_btrace(struct vt_rsp *r, struct vt_rsp_cursor *c);

/* rsp_probes.c: the probes' packets and the rings' (QVtice, qVtice); false: not one. */
bool vt_rsp_probes(struct vt_rsp *r, struct vt_rsp_cursor *c);

/* rsp_xml.c */
const char *vt_rsp_target_xml(u32 *len);

#endif /* VT_DEBUG_RSP_PRIV_H */
