// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vtice: root-only misc device. ioctls (include/uapi/vtice/ioctl.h)
 * and mmap of the per-CPU record rings (include/uapi/vtice/ring.h).
 * Every argument is validated; bad ones get -EINVAL/-EFAULT/-ENOTTY.
 */
#define pr_fmt(fmt) "vtice: " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <vtice/ioctl.h>
#include <vtice/vmcall.h>
#include "vtice_linux.h"

/* Copy in an argument whose first two fields are size and version. */
int vt_get_arg(void *arg, size_t size, const void __user *uarg)
{
	struct { __u32 size, version; } head;

	if (copy_from_user(&head, uarg, sizeof(head)))
		return -EFAULT;
	if (head.size < size || head.version != VTICE_ABI_VERSION)
		return -EINVAL;
	if (copy_from_user(arg, uarg, size))
		return -EFAULT;
	return 0;
}

int vt_put_arg(void __user *uarg, const void *arg, size_t size)
{
	return copy_to_user(uarg, arg, size) ? -EFAULT : 0;
}

int vt_vmcall_errno(u64 status)
{
	if (status == VTICE_VMCALL_OK)
		return 0;
	if (status == (u64)VTICE_VMCALL_ENOSYS)
		return -EOPNOTSUPP;
	return (s64)status < 0 && (s64)status >= -4095 ? (int)(s64)status : -EIO;
}

/* Zero everything after the input fields (size, version, cpu). */
static void vt_clear_out(struct vtice_cpu_stats *cs, size_t size)
{
	u32 cpu = cs->cpu;

	memset(cs, 0, size);
	cs->size = size;
	cs->version = VTICE_ABI_VERSION;
	cs->cpu = cpu;
}

static long vt_ioc_status(void __user *uarg)
{
	struct vtice_status st;
	unsigned int cpu;
	int ret = vt_get_arg(&st, sizeof(st), uarg);

	if (ret)
		return ret;
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.version = VTICE_ABI_VERSION;
	st.nr_cpu_ids = nr_cpu_ids;
	st.ring_records = vt_mod.ring_records;
	st.ring_mmap_size = vt_mod.ring_bytes;
	st.key_loaded = vt_mod.hv->key != 0;
	for_each_possible_cpu(cpu) {
		struct vt_vcpu *vcpu = vt_linux_launched_vcpu(cpu);

		if (!vcpu || cpu >= VTICE_MAX_CPUS)
			continue;
		st.nr_virtualized++;
		st.total_exits += READ_ONCE(vcpu->counts->total);
		st.virtualized[cpu / 64] |= 1ull << (cpu % 64);
	}
	return vt_put_arg(uarg, &st, sizeof(st));
}

static long vt_ioc_cpu_stats(void __user *uarg)
{
	struct vtice_cpu_stats cs;
	struct vt_vcpu *vcpu;
	unsigned int i;
	int ret = vt_get_arg(&cs, sizeof(cs), uarg);

	if (ret)
		return ret;
	if (cs.cpu >= nr_cpu_ids || !cpu_possible(cs.cpu))
		return -EINVAL;
	vt_clear_out(&cs, sizeof(cs));
	cpus_read_lock();
	vcpu = READ_ONCE(vt_mod.vcpus[cs.cpu]);
	if (vcpu) {
		cs.flags = READ_ONCE(vcpu->launched) ? VTICE_CPU_VIRTUALIZED : 0;
		cs.exits_total = READ_ONCE(vcpu->counts->total);
		cs.exits_unknown = READ_ONCE(vcpu->counts->unknown);
		for (i = 0; i < VTICE_EXIT_REASON_SLOTS && i < VT_EXIT_SLOTS; i++)
			cs.exits[i] = READ_ONCE(vcpu->counts->by_reason[i]);
	}
	cpus_read_unlock();
	return vt_put_arg(uarg, &cs, sizeof(cs));
}

static long vt_ioc_caps(void __user *uarg)
{
	const struct vt_vmx_caps *c = &vt_mod.hv->caps;
	struct vtice_caps caps;
	int ret = vt_get_arg(&caps, sizeof(caps), uarg);

	if (ret)
		return ret;
	caps.flags = c->flags;
	caps.vmx_basic = c->basic;
	caps.pinbased_ctls = c->pin;
	caps.procbased_ctls = c->proc;
	caps.procbased_ctls2 = c->proc2;
	caps.exit_ctls = c->exit;
	caps.entry_ctls = c->entry;
	caps.misc = c->misc;
	caps.ept_vpid_cap = c->ept_vpid;
	caps.preempt_timer_shift = c->preempt_timer_shift;
	caps.reserved = 0;
	return vt_put_arg(uarg, &caps, sizeof(caps));
}

