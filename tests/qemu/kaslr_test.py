#!/usr/bin/env python3
"""Integration test: KASLR. The guest boots the compressed vmlinuz, whose
decompressor randomizes the kernel's base (run.sh --image vmlinuz).

  1. vtice with --symbols vmlinux (link-time addresses) finds the slide from
     the IDT: it must be a multiple of 2 MiB (CONFIG_PHYSICAL_ALIGN);
  2. do_sys_openat2 resolves to the same run-time address through the image
     plus that slide and through kallsyms recovered from guest memory (no
     file at all) — two independent paths — and the slide reported without
     a file (run-time _text minus its link address) is the same;
  3. a breakpoint set through the slid image symbols stops there, and bt
     unwinds to entry_SYSCALL_64*;
  4. `trace syscall openat --comm vtice-work` works on this boot, whose
     decompressor also turned on 5-level paging (per-cpu base 0xff...);
  5. kernel types from the BTF in guest memory (no file): at a getpid of
     the workload, `print $current->comm` (BTF) names the same task as
     `info task` (comm found by scanning init_task, no types), a cast of
     that task's address reads the same pid as $current, and `offsetof
     struct task_struct comm` equals pahole's offset on the image.
"""
import os
import re
import glob
import subprocess
import sys

from rig import fail, vtice


def printed(out):
    m = re.search(r"^(0x[0-9a-f]+) \(-?\d+\) <do_sys_openat2>", out, re.M)
    return int(m.group(1), 16) if m else None


def pahole_offset(image, struct, member):
    try:
        text = subprocess.run(["pahole", "-F", "btf", "-C", struct, image], capture_output=True,
                              text=True, timeout=120).stdout
    except OSError:
        return None
    m = re.search(r"^\t[^\t].*\b%s(\[\d+\])?;\s*/\*\s*(\d+)" % member, text, re.M)
    return int(m.group(2)) if m else None


def check_types(binary, port, out, image):
    tasks = re.findall(r'^task (0x[0-9a-f]+) comm "([^"]*)"', out, re.M)
    comm = re.search(r'^"([^"]*)"$', out, re.M)
    if not tasks or not comm or comm.group(1) != tasks[-1][1]:
        fail("print $current->comm (BTF from guest memory) and info task disagree", out)
    pid = re.search(r"^(\d+) \(0x[0-9a-f]+\)$", out, re.M)
    offset = re.search(r"struct task_struct\.comm: offset (\d+)", out)
    want = pahole_offset(image, "task_struct", "comm")
    if not offset or (want is not None and int(offset.group(1)) != want):
        fail("offsetof struct task_struct comm %s, pahole says %s" % (offset and offset.group(1), want), out)
    if "f_mode;" not in out:
        fail("ptype struct file shows no f_mode", out)
    if "(comm offset: BTF)" not in out.split("struct file {")[-1]:
        fail("info task after the types loaded does not take the comm offset from BTF", out)
    again = vtice(binary, port, ["print ((struct task_struct *)%s)->pid" % tasks[-1][0], "detach"])
    if not pid or ("%s (0x" % pid.group(1)) not in again:
        fail("a cast of the task's address reads another pid than $current->pid", out + again)
    print("PASS: BTF from guest memory: $current->comm %r = info task; pid %s by $current and by a cast; "
          "comm at offset %s (pahole: %s)" % (comm.group(1), pid.group(1), offset.group(1), want))


def main():
    binary, kernels = sys.argv[1], sys.argv[2]
    port = os.environ.get("VTICE_QEMU_PORT")
    images = sorted(glob.glob(os.path.join(kernels, "*", "vmlinux")))
    image = images[0] if images else ""
    if not port or not image:
        print("SKIP: needs run.sh exec and the extracted vmlinux")
        return 77
    with_image = vtice(binary, port, ["print do_sys_openat2", "break do_sys_openat2", "continue", "bt",
                                      "delete"], "--symbols", image)
    m = re.search(r"KASLR slide (0x[0-9a-f]+)", with_image)
    if not m:
        fail("no KASLR slide reported", with_image)
    slide = int(m.group(1), 16)
    if slide % (2 << 20):
        fail("slide %#x is not 2 MiB aligned" % slide, with_image)
    from_image = printed(with_image)
    no_file = vtice(binary, port, ["print do_sys_openat2", "info task",
                                   "trace syscall openat --comm vtice-work",
                                   "break __x64_sys_getpid", "continue", "delete", "info task",
                                   "print $current->comm", "print $current->pid",
                                   "offsetof struct task_struct comm", "ptype struct file", "info task", "detach"])
    # This boot also runs 5-level paging (kernel half from 0xff00...): the
    # per-cpu current_task and the tracer must cope.
    for want in ("getname", "do_filp_open", "path_openat"):
        if not re.search(r"\|\s+%s\(\)" % want, no_file):
            fail("trace under KASLR lacks %s()" % want, no_file)
    from_memory = printed(no_file)
    m2 = re.search(r"KASLR slide (0x[0-9a-f]+)", no_file)
    if not m2 or int(m2.group(1), 16) != slide:
        fail("without a file the slide (from _text in guest kallsyms) differs from the image's", no_file)
    if from_image is None or from_image != from_memory:
        fail("do_sys_openat2: image+slide %s, guest kallsyms %s" % (from_image, from_memory), with_image)
    if not re.search(r"Breakpoint 1 at 0x%x <do_sys_openat2>" % from_image, with_image.split("Continuing.")[-1]):
        fail("breakpoint through the slid image symbols did not stop at do_sys_openat2", with_image)
    names = re.findall(r"^#\d+\s+0x[0-9a-f]+ in ([A-Za-z0-9_.]+)", with_image, re.M)
    if len(names) < 4 or not names[3].startswith("entry_SYSCALL_64"):
        fail("bt under KASLR: %s" % names, with_image)
    # ORC comes from the image too, moved by the slide (no guest reads).
    if "ORC entries from %s" % image not in with_image:
        fail("ORC not taken from the image under KASLR", with_image)
    check_types(binary, port, no_file, image)
    print("PASS: KASLR slide %#x; do_sys_openat2 at %#x by image+slide and by guest kallsyms; bt %s"
          % (slide, from_image, " <- ".join(names[:4])))
    if slide == 0:
        print("note: the decompressor chose slide 0 this boot; the alignment check still ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
