"""Helpers the benchmark scripts share: a `pipeline emulator` in its own process, and the CPU
time a process has used, read from /proc."""
import contextlib
import os
import shutil
import subprocess
import tempfile

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
