# The rig's own scenarios that need more than the guest (docs/bochs-rig.md).
# They use tests/bochs/init.sh's helpers; a "bochs-host-driver" line names
# the program run.sh starts on the host when the scenario asks for it
# (start_host_driver), connected to the guest's ttyS1 through COM2.

# COM2 end to end, before any debug stub owns the line: the guest greets,
# echoes, ping-pongs and streams over ttyS1 at 115200 baud; the host driver
# checks every byte and measures the line (docs/bochs-rig.md, "COM2").
# bochs-host-driver: com2 host/com2-check.py
scenario_com2() {
	[ -c /dev/ttyS1 ] || { result com2 SKIP "no /dev/ttyS1 (COM2 off?)"; return; }
	start_host_driver com2
	$T com2 com2 /dev/ttyS1
}

# Real gdb on the host against the guest's ttyS1: the guest plays the first
# steps of a stub (NAK, resend, empty replies, acks) and both ends check the
# other. vtice-test prints the VTICE-HOST marker itself, once ttyS1 is raw:
# gdb speaks first, and bytes reaching a closed or cooked tty would be lost
# or echoed.
# bochs-host-driver: com2gdb host/gdb-wire.py
scenario_com2gdb() {
	$T gdbwire com2gdb /dev/ttyS1
}
