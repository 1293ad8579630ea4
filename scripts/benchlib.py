"""Helpers the benchmark scripts share: a `pipeline emulator` in its own process, a command run
and measured on its own (wall, CPU, peak memory), and the CPU time a process has used, read from
/proc."""
import contextlib
import os
import selectors
import shutil
import subprocess
import tempfile
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User and system CPU seconds the process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@contextlib.contextmanager
def emulator(pipeline, prefix):
    """A `pipeline emulator` on a free port with the sample seed, its database in a fresh folder:
    yields the process, its first line's fields (`instance_url`, `access_token`, …) and the folder;
    stops it and removes the folder after."""
    folder = tempfile.mkdtemp(prefix=prefix)
    process = subprocess.Popen([pipeline, "emulator", "--port", "0", "--seed", "samples/org/seed.json",
                                "--database", os.path.join(folder, "org.sqlite")], stdout=subprocess.PIPE, text=True)
    try:
        yield process, dict(part.split("=", 1) for part in process.stdout.readline().split()), folder
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def run_measured(command):
    """Runs a command; returns its stdout, wall seconds, CPU seconds and peak RSS (MB) — its own.

    The peak is the child's `VmHWM`, read every 20 ms while it runs: `ru_maxrss` from `wait4` is
    not its own on Linux, since a forked child keeps the parent's RSS at the fork as its high-water
    mark through `exec` (once this script held a million ids, every later step "peaked" at ~200 MB)."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read the pipes while waiting, then reap the child with wait4 to get its own CPU time.
    out, err = b"", b""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    selector.register(process.stderr, selectors.EVENT_READ)
    open_pipes = 2
    peak_kb = 0
    while open_pipes:
        peak_kb = max(peak_kb, high_water_kb(process.pid))
        for key, _ in selector.select(timeout=0.02):
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                open_pipes -= 1
            elif key.fileobj is process.stdout:
                out += chunk
            else:
                err += chunk
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    if os.environ.get("BENCH_STDERR"):
        print(err.decode()[-2000:])
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{err.decode()[-3000:]}")
    return out.decode(), wall, usage.ru_utime + usage.ru_stime, peak_kb / 1024


def high_water_kb(pid):
    """The peak resident set of the live process `pid` since its `exec` (kB), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
