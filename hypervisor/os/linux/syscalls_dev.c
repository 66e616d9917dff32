// SPDX-License-Identifier: GPL-2.0
/*
 * VTICE_IOC_SYSCALLS: syscall events on every online CPU (core/syscall_trap.h);
 * VTICE_IOC_PATH_TRACE: the syscall-path tracer (debug/path_trace.h) on the
 * same trap, armed quietly. One open file of /dev/vtice owns the trap at a
 * time, for either; its close disarms it, so a tracer that dies leaves no
 * CPU trapping or tracing.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/smp.h>

#include <vtice/ioctl.h>
#include <vtice/vmcall.h>
#include "vtice_linux.h"
#include "../../debug/path_trace.h"

static DEFINE_MUTEX(vt_sys_lock);
static struct file *vt_sys_owner;	/* under vt_sys_lock */
static u32 vt_sys_cpus;			/* CPUs armed, under vt_sys_lock */
static bool vt_sys_path;		/* the owner traces paths, under vt_sys_lock */

struct vt_sys_call {
	bool on, quiet;
	u32 pid;
	char comm[16];
	atomic_t done, failed;
};

/* On each CPU (IPI, interrupts off): the VMCALL into its hypervisor. */
static void vt_syscalls_on_cpu(void *data)
{
	struct vt_sys_call *c = data;
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());

	if (vcpu && vt_vcpu_syscalls(vcpu, c->on, c->quiet, c->pid, c->comm) == VTICE_VMCALL_OK)
		atomic_inc(&c->done);
	else
		atomic_inc(&c->failed);
}

static void vt_syscalls_everywhere(struct vt_sys_call *c)
{
	atomic_set(&c->done, 0);
	atomic_set(&c->failed, 0);
	cpus_read_lock();
	on_each_cpu(vt_syscalls_on_cpu, c, 1);
	cpus_read_unlock();
}

/*
 * The path tracer's VMCALL, on whichever CPU this runs (its state is
 * global): the VMCALL status as an errno.
 */
static int vt_path_vmcall(u32 op, const struct vtice_path_trace *req, u64 *traced)
{
	struct vt_vcpu *vcpu;
	u64 status = VTICE_VMCALL_ENOSYS;
	int cpu = get_cpu();

	vcpu = vt_linux_launched_vcpu(cpu);
	if (vcpu)
		status = vt_vcpu_path_trace(vcpu, op, req ? req->nr : 0, req ? req->max_insns : 0,
					    req ? req->calls | (req->flags & VTICE_PATH_RECORD ?
								VTICE_VMCALL_PATH_RECORD : 0) : 0,
					    traced);
	put_cpu();
	if (status == VTICE_VMCALL_OK)
		return 0;
	return status == (u64)VTICE_VMCALL_EBUSY ? -EBUSY :
	       status == (u64)VTICE_VMCALL_EINVAL ? -EINVAL : -EOPNOTSUPP;
}

/* The trap first, so no CPU still hands a SYSCALL to a disarmed tracer. */
static void vt_syscalls_disarm_locked(void)
{
	struct vt_sys_call c = { .on = false };

	vt_syscalls_everywhere(&c);
	if (vt_sys_path)
		vt_path_vmcall(VTICE_VMCALL_PATH_DISARM, NULL, NULL);
	vt_switch_trigger_remove();	/* no call is traced any more */
	vt_sys_owner = NULL;
	vt_sys_cpus = 0;
	vt_sys_path = false;
}

/*
 * The request's string slots as VTICE_VMCALL_SYSCALL_STRINGS takes them
 * (vmcall.h): four 16-bit slots a word, number | N << 12.
 */
static int vt_syscall_strings_pack(const struct vtice_syscalls *req, u64 slots[2])
{
	u32 i, j;

	BUILD_BUG_ON(VTICE_SYSCALL_STRINGS_MAX != VT_SYS_STRING_SLOTS);
	BUILD_BUG_ON(VTICE_SYSCALL_STRING_NR_LIMIT != 1 << 12);
	slots[0] = slots[1] = 0;
	for (i = 0; i < VTICE_SYSCALL_STRINGS_MAX; i++) {
		if (!req->str_arg[i])
			continue;
		if (req->str_arg[i] > VTICE_PROBE_ARGS || req->str_nr[i] >= VTICE_SYSCALL_STRING_NR_LIMIT)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (req->str_arg[j] && req->str_nr[j] == req->str_nr[i])
				return -EINVAL;
		slots[i / 4] |= (u64)(req->str_nr[i] | req->str_arg[i] << 12) << (16 * (i % 4));
	}
	return 0;
}

