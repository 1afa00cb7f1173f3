"""The server JVM of a --url run (issue 32): its JDK, heap, GC and -X/-XX flags, read once per
run from the process that --server-pid or --jfr-pid names, for run.yml's environment.

A JVM's command line can hold secrets (-Dpassword=..., -javaagent options, an application
argument with a token), and run.yml is published with the report. So only the -X and -XX
options of its JVM arguments are kept, the JDK from three named system properties, and the GC
and maximum heap from the flags the JVM runs with (`jcmd PID VM.flags`: -XX options only);
nothing else of the process is read into the file.

With jcmd (the harness's JDK) it attaches: VM.command_line (its jvm_args line), VM.flags,
VM.system_properties. A JVM jcmd cannot attach to (another user's, a JDK without the attach
listener) is read from /proc/PID/cmdline instead: the -X/-XX options before the main class or
-jar, the JDK from the executable's own `-XshowSettings:properties -version`. A process that
is not a JVM (no libjvm.so in its memory map) gives no file, and is never sent a jcmd.

    python bench/serverjvm.py --pid PID --jcmd JCMD --out FILE
    -> FILE: {"environment": {jdk, jvm_flags, gc, heap}, "read_with": "..."}
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from analysis import atomic  # noqa: E402  (the repository root is put on the path just above)

VENDOR_PROPERTIES = ("java.vendor.version", "java.runtime.version", "java.vm.vendor")
NOT_KEPT = ("only its -X and -XX options are kept: its other arguments (-D properties, agents, "
            "the application's own) can hold secrets")


def kept_options(args: list[str]) -> list[str]:
    """The -X/-XX options of a JVM's arguments, in order (-XX:... and -Xmx512m alike)."""
    return [a for a in args if a.startswith("-X")]


def jdk_text(props: dict[str, str]) -> str | None:
    """As bench/manifest.py describes the generator's JDK: "Temurin-25.0.3+9 (25.0.3+9-LTS)"."""
    name = props.get("java.vendor.version") or props.get("java.vm.vendor")
    version = props.get("java.runtime.version")
    text = " ".join(x for x in (name, f"({version})" if version else None) if x)
    return text or None


def heap_text(max_heap_bytes: int | None) -> str | None:
    if not max_heap_bytes:
        return None
    gib, mib = max_heap_bytes / 2**30, max_heap_bytes / 2**20
    return f"{gib:g} GiB" if gib >= 1 and gib == int(gib) else f"{mib:g} MiB"


def heap_from_options(options: list[str]) -> int | None:
    """-Xmx512m / -XX:MaxHeapSize=... as bytes (the last one wins, as in the JVM)."""
    units = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    size = None
    for option in options:
        m = re.fullmatch(r"-Xmx(\d+)([kKmMgGtT]?)|-XX:MaxHeapSize=(\d+)([kKmMgGtT]?)", option)
        if m:
            digits, unit = (m[1], m[2]) if m[1] else (m[3], m[4])
            size = int(digits) * units[unit.lower()]
    return size


def gc_from_options(options: list[str]) -> str | None:
    gcs = [m[1] for o in options if (m := re.fullmatch(r"-XX:\+Use(\w+)GC", o))]
    return gcs[-1] if gcs else None


def environment(options: list[str], final_flags: list[str], props: dict[str, str]) -> dict:
    """run.yml environment keys from the command line's -X/-XX options, the flags the JVM runs
    with (ergonomic choices included: the GC and heap it picked when none was given) and the
    vendor properties."""
    env = {"jdk": jdk_text(props),
           "jvm_flags": " ".join(options) or "none on its command line (the JDK's defaults)",
           "gc": gc_from_options(final_flags) or gc_from_options(options),
           "heap": heap_text(heap_from_options(final_flags) or heap_from_options(options))}
    return {k: v for k, v in env.items() if v}


def jcmd(jcmd_path: str, pid: int, command: str) -> str | None:
    try:
        proc = subprocess.run([jcmd_path, str(pid), command], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # jcmd prints "PID:" first; a failed attach prints an exception (and may still exit 0)
    if proc.returncode != 0 or re.search(r"^[\w.]+(Exception|Error)\b", proc.stdout, re.M):
        return None
    return proc.stdout


def is_jvm(pid: int) -> bool:
    """Whether the process has libjvm loaded. jcmd must not be pointed at anything else: where
    no JVM listens it sends SIGQUIT to a process that catches it, and a Go server, which does,
    exits on it."""
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            return any(line.rstrip().endswith("/libjvm.so") for line in maps)
    except OSError:
        return False


def read_with_jcmd(jcmd_path: str, pid: int) -> dict | None:
    command_line = jcmd(jcmd_path, pid, "VM.command_line")
    flags = jcmd(jcmd_path, pid, "VM.flags")
    props_text = jcmd(jcmd_path, pid, "VM.system_properties")
    if command_line is None or flags is None:
        return None
    args = re.search(r"^jvm_args: (.*)$", command_line, re.M)
    options = kept_options(args[1].split() if args else [])
    final = [f for f in flags.split() if f.startswith("-XX:")]
    props = {}
    for line in (props_text or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and key in VENDOR_PROPERTIES:
            props[key] = value.replace("\\:", ":").replace("\\=", "=").strip()
    return {"environment": environment(options, final, props),
            "read_with": f"jcmd {pid} VM.command_line, VM.flags and VM.system_properties "
                         f"(java.vendor.version, java.runtime.version, java.vm.vendor); "
                         + NOT_KEPT}


def read_from_proc(pid: int) -> dict | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    argv = [a.decode("utf-8", "replace") for a in argv if a]
    if not argv or os.path.basename(exe) != "java":
        return None
    options = []
    for arg in argv[1:]:
        if not arg.startswith("-") or arg in ("-jar", "-m", "--module"):
            break   # the main class, or what runs: the application's own arguments follow
        options.append(arg)
    props_text = subprocess.run([exe, "-XshowSettings:properties", "-version"],
                                capture_output=True, text=True, timeout=60).stderr
    props = {k: v for k, v in re.findall(r"^\s+([\w.]+) = (.*)$", props_text, re.M)
             if k in VENDOR_PROPERTIES}
    return {"environment": environment(kept_options(options), [], props),
            "read_with": f"/proc/{pid}/cmdline (jcmd could not attach) and its executable's "
                         f"-XshowSettings:properties; " + NOT_KEPT}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--pid", required=True, type=int)
    p.add_argument("--jcmd", required=True)
    p.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    facts = ((read_with_jcmd(args.jcmd, args.pid) or read_from_proc(args.pid))
             if is_jvm(args.pid) else None)
    if facts is None:
        args.out.unlink(missing_ok=True)
        print(f"== server process {args.pid}: not a JVM that jcmd or /proc shows; run.yml "
              f"records no server JDK or flags")
        return 0
    if args.out.is_file():
        before = json.loads(args.out.read_text(encoding="utf-8"))["environment"]
        if before != facts["environment"]:
            print(f"warning: the server JVM differs from the one this run folder's earlier "
                  f"cells were measured on ({before} -> {facts['environment']}); run.yml "
                  f"records the new one", file=sys.stderr)
    atomic.write_text(args.out, json.dumps(facts, indent=1, sort_keys=True) + "\n")
    env = facts["environment"]
    print(f"== server JVM {args.pid}: {env.get('jdk', 'JDK not known')}, "
          f"flags {env['jvm_flags']}, GC {env.get('gc', '?')}, heap {env.get('heap', '?')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
