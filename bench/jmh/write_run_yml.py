"""Write OUT/run.yml for a JMH run of bench/jmh/run.sh, from bench/jmh/run.yml.in: today's date,
the machine (CPU, cores, OS, kernel), the JDK and the settings. Standard library only (run.sh
calls it with any python3).

usage: python3 bench/jmh/write_run_yml.py OUT JAVA SETTINGS JVM_FLAGS
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def first(path: str, key: str, sep: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(sep, 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def main(out: str, java: str, settings: str, jvm_flags: str) -> None:
    props = subprocess.run([java, "-XshowSettings:properties", "-version"], capture_output=True,
                           text=True).stderr
    vm = next((line.split("=", 1)[1].strip() for line in props.splitlines()
               if line.strip().startswith("java.vm.version")), "unknown")
    check = (Path(out) / "host-check.txt")
    host = check.read_text().strip().replace("\n", " ") if check.is_file() else "no host check"
    # JSON strings are YAML double-quoted scalars: any CPU name or flag stays one string
    values = {"@DATE@": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
              "@SETTINGS@": settings.replace("\n", " "), "@HOST_CHECK@": host,
              "@CPU@": json.dumps(first("/proc/cpuinfo", "model name", ":") or "unknown"),
              "@CORES@": str(os.cpu_count() or 0),
              "@OS@": json.dumps(first("/etc/os-release", "PRETTY_NAME", "=") or
                                 platform.platform()),
              "@KERNEL@": json.dumps(platform.release()), "@JDK@": json.dumps(vm),
              "@JVM_FLAGS@": json.dumps((jvm_flags or "none") + " (JMH's defaults otherwise)")}
    text = (HERE / "run.yml.in").read_text()
    for key, value in values.items():
        text = text.replace(key, value)
    (Path(out) / "run.yml").write_text(text)
    print(f"== {out}/run.yml written (kind: jmh); `make site` builds its report")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    main(*sys.argv[1:])
