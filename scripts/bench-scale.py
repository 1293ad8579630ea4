#!/usr/bin/env python3
"""The scale path (issue 20), client and org in separate processes: N Accounts from CSV staged into
a soup (`extract.csv` → `stage`, then `markDirty`), then synced up with the default strategy (Bulk API
2.0 above the threshold), then synced down again through REST query pages beside a raw fetch of the
same pages. Each `pipeline run` is its own process, so its CPU time and peak memory are its own; the
emulator (`pipeline emulator`) runs apart and its CPU is read from /proc.

    scripts/bench-scale.py --pipeline .build/release/pipeline --records 200000
"""
import argparse
import csv
import json
import os
import selectors
import subprocess
import time
import urllib.parse
import urllib.request

from benchlib import cpu_seconds, emulator as running_emulator


def run_measured(command):
    """Runs a command; returns its stdout, wall seconds, CPU seconds and peak RSS (MB) — its own."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read the pipes while waiting, then reap the child with wait4 to get its own rusage.
    out, err = b"", b""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    selector.register(process.stderr, selectors.EVENT_READ)
    open_pipes = 2
    while open_pipes:
        for key, _ in selector.select():
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
    return out.decode(), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def bare_insert(csv_path, db_path):
    """The bare reference for staging: the same CSV parsed, the same JSON built, and inserted into
    SQLite with the soup's three indexed columns — no soup store, no sync fields beyond the flags."""
    import sqlite3
    start = time.monotonic()
    cpu0 = time.process_time()
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("CREATE TABLE soup (id INTEGER PRIMARY KEY, soup TEXT, created INTEGER, lastModified INTEGER, "
               "c_id TEXT, c_name TEXT, c_local TEXT)")
    for column in ("c_id", "c_name", "c_local"):
        db.execute(f"CREATE INDEX soup_{column} ON soup ({column})")
    now = int(time.time() * 1000)

    def rows():
        with open(csv_path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader)
            for row in reader:
                record = {"attributes": {"type": "Account"}}
                record.update(zip(header, row))
                record.update({"__local__": False, "__locally_created__": False, "__locally_updated__": False,
                               "__locally_deleted__": False})
                yield (json.dumps(record, separators=(",", ":")), now, now, None, record["Name"], "false")

    db.executemany("INSERT INTO soup (soup, created, lastModified, c_id, c_name, c_local) VALUES (?, ?, ?, ?, ?, ?)", rows())
    db.commit()
    db.close()
    return time.monotonic() - start, time.process_time() - cpu0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", default=".build/release/pipeline")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--perf", help="record one stage's run with `perf record -g` into this file")
    parser.add_argument("--heaptrack", help="record one stage's run with `heaptrack` into this file (without its .zst)")
    parser.add_argument("--perf-stage", choices=["up", "down"], default="up",
                        help="the stage --perf or --heaptrack records (default: up)")
    args = parser.parse_args()

    with running_emulator(args.pipeline, "bench-scale-") as (emulator, fields, folder):
        instance, token = fields["instance_url"], fields["access_token"]
        with open(os.path.join(folder, "accounts.csv"), "w") as f:
            f.write("Name,Industry\n")
            for i in range(args.records):
                f.write(f"Scale account {i},Energy\n")
        pipeline = {
            "name": "scale", "store": "store.sqlite",
            "org": {"instanceUrl": instance, "auth": {"flow": "access_token", "accessToken": "${TOKEN}"}},
            "soups": [{"soupName": "Accounts", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"},
                                                          {"path": "__local__", "type": "string"}]}],
            "syncs": [{"syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": {"createFieldlist": ["Name", "Industry"]}},
                      {"syncName": "down", "syncType": "syncDown", "soupName": "Accounts",
                       "target": {"type": "soql", "query": "SELECT Id, Name, Industry, LastModifiedDate FROM Account WHERE Name LIKE 'Scale account %'"},
                       "options": {"mergeMode": "OVERWRITE"}}],
            "stages": [
                {"id": "read", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account"},
                {"id": "stage", "type": "stage", "from": "read", "soup": "Accounts"},
                # The same rows again, every one matched by name (and unchanged): the re-load.
                {"id": "reload", "type": "stage", "from": "read", "soup": "Accounts", "matchOn": "Name"},
                {"id": "mark", "type": "markDirty", "after": ["stage"], "soup": "Accounts", "as": "created"},
                {"id": "up", "type": "syncUp", "after": ["mark"], "sync": "up"},
                {"id": "down", "type": "syncDown", "after": ["up"], "sync": "down"},
            ],
        }
        path = os.path.join(folder, "pipeline.json")
        with open(path, "w") as f:
            json.dump(pipeline, f)
        base = [args.pipeline, "run", path, "--quiet", "--var", f"TOKEN={token}"]

        bare_wall, bare_cpu = bare_insert(os.path.join(folder, "accounts.csv"), os.path.join(folder, "bare.sqlite"))
        _, stage_wall, stage_cpu, stage_rss = run_measured(base + ["--only", "read", "--only", "stage"])
        print(f"staging: {args.records:,} rows CSV → soup: {stage_wall:.1f} s wall, {stage_cpu:.1f} s CPU, peak {stage_rss:.0f} MB; "
              f"bare CSV → JSON → SQLite (Python): {bare_wall:.1f} s wall, {bare_cpu:.1f} s CPU — staging at "
              f"{bare_wall / stage_wall:.2f}× the bare rate")
        _, reload_wall, reload_cpu, reload_rss = run_measured(base + ["--only", "read", "--only", "reload"])
        print(f"re-load: the same rows matched by Name: {reload_wall:.1f} s wall, {reload_cpu:.1f} s CPU, peak {reload_rss:.0f} MB")
        _, mark_wall, mark_cpu, _ = run_measured(base + ["--only", "mark"])
        print(f"markDirty: {mark_wall:.1f} s wall, {mark_cpu:.1f} s CPU")

        cpu0 = cpu_seconds(emulator.pid)
        def profile(stage):
            if args.perf_stage != stage:
                return []
            if args.perf:
                return ["perf", "record", "-g", "-o", args.perf, "--"]
            return ["heaptrack", "-o", args.heaptrack] if args.heaptrack else []
        out, up_wall, up_cpu, up_rss = run_measured(profile("up") + base + ["--only", "up"])
        org_cpu = cpu_seconds(emulator.pid) - cpu0
        report = json.load(open(os.path.join(out.strip().splitlines()[-1], "report.json")))
        by_kind = report["api"]["byKind"]
        polls = by_kind.get("bulkStatus", 0)
        created = report["stages"][0]["counts"].get("created", 0)
        assert created == args.records, report["stages"][0]
        print(f"sync up: {created:,} created, {report['api']['requests'] - polls} requests besides {polls} status polls "
              f"({', '.join(f'{k} {v}' for k, v in sorted(by_kind.items()))}): {up_wall:.1f} s wall, client {up_cpu:.1f} s CPU "
              f"({up_cpu / stage_cpu:.2f}× staging's), peak {up_rss:.0f} MB; emulator {org_cpu:.1f} s CPU")

        # Raw page fetch of the sync down's query, then the sync down itself.
        def call(url):
            request = urllib.request.Request(url)
            request.add_header("Authorization", "Bearer " + token)
            with urllib.request.urlopen(request) as answer:
                return json.loads(answer.read())
        # The query the sync sends: its own, ordered by modification date (so progress can be saved).
        soql = pipeline["syncs"][1]["target"]["query"] + " ORDER BY LastModifiedDate"
        cpu0, start = cpu_seconds(emulator.pid), time.monotonic()
        page = call(instance + "/services/data/v62.0/query?q=" + urllib.parse.quote(soql))
        fetched = len(page["records"])
        while page.get("nextRecordsUrl"):
            page = call(instance + page["nextRecordsUrl"])
            fetched += len(page["records"])
        raw_wall, raw_org_cpu = time.monotonic() - start, cpu_seconds(emulator.pid) - cpu0
        cpu0 = cpu_seconds(emulator.pid)
        _, down_wall, down_cpu, down_rss = run_measured(profile("down") + base + ["--only", "down"])
        down_org_cpu = cpu_seconds(emulator.pid) - cpu0
        print(f"sync down: {fetched:,} records, {down_wall:.1f} s against {raw_wall:.1f} s for the raw page fetch "
              f"({down_wall / raw_wall:.2f}×), client {down_cpu:.1f} s CPU, peak {down_rss:.0f} MB; "
              f"emulator {down_org_cpu:.1f} s CPU (raw fetch: {raw_org_cpu:.1f} s)")


if __name__ == "__main__":
    main()
