/* SPDX-License-Identifier: GPL-2.0 */
/* Running `vtice` from the guest client, and what an armed trap costs. */
#ifndef VTICE_BOCHS_SPAWN_H
#define VTICE_BOCHS_SPAWN_H

#include <sys/types.h>

#define VTICE_BIN	"/bin/vtice"
#define UNTRACED_CALLS	20000

/*
 * /bin/vtice with args (args[0] = "vtice", NULL-terminated), stderr to
 * err_path, on CPU 1 when there is one: measure_getpid() runs on CPU 0.
 */
pid_t spawn_vtice(const char *err_path, const char *const args[]);
/* The same, its reader pinned to cpu (spawn_vtice: CPU 1). */
pid_t spawn_vtice_on(const char *err_path, const char *const args[], int cpu);
/* spawn_vtice with its stdout to path too. */
pid_t spawn_vtice_all(const char *path, const char *const args[]);
/* ...its reader pinned to cpu. */
pid_t spawn_vtice_all_on(const char *path, const char *const args[], int cpu);
/* The first len - 1 bytes of a file, NUL-terminated ("" when unreadable). */
void read_text(const char *path, char *out, size_t len);
/* vtice said "armed on N CPUs" within max_s seconds, and still runs. */
int wait_armed(pid_t trace, const char *err_path, int max_s);
/* `vtice probe` said it armed everything, within max_s seconds. */
int wait_probe_armed(pid_t probe, const char *err_path, int max_s);
/* After the console's next polls: SIGINT, its stderr printed; 0 when it exited 0. */
int stop_probe(pid_t probe, const char *err_path);
/* The number after key ("\"lost\":") in a line of `vtice probe -o`'s JSON, or -1 when absent. */
long json_number(const char *line, const char *key);

struct getpid_cost {
	double exits, tsc;	/* per getpid */
};

/*
 * UNTRACED_CALLS getpid on CPU 0: CPU 0's VM exits and TSC per call (what
 * other CPUs' tasks cost is not this loop's); -1 without counts.
 */
int measure_getpid(struct getpid_cost *c);

#endif
