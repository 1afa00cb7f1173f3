"""Helpers shared by several test modules (fixtures live in conftest.py), so that no test
module imports another."""
from __future__ import annotations

# The environment of a command run in the Jekyll 3 root (conftest.jekyll3_root): nothing of
# the host's.
CHROOT_ENV = ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/root",
              "JEKYLL_NO_BUNDLER_REQUIRE=true"]
