#!/usr/bin/env bash
# Quick start on Debian 12 (as root): installs what is missing, builds
# neuron-stats into build/, and prints the key_averages table of the bundled
# synthetic Neuron capture, sorted by Self NEURON time.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
ns_install_missing
if [ -f build/build.ninja ]; then
	meson setup --reconfigure build >/dev/null
else
	meson setup build >/dev/null
fi
meson compile -C build >/dev/null
echo "\$ build/src/cli/neuron-stats fixtures/rmsnorm-naive --sort self_neuron" >&2
exec build/src/cli/neuron-stats fixtures/rmsnorm-naive --sort self_neuron
