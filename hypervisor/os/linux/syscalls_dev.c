// SPDX-License-Identifier: GPL-2.0
/*
 * VTICE_IOC_SYSCALLS: syscall events on every online CPU (core/syscall_trap.h),
 * owned by one open file of /dev/vtice at a time. The owner's close
 * disarms them, so a tracer that dies leaves no CPU trapping.
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

static DEFINE_MUTEX(vt_sys_lock);
static struct file *vt_sys_owner;	/* under vt_sys_lock */
static u32 vt_sys_cpus;			/* CPUs armed, under vt_sys_lock */

struct vt_sys_call {
	bool on;
	u32 pid;
	char comm[16];
	atomic_t done, failed;
};

/* On each CPU (IPI, interrupts off): the VMCALL into its hypervisor. */
static void vt_syscalls_on_cpu(void *data)
{
	struct vt_sys_call *c = data;
	struct vt_vcpu *vcpu = READ_ONCE(vt_mod.vcpus[smp_processor_id()]);

	if (vcpu && READ_ONCE(vcpu->launched) &&
	    vt_vcpu_syscalls(vcpu, c->on, c->pid, c->comm) == VTICE_VMCALL_OK)
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

static void vt_syscalls_disarm_locked(void)
{
	struct vt_sys_call c = { .on = false };

	vt_syscalls_everywhere(&c);
	vt_sys_owner = NULL;
	vt_sys_cpus = 0;
}

static int vt_syscalls_arm_locked(struct file *file, const struct vtice_syscalls *req, u32 *failed)
{
	struct vt_sys_call c = { .on = true, .pid = req->pid };

	if (vt_sys_owner)
		return -EBUSY;
	memcpy(c.comm, req->comm, sizeof(c.comm));
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
	u32 failed = 0;
	int ret = vt_get_arg(&req, sizeof(req), uarg);

	if (ret)
		return ret;
	if (req.op > VTICE_SYSCALLS_DISARM)
		return -EINVAL;
	mutex_lock(&vt_sys_lock);
	if (req.op == VTICE_SYSCALLS_ARM)
		ret = vt_syscalls_arm_locked(file, &req, &failed);
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