/* The set's words, or (numbers NULL) every syscall: VTICE_VMCALL_SYSCALL_NUMBERS's calls. */
static u64 vt_syscall_numbers_vmcall(struct vt_vcpu *vcpu, const u64 *numbers)
{
	u64 status = VTICE_VMCALL_OK;
	u32 w;

	BUILD_BUG_ON(VTICE_SYSCALL_NR_WORDS != VT_SYS_NR_WORDS);
	if (!numbers)
		return vt_vcpu_syscall_numbers(vcpu, VTICE_VMCALL_SYSCALL_NUMBERS_ALL, 0);
	for (w = 0; w < VTICE_SYSCALL_NR_WORDS && status == VTICE_VMCALL_OK; w++)
		status = vt_vcpu_syscall_numbers(vcpu, w, numbers[w]);
	return status;
}

/* Root's tables are shared by every CPU: their VMCALLs, on this one. */
static int vt_syscall_tables_vmcall(const u64 slots[2], const u64 *numbers)
{
	struct vt_vcpu *vcpu;
	u64 status = VTICE_VMCALL_ENOSYS;
	int cpu = get_cpu();

	vcpu = vt_linux_launched_vcpu(cpu);
	if (vcpu)
		status = vt_vcpu_syscall_strings(vcpu, slots[0], slots[1]);
	if (vcpu && status == VTICE_VMCALL_OK)
		status = vt_syscall_numbers_vmcall(vcpu, numbers);
	put_cpu();
	return vt_vmcall_errno(status);
}

/*
 * strings: the slots (vt_syscall_strings_pack); numbers: the set of
 * syscalls recorded, NULL for all. Given root while no CPU is armed.
 */
static int vt_syscalls_arm_locked(struct file *file, u32 pid, const char comm[16], bool quiet,
				  const u64 strings[2], const u64 *numbers, u32 *failed)
{
	struct vt_sys_call c = { .on = true, .quiet = quiet, .pid = pid };
	int ret;

	if (vt_sys_owner)
		return -EBUSY;
	ret = vt_syscall_tables_vmcall(strings, numbers);
	if (ret)
		return ret;
	memcpy(c.comm, comm, sizeof(c.comm));
	vt_syscalls_everywhere(&c);
	*failed = atomic_read(&c.failed);
	if (!atomic_read(&c.done)) {
		vt_syscalls_disarm_locked();
		return -EOPNOTSUPP;
	}
	vt_sys_owner = file;
	vt_sys_cpus = atomic_read(&c.done);
	return 0;
}

static void vt_syscalls_counters(struct vtice_syscalls *out)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct vt_vcpu *vcpu = vt_mod.vcpu_state ? vt_mod.vcpu_state[cpu] : NULL;

		if (!vcpu)
			continue;
		/* The exit counts page is shared with VMX root, unlike the vcpu copy. */
		out->seen += READ_ONCE(vcpu->counts->syscalls_seen);
		out->recorded += READ_ONCE(vcpu->counts->syscalls_recorded);
	}
}

long vt_ioc_syscalls(struct file *file, void __user *uarg)
{
	struct vtice_syscalls req;
	u64 strings[2];
	u32 failed = 0;
	int ret = vt_get_arg(&req, sizeof(req), uarg);

	if (ret)
		return ret;
	if (req.op > VTICE_SYSCALLS_DISARM || vt_syscall_strings_pack(&req, strings) ||
	    (req.flags & ~VTICE_SYSCALLS_CHOSEN) || req.reserved)
		return -EINVAL;
	mutex_lock(&vt_sys_lock);
	if (req.op == VTICE_SYSCALLS_ARM)
		ret = vt_syscalls_arm_locked(file, req.pid, req.comm, false, strings,
					     req.flags & VTICE_SYSCALLS_CHOSEN ? req.nrs : NULL, &failed);
	else if (req.op == VTICE_SYSCALLS_DISARM)
		ret = vt_sys_owner && vt_sys_owner != file ? -EBUSY : (vt_syscalls_disarm_locked(), 0);
	req.cpus_armed = vt_sys_cpus;
	mutex_unlock(&vt_sys_lock);
	if (ret)
		return ret;
	req.cpus_failed = failed;
	req.seen = req.recorded = 0;
	vt_syscalls_counters(&req);
	return vt_put_arg(uarg, &req, sizeof(req));
}

