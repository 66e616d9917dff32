// SPDX-License-Identifier: GPL-2.0
/*
 * VTICE_IOC_PROFILE: the sampling profiler (core/profile.h) for `vtice
 * profile`. One open file of /dev/vtice owns it; its close stops it. Each
 * CPU's timer is its own VMCS's, so every CPU arms and stops itself, in a
 * VMCALL run on it.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/smp.h>
#include <linux/string.h>

#include <vtice/ioctl.h>
#include <vtice/vmcall.h>
#include "vtice_linux.h"
#include "../../debug/dbg_os.h"

static DEFINE_MUTEX(vt_profile_lock);
static struct file *vt_profile_owner;	/* under vt_profile_lock */
static struct cpumask vt_profile_cpus;	/* CPUs sampling, under vt_profile_lock */

struct vt_profile_call {
	u64 period_tsc;		/* 0: stop */
	u32 stack_bytes;
	u32 pid;		/* the task to sample, 0 = any */
	char comm[16];		/* ...its comm, "" = any */
	atomic_t failed;	/* the first CPU's error, 0 = none */
};

/* On the CPU to arm or stop: its VMCALL. */
static void vt_profile_cpu(void *arg)
{
	struct vt_profile_call *call = arg;
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());
	u64 status, samples;
	int err = -EOPNOTSUPP;

	if (!vcpu) {
		atomic_cmpxchg(&call->failed, 0, -ENODEV);
		return;
	}
	status = vt_vcpu_profile(vcpu, call->period_tsc, call->stack_bytes, call->pid, call->comm, &samples);
	if (status == VTICE_VMCALL_OK)
		return;
	if (status == (u64)VTICE_VMCALL_EINVAL)
		err = -EINVAL;
	else if (status == (u64)VTICE_VMCALL_EBUSY)
		err = -EBUSY;	/* the debug stub's profiler (profile: probes through it) */
	atomic_cmpxchg(&call->failed, 0, err);
}

static void vt_profile_stop_locked(void)
{
	struct vt_profile_call call = { .period_tsc = 0 };

	cpus_read_lock();
	on_each_cpu_mask(&vt_profile_cpus, vt_profile_cpu, &call, 1);
	cpus_read_unlock();
	cpumask_clear(&vt_profile_cpus);
	vt_profile_owner = NULL;
}

static int vt_profile_check(const struct vtice_profile *req)
{
	if (req->op > VTICE_PROFILE_DISARM)
		return -EINVAL;
	if (req->op != VTICE_PROFILE_ARM)
		return 0;
	if (!req->hz || req->hz > VTICE_PROFILE_HZ_MAX || req->stack_bytes > VTICE_PROFILE_STACK_MAX ||
	    req->stack_bytes % 16 || memchr(req->comm, 0, sizeof(req->comm)) == NULL)
		return -EINVAL;
	if (req->cpu != VTICE_PROFILE_ALL_CPUS &&
	    (req->cpu < 0 || req->cpu >= nr_cpu_ids || !cpu_online(req->cpu)))
		return -EINVAL;
	return 0;
}

static int vt_profile_arm_locked(struct file *file, const struct vtice_profile *req)
{
	struct vt_profile_call call = {
		.period_tsc = div_u64(vt_os_tsc_khz() * 1000, req->hz),
		.stack_bytes = req->stack_bytes,
		.pid = req->pid,
	};
	int ret;

	strscpy_pad(call.comm, req->comm, sizeof(call.comm));
	if (vt_profile_owner && vt_profile_owner != file)
		return -EBUSY;
	if (vt_profile_owner)
		vt_profile_stop_locked();
	cpus_read_lock();
	if (req->cpu == VTICE_PROFILE_ALL_CPUS)
		cpumask_copy(&vt_profile_cpus, cpu_online_mask);
	else
		cpumask_copy(&vt_profile_cpus, cpumask_of(req->cpu));
	on_each_cpu_mask(&vt_profile_cpus, vt_profile_cpu, &call, 1);
	cpus_read_unlock();
	vt_profile_owner = file;
	ret = atomic_read(&call.failed);
	if (ret)
		vt_profile_stop_locked();
	return ret;
}

static u64 vt_profile_samples(void)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct vt_vcpu *vcpu = READ_ONCE(vt_mod.vcpus[cpu]);

		if (vcpu && vcpu->counts)
			sum += READ_ONCE(vcpu->counts->profile_samples);
	}
	return sum;
}

long vt_ioc_profile(struct file *file, void __user *uarg)
{
	struct vtice_profile req;
	int ret = vt_get_arg(&req, sizeof(req), uarg);

	if (!ret)
		ret = vt_profile_check(&req);
	if (ret)
		return ret;
	mutex_lock(&vt_profile_lock);
	if (req.op == VTICE_PROFILE_ARM)
		ret = vt_profile_arm_locked(file, &req);
	else if (req.op == VTICE_PROFILE_DISARM && vt_profile_owner)
		ret = vt_profile_owner != file ? -EBUSY : (vt_profile_stop_locked(), 0);
	req.armed = cpumask_weight(&vt_profile_cpus);
	mutex_unlock(&vt_profile_lock);
	if (ret)
		return ret;
	req.samples = vt_profile_samples();
	return vt_put_arg(uarg, &req, sizeof(req));
}

void vt_profile_release(struct file *file)
{
	mutex_lock(&vt_profile_lock);
	if (vt_profile_owner == file)
		vt_profile_stop_locked();
	mutex_unlock(&vt_profile_lock);
}
