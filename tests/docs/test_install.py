#!/usr/bin/env python3
"""`meson install --destdir` puts the binary, the man page and both
completion scripts where a system looks for them (PREFIX/bin,
share/man/man1, share/bash-completion/completions,
share/zsh/vendor-completions), and each installed file is what the
installed binary generates.
Usage: test_install.py MESON BUILD_DIR"""
import os
import subprocess
import sys
import tempfile

WANT = {
    "bin/neuron-stats": None,
    "share/man/man1/neuron-stats.1": ["--man"],
    "share/bash-completion/completions/neuron-stats": ["completion", "bash"],
    "share/zsh/vendor-completions/_neuron-stats": ["completion", "zsh"],
}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    meson, build = sys.argv[1:]
    failures = 0
    with tempfile.TemporaryDirectory() as dest:
        subprocess.run([meson, "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
        found = {}
        for root, _, files in os.walk(dest):
            for name in files:
                path = os.path.join(root, name)
                for rel in WANT:
                    if path.endswith("/" + rel):
                        found[rel] = path
        binary = found.get("bin/neuron-stats")
        for rel, args in WANT.items():
            path = found.get(rel)
            if not path:
                print("FAIL %s: not installed" % rel)
                failures += 1
            elif args and binary:
                generated = subprocess.run([binary] + args, capture_output=True, check=True).stdout
                with open(path, "rb") as f:
                    if f.read() != generated:
                        print("FAIL %s: not what neuron-stats %s prints" % (rel, " ".join(args)))
                        failures += 1
        if binary and not os.access(binary, os.X_OK):
            print("FAIL bin/neuron-stats: not executable")
            failures += 1
        prefix = os.path.dirname(os.path.dirname(binary)) if binary else dest
        print("installed under %s: %s" % (os.path.relpath(prefix, dest), ", ".join(sorted(found))))
    print("%d of %d installed files ok" % (len(WANT) - failures, len(WANT)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
