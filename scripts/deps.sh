# Sourced by scripts/quickstart.sh, scripts/test.sh and .ci/run: the Debian 12
# packages neuron-stats needs to build and test (keep this the one list).
NS_PACKAGES=(build-essential meson ninja-build pkg-config libcjson-dev libsqlite3-dev libzstd-dev
             zlib1g-dev libcriterion-dev libiberty-dev python3 zstd
             libisal-dev # ISA-L: gzip'd traces decoded several times faster than by zlib (optional to build)
             cmark-gfm  # GitHub's Markdown parser: tests/reliability/test_names.py parses our Markdown back
             groff-base) # groff: tests/docs/test_man.py checks and renders the man page

# Installs the packages of NS_PACKAGES that are not installed yet (apt, as root).
ns_install_missing() {
	local missing=() p
	for p in "${NS_PACKAGES[@]}" "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
		return 1
	fi
	echo "installing: ${missing[*]}" >&2
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}
