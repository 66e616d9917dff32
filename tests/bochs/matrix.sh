#!/usr/bin/env bash
# The kernel x CPU matrix: one Bochs run per cell, judged by check.sh, and
# a table of the results with their figures (docs/machines.md keeps the
# last full one).
#
# Usage: tests/bochs/matrix.sh [--quick] [--cells "CELL ..."] [--out DIR] [--vtice BIN]
#                              [--bochs-cache DIR]
#
#   cells (default: all three)
#     skylake-6.1     corei7_skylake_x, no CET; Debian 12's kernel
#     tigerlake-6.12  tigerlake with CET;
#                     bookworm-backports' 6.12, IBT on
#     penryn-6.1      core2_penryn_t9600: VMX without EPT, must be refused
#   --quick           the short core per cell (blue pill, then vtice
#                     doctor, whose trace checks hold one openat path, MTF
#                     and TF, against the kernel's ftrace) instead of the
#                     full core (hvpath's stress and the stub driven by
#                     stock gdb as well; the panic stop ends the machine,
#                     so it needs a run of its own and is not in a cell:
#                     bochs.crash runs it on the default cell)
#   --out DIR         default build/matrix; each cell in DIR/CELL, the
#                     table in DIR/matrix.md
#   --bochs-cache DIR where the Bochs 3.0 build is kept (run.sh's default
#                     build/bochs3)
#
# Cells run one after the other, each Bochs on a core of its own.
# Exit: 0 every cell passed, 1 a cell failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/matrix
cells="skylake-6.1 tigerlake-6.12 penryn-6.1"
quick=0
vtice_bin=$root/build/vtice
cache_args=

usage() { sed -n '2,/^# Exit:/s/^# \{0,1\}//p' "$0"; }

while (($#)); do
	case $1 in
	--quick) quick=1 ;;
	--cells) cells=$2; shift ;;
	--out) out=$2; shift ;;
	--vtice) vtice_bin=$2; shift ;;
	--bochs-cache) cache_args="--bochs-cache $(printf %q "$2")"; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "matrix.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

# The run.sh options and scenarios of a cell.
cell_args() {
	local core="load hvstub hvpath hvdoctor"
	((quick)) && core="load hvdoctor"
	case $1 in
	skylake-6.1) echo "--cpu corei7_skylake_x --scenarios '$core'" ;;
	tigerlake-6.12) echo "--cpu tigerlake --kernel bookworm-backports --scenarios '$core'" ;;
	penryn-6.1) echo "--cpu core2_penryn_t9600 --scenarios 'hvrefused hvdoctorrefused'" ;;
	*) return 1 ;;
	esac
}

run_cell() {
	local cell=$1 args start rc
	args=$(cell_args "$cell") || { echo "matrix.sh: unknown cell '$cell'" >&2; return 2; }
	mkdir -p "$out/$cell"
	start=$(date +%s)
	echo "matrix: $cell: tests/bochs/run.sh $args" >&2
	# --stall 600: doctor's traces step every CPU, the rig's heartbeat too,
	# and on a loaded host a stretch of them can outlast run.sh's 240 s (CI
	# of 2026-12-02, tigerlake-6.12: the run ended in doctor, no check had
	# failed, doctor never reported; here the same cell passes in 348 s).
	eval "\"$here/run.sh\" --out \"$out/$cell\" --vtice \"$vtice_bin\" --timeout 2400 --stall 600 $cache_args $args" \
		>"$out/$cell/run.log" 2>&1
	rc=$?
	echo "$rc $(($(date +%s) - start))" >"$out/$cell/result"
	echo "matrix: $cell: exit $rc after $(($(date +%s) - start)) s" >&2
	((rc == 0)) && return
	# Why, where the test's log shows it: the failed checks and run.sh's end.
	grep -h '^VTICE-TEST .* FAIL' "$out/$cell/serial.log" 2>/dev/null | sed "s/^/matrix: $cell: /" >&2
	tail -n 12 "$out/$cell/run.log" | sed "s/^/matrix: $cell: run.sh: /" >&2
}

figure() { sed -n "s/^VTICE-FIGURE $2=//p" "$1" | tail -n 1; }

# One table row: the cell, what it booted, the verdict, figures.
table_row() {
	local cell=$1 dir=$out/$1 rc wall kc serial passed failed doctor
	read -r rc wall <"$dir/result"
	kc=$(cat "$dir/kernel-and-cpu" 2>/dev/null || echo "? ?")
	serial=$dir/serial.log
	passed=$(grep -c '^VTICE-TEST .* PASS' "$serial" 2>/dev/null)
	failed=$(grep -c '^VTICE-TEST .* FAIL' "$serial" 2>/dev/null)
	doctor=$(sed -n 's/^VTICE-TEST hv.doctor [A-Z]* [^;]*; //p' "$serial" 2>/dev/null | tail -n 1)
	printf '| %s | %s | %s | %s | %s checks passed, %s failed | %s | %s s | %s s | %s |\n' \
		"$cell" "${kc#* }" "${kc%% *}" "$(figure "$serial" baseline.cet)" \
		"$passed" "$failed" "${doctor:--}" "$(figure "$serial" boot_to_init_s)" "$wall" \
		"$( ((rc == 0)) && echo pass || echo "FAIL (exit $rc)")"
}

main() {
	local cell rc=0
	mkdir -p "$out"
	[[ -x "$vtice_bin" ]] || vtice_bin=none
	for cell in $cells; do
		run_cell "$cell" || return 2
	done
	{
		echo "Kernel x CPU matrix, $(date -u +%Y-%m-%d), tests/bochs/matrix.sh$( ((quick)) && echo ' --quick')"
		echo
		echo "| cell | CPU model | kernel | CET on | scenarios | vtice doctor | boot to /init | cell wall | verdict |"
		echo "|---|---|---|---|---|---|---|---|---|"
		for cell in $cells; do
			table_row "$cell"
			[[ $(cut -d' ' -f1 "$out/$cell/result") == 0 ]] || rc=1
		done
	} >"$out/matrix.md"
	cat "$out/matrix.md"
	return $rc
}

main
