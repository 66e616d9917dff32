/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Markers the guest test client prints on the serial console. The host
 * checker (tests/bochs/check.sh) parses exactly these forms:
 *   VTICE-TEST <name> PASS|FAIL|SKIP <details>
 *   VTICE-FIGURE <test>.<key>=<value>
 */
#ifndef VTICE_BOCHS_REPORT_H
#define VTICE_BOCHS_REPORT_H

#include <elf.h>
#include <stdint.h>

enum outcome { PASS = 0, FAIL = 1, SKIP = 77 };

/* Prints one VTICE-TEST line and returns the outcome as an exit code. */
int report(const char *name, enum outcome outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prints "VTICE-FIGURE <test>.<key>=<value>". */
void figure_named(const char *test, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int online_cpus(void);
/* kmem.c: a symbol's address from /proc/kallsyms; len bytes at addr read
 * through /proc/kcore. 0 or -1. */
int ksym_lookup(const char *name, uint64_t *addr);
int kcore_read(uint64_t addr, uint8_t *buf, size_t len);
/* Calls each(fd, ph, ctx) for the PT_LOAD segments of /proc/kcore open on
 * fd until one returns nonzero: that value; -1 if kcore cannot be read. */
int kcore_each_segment(int fd, int (*each)(int fd, const Elf64_Phdr *ph, void *ctx), void *ctx);
/* trace.c: value written to /sys/kernel/tracing/FILE; 0 or -1. */
int tracefs_write(const char *file, const char *value);
int pin_to_cpu(int cpu);
uint64_t now_ns(void);
uint64_t rdtsc(void);

/* Subcommands: argv[0] is the test name the markers carry. */
int cmd_cpuid(int argc, char **argv);
int cmd_oracle(int argc, char **argv);
int cmd_modallocs(int argc, char **argv);
int cmd_modtext(int argc, char **argv);
int cmd_keyscan(int argc, char **argv);
int cmd_user_probe(int argc, char **argv);
int cmd_hwbp_settle(int argc, char **argv);
int cmd_vmcall(int argc, char **argv);
int cmd_msr(int argc, char **argv);
int cmd_getpid(int argc, char **argv);
int cmd_stress(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_devnode(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);
int cmd_ring(int argc, char **argv);
int cmd_kcore(int argc, char **argv);
int cmd_kwatch(int argc, char **argv);
int cmd_com2(int argc, char **argv);
int cmd_gdbwire(int argc, char **argv);
int cmd_ftrace_openat(int argc, char **argv);
int cmd_openat_loop(int argc, char **argv);
int cmd_move_loop(int argc, char **argv);
int cmd_nap(int argc, char **argv);
int cmd_heartbeat(int argc, char **argv);
int cmd_probe_addr(int argc, char **argv);
int cmd_openat_cost(int argc, char **argv);
int cmd_syscalls(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_probe_kstack(int argc, char **argv);
int cmd_probe_tail(int argc, char **argv);
int cmd_probe_smc(int argc, char **argv);
int cmd_probe_keys(int argc, char **argv);
int cmd_probe_str(int argc, char **argv);
int cmd_probe_sysargs(int argc, char **argv);
int cmd_probe_ret(int argc, char **argv);
int cmd_probe_watch(int argc, char **argv);
int cmd_probe_fetch(int argc, char **argv);
int cmd_probe_module(int argc, char **argv);
int cmd_stealth(int argc, char **argv);
int cmd_path_cost(int argc, char **argv);
int cmd_path_kill(int argc, char **argv);
int cmd_timer_load(int argc, char **argv);
int cmd_tscgap(int argc, char **argv);

#endif