struct vt_emit_args {
	u32 count;
	u64 value;
	u64 stored;
	int ret;
};

/* Runs on the target CPU (IPI, interrupts off): VMCALL into its hypervisor. */
static void vt_emit_on_cpu(void *data)
{
	struct vt_emit_args *a = data;
	struct vt_vcpu *vcpu = vt_linux_launched_vcpu(smp_processor_id());

	if (!vcpu) {
		a->ret = -ENODEV;
		return;
	}
	a->ret = vt_vcpu_emit_test(vcpu, a->count, a->value, &a->stored) ? -EINVAL : 0;
}

static long vt_ioc_emit_test(void __user *uarg)
{
	struct vtice_emit_test et;
	struct vt_emit_args a = { 0 };
	int ret = vt_get_arg(&et, sizeof(et), uarg);

	if (ret)
		return ret;
	if (et.cpu >= nr_cpu_ids || et.count == 0 || et.count > VTICE_EMIT_TEST_MAX)
		return -EINVAL;
	a.count = et.count;
	a.value = et.value;
	cpus_read_lock();
	if (!cpu_online(et.cpu))
		a.ret = -EINVAL;
	else
		ret = smp_call_function_single(et.cpu, vt_emit_on_cpu, &a, 1);
	cpus_read_unlock();
	if (ret)
		return ret;
	if (a.ret)
		return a.ret;
	et.written = a.stored;
	et.dropped = et.count - a.stored;
	return vt_put_arg(uarg, &et, sizeof(et));
}

static long vt_ioc_break(void __user *uarg)
{
	struct vtice_break br;
	int ret = vt_get_arg(&br, sizeof(br), uarg);

	if (ret)
		return ret;
	ret = vt_linux_debug_break(&br.stopped_ns);
	if (ret)
		return ret;
	return vt_put_arg(uarg, &br, sizeof(br));
}

static long vt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case VTICE_IOC_STATUS:
		return vt_ioc_status(uarg);
	case VTICE_IOC_CPU_STATS:
		return vt_ioc_cpu_stats(uarg);
	case VTICE_IOC_CAPS:
		return vt_ioc_caps(uarg);
	case VTICE_IOC_EMIT_TEST:
		return vt_ioc_emit_test(uarg);
	case VTICE_IOC_BREAK:
		return vt_ioc_break(uarg);
	case VTICE_IOC_SYSCALLS:
		return vt_ioc_syscalls(file, uarg);
	case VTICE_IOC_LBR:
		return vt_ioc_lbr(uarg);
	case VTICE_IOC_PATH_TRACE:
		return vt_ioc_path_trace(file, uarg);
	case VTICE_IOC_PROBES:
		return vt_ioc_probes(file, uarg);
	case VTICE_IOC_PROBE_HIST:
		return vt_ioc_probe_hist(uarg);
	case VTICE_IOC_PROBE_KEYS:
		return vt_ioc_probe_keys(uarg);
	case VTICE_IOC_PROFILE:
		return vt_ioc_profile(file, uarg);
	default:
		return -ENOTTY;
	}
}

/* CPU n's ring: offset n * ring_bytes, exactly ring_bytes long. */
static int vt_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long off = vma->vm_pgoff << PAGE_SHIFT;
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long cpu;

	if (off % vt_mod.ring_bytes || len != vt_mod.ring_bytes)
		return -EINVAL;
	cpu = off / vt_mod.ring_bytes;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu) || !vt_mod.rings[cpu])
		return -EINVAL;
	return remap_vmalloc_range(vma, vt_mod.rings[cpu], 0);
}

static int vt_open(struct inode *inode, struct file *file)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

static int vt_release(struct inode *inode, struct file *file)
{
	vt_profile_release(file);
	vt_probes_release(file);
	vt_syscalls_release(file);
	return 0;
}

static const struct file_operations vt_fops = {
	.owner = THIS_MODULE,
	.open = vt_open,
	.release = vt_release,
	.unlocked_ioctl = vt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = vt_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice vt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = VTICE_DEVICE_NAME,
	.fops = &vt_fops,
	.mode = 0600,
};

/* The device, and the module notifier its probes need (a module's text can go under them). */
int vt_dev_register(void)
{
	int ret = vt_probes_modules_watch();

	if (ret)
		return ret;
	ret = misc_register(&vt_misc);
	if (ret)
		vt_probes_modules_unwatch();
	return ret;
}

void vt_dev_unregister(void)
{
	misc_deregister(&vt_misc);
	vt_probes_modules_unwatch();
}
