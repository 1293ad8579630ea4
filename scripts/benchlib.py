"""Helpers the benchmark scripts share: a `pipeline emulator` in its own process, and the CPU
time a process has used, read from /proc."""
import os
import subprocess

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User and system CPU seconds the process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start_emulator(pipeline, folder):
    """Starts `pipeline emulator` on a free port with the sample seed and its database in `folder`;
    returns the process and its first line's fields (`instance_url`, `access_token`, …)."""
    process = subprocess.Popen([pipeline, "emulator", "--port", "0", "--seed", "samples/org/seed.json",
                                "--database", os.path.join(folder, "org.sqlite")], stdout=subprocess.PIPE, text=True)
    return process, dict(part.split("=", 1) for part in process.stdout.readline().split())
