# Sourced by tools/kernel.sh and tests/bochs/lib/bochs3.sh, which fetch
# packages of other Debian suites through a private sources list.

# The Debian archive the machine already uses (its sources), or the
# default mirror when none is configured.
archive_uri() {
	local uri
	uri=$(grep -rhoE '^(URIs:|deb) +[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
		/etc/apt/sources.list.d/*.list 2>/dev/null | grep -m1 -E 'debian/?$' | awk '{print $2}' || true)
	echo "${uri:-http://deb.debian.org/debian}"
}
