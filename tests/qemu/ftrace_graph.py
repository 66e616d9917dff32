"""Function-graph text (ftrace's and vtice's) as ordered call lists, and
their longest common subsequence: the measure of "the same calls in the
same order" that qemu.ftrace applies."""
import collections
import re

# "  0)   1.813 us    |        _raw_spin_lock();"  and vtice's
# "  0)       86 insn |        build_open_flags();"  alike: CPU, duration,
# a bar, then the indented call.
_LINE = re.compile(r"^\s*\d+\)[^|]*\|(\s*)(\S.*)$")
_CALL = re.compile(r"^([^\s(){};]+)\(\)(?: \{|;)")


def calls_under(text, function):
    """Each run of `function`'s body in a graph: a list per run of
    (depth below function, callee name), in the order they were entered."""
    runs, current, base = [], None, 0
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        indent, body = len(m.group(1)), m.group(2)
        call = _CALL.match(body)
        if current is None:
            if call and call.group(1) == function and body.endswith("{"):
                current, base = [], indent
            continue
        if indent <= base:  # the closing brace (or anything at its level) ends the run
            runs.append(current)
            current = None
            continue
        if call:
            current.append(((indent - base) // 2, call.group(1)))
    return runs


def modal_run(runs):
    """The call sequence most runs took, and how many took it."""
    counts = collections.Counter(tuple(name for _, name in run) for run in runs)
    sequence, count = counts.most_common(1)[0]
    return list(sequence), count


def lcs_alignment(reference, candidate):
    """Indices of reference kept by a longest common subsequence with candidate."""
    n, m = len(reference), len(candidate)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if reference[i] == candidate[j]:
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    kept, i, j = [], 0, 0
    while i < n and j < m:
        if reference[i] == candidate[j]:
            kept.append(i)
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return kept


def _elf_reader(path):
    """read(address, size) over the allocated PROGBITS sections of an ELF64."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
    sections = []
    for i in range(shnum):
        _, kind, _, addr, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        if kind == 1 and addr:  # PROGBITS with an address
            sections.append((addr, offset, size))

    def read(address, size):
        for addr, offset, length in sections:
            if addr <= address and address + size <= addr + length:
                return data[offset + address - addr:offset + address - addr + size]
        raise ValueError("0x%x is in no section of %s" % (address, path))
    return read


def ftrace_visible(vmlinux, kallsyms):
    """Names of the functions ftrace can trace: those with an __fentry__ call
    recorded in the image's __mcount_loc table at their start (a notrace or
    asm function has none). From the build's own record, not from vtice."""
    import bisect
    import struct
    symbols = {}
    starts = []
    for line in open(kallsyms):
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "tT":
            address = int(parts[0], 16)
            symbols.setdefault(address, []).append(parts[2])
            starts.append(address)
    starts.sort()
    table = {}
    for line in open(kallsyms):
        parts = line.split()
        if len(parts) >= 3 and parts[2] in ("__start_mcount_loc", "__stop_mcount_loc"):
            table[parts[2]] = int(parts[0], 16)
    begin, end = table["__start_mcount_loc"], table["__stop_mcount_loc"]
    raw = _elf_reader(vmlinux)(begin, end - begin)
    visible = set()
    for site in struct.unpack("<%dQ" % ((end - begin) // 8), raw):
        i = bisect.bisect_right(starts, site) - 1
        # The fentry call is the first instruction, after an endbr64 at most.
        if i >= 0 and site - starts[i] <= 4:
            visible.update(symbols[starts[i]])
    return visible
