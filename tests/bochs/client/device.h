/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/vtice access shared by the client's checks. */
#ifndef VTICE_BOCHS_DEVICE_H
#define VTICE_BOCHS_DEVICE_H

#include <stdint.h>

#include <vtice/ioctl.h>

#define VTICE_DEV "/dev/" VTICE_DEVICE_NAME

/* Basic exit reasons (SDM Vol. 3D, Appendix C) the checks look for. */
#define EXIT_REASON_CPUID	10

/* Opens /dev/vtice read-write; -errno on failure. */
int open_vtice(void);
/* Fill in size and version and issue the ioctl; -errno on failure. */
int vtice_status(int fd, struct vtice_status *st);
int vtice_cpu_stats(int fd, uint32_t cpu, struct vtice_cpu_stats *cs);
int vtice_emit_test(int fd, uint32_t cpu, uint32_t count, uint64_t value,
		    struct vtice_emit_test *out);

/* Sum of VM exits over all CPUs from the status ioctl, -1 if unavailable. */
int64_t total_exits(void);
/* One CPU's VM exits so far through an open /dev/vtice, -1 if unreadable. */
int64_t cpu_exits(int fd, int cpu);

#endif