void vt_syscalls_release(struct file *file)
{
	mutex_lock(&vt_sys_lock);
	if (vt_sys_owner == file)
		vt_syscalls_disarm_locked();
	mutex_unlock(&vt_sys_lock);
}

/* The path tracer first, then the trap that feeds it. */
static int vt_path_arm_locked(struct file *file, struct vtice_path_trace *req)
{
	static const u64 no_strings[2];
	u32 failed = 0;
	u64 traced = 0;
	int ret;

	if (vt_sys_owner)
		return -EBUSY;
	/*
	 * Before the first call starts: each call's trace looks for it then.
	 * Without it (logged why) every CPU is stepped: slower, as complete.
	 */
	if (req->switch_to)
		vt_switch_trigger_plant(req->switch_to);
	ret = vt_path_vmcall(VTICE_VMCALL_PATH_ARM, req, &traced);
	if (ret) {
		vt_switch_trigger_remove();
		return ret;
	}
	vt_sys_path = true;
	ret = vt_syscalls_arm_locked(file, req->pid, req->comm, true, no_strings, NULL, &failed);
	if (ret) {
		vt_path_vmcall(VTICE_VMCALL_PATH_DISARM, NULL, NULL);
		vt_switch_trigger_remove();
		vt_sys_path = false;
		return ret;
	}
	req->cpus_failed = failed;
	return 0;
}

static int vt_path_check(const struct vtice_path_trace *req)
{
	if (req->op > VTICE_PATH_DISARM || (req->flags & ~VTICE_PATH_RECORD))
		return -EINVAL;
	if (req->op == VTICE_PATH_ARM &&
	    (!req->calls || req->calls > VTICE_PATH_MAX_CALLS || !req->max_insns ||
	     req->max_insns > VTICE_PATH_MAX_INSNS || memchr_inv(req->comm + 15, 0, 1)))
		return -EINVAL;
	return 0;
}

long vt_ioc_path_trace(struct file *file, void __user *uarg)
{
	struct vtice_path_trace req;
	u64 traced = 0;
	int ret = vt_get_arg(&req, sizeof(req), uarg);

	if (!ret)
		ret = vt_path_check(&req);
	if (ret)
		return ret;
	mutex_lock(&vt_sys_lock);
	req.cpus_failed = 0;
	if (req.op == VTICE_PATH_ARM)
		ret = vt_path_arm_locked(file, &req);
	else if (req.op == VTICE_PATH_DISARM && vt_sys_owner)
		ret = vt_sys_owner != file || !vt_sys_path ? -EBUSY : (vt_syscalls_disarm_locked(), 0);
	if (!ret && vt_sys_path)
		ret = vt_path_vmcall(VTICE_VMCALL_PATH_QUERY, NULL, &traced);
	req.cpus_armed = vt_sys_path ? vt_sys_cpus : 0;
	req.stepping = vt_sys_path && vt_switch_trigger_planted() ? VTICE_PATH_STEP_TASK :
								    VTICE_PATH_STEP_ALL_CPUS;
	mutex_unlock(&vt_sys_lock);
	if (ret)
		return ret;
	req.mechanism = vt_tracer_mechanism();
	req.traced = (u32)traced;
	return vt_put_arg(uarg, &req, sizeof(req));
}

/* At load, after the stub. */
int vt_linux_path_init(const struct vt_linux_trace_params *trace)
{
	struct vt_tracer_config cfg = {
		.vcpus = vt_mod.vcpu_state, .nr_cpus = min_t(u32, nr_cpu_ids, VT_TRACE_MAX_CPUS),
		.current_task = vt_linux_task_pointers(), .mem = vt_own_mem,
		.mode = (enum vt_trace_mode)trace->mode, .event_gap = trace->event_gap,
		.records_per_cpu = trace->records,
	};

	BUILD_BUG_ON(VT_TRACE_MAX_CPUS > VT_LINUX_TASK_CPUS);
	return vt_path_init(vt_mod.hv, &cfg);
}
