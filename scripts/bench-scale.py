#!/usr/bin/env python3
"""The scale path (issue 20), client and org in separate processes: N Accounts from CSV staged into
a soup (`extract.csv` → `stage`, then `markDirty`), then synced up with the default strategy (Bulk API
2.0 above the threshold), then synced down again through REST query pages beside a raw fetch of the
same pages (at 0 ms, `--down-rounds` times with the median ratio reported, then at 50 ms of latency
a request; the store put back as before the sync down in between), and through a Bulk API 2.0 query
job (into a soup of its own) beside the same job's rows fetched raw; then 1% of the records are
deleted in the org and `cleanGhosts` removes them locally, beside a raw fetch of the ids it asks
for. Each `pipeline run` is its own process, so its CPU time and peak memory are its own; the
emulator (`pipeline emulator`) runs apart and its CPU is read from /proc.

    scripts/bench-scale.py --pipeline .build/release/pipeline --records 200000
"""
import argparse
import contextlib
import csv
import json
import os
import sqlite3
import statistics
import time
import urllib.error
import urllib.parse
import urllib.request

from benchlib import cpu_seconds, emulator as running_emulator, run_measured


def bare_insert(csv_path, db_path):
    """The bare reference for staging: the same CSV parsed, the same JSON built, and inserted into
    SQLite with the soup's three indexed columns — no soup store, no sync fields beyond the flags."""
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


def copy_store(source, target):
    """A consistent copy of the SQLite store `source` at `target` (through SQLite's backup API)."""
    with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as origin, \
            contextlib.closing(sqlite3.connect(target)) as copy:
        origin.backup(copy)


def restore_store(copy, store, keep=False):
    """Puts the copy back as the store, without the store's WAL and shared-memory files; removes
    the copy unless `keep`."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    copy_store(copy, store)
    if not keep:
        os.remove(copy)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", default=".build/release/pipeline")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--down-rounds", type=int, default=3,
                        help="pairs of raw fetch and sync down at 0 ms, the median ratio reported (default: 3)")
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
            "soups": [{"soupName": soup, "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"},
                                                    {"path": "__local__", "type": "string"}]} for soup in ("Accounts", "BulkAccounts")],
            "syncs": [{"syncName": "up", "syncType": "syncUp", "soupName": "Accounts", "target": {"createFieldlist": ["Name", "Industry"]}},
                      {"syncName": "down", "syncType": "syncDown", "soupName": "Accounts",
                       "target": {"type": "soql", "query": "SELECT Id, Name, Industry, LastModifiedDate FROM Account WHERE Name LIKE 'Scale account %'"},
                       "options": {"mergeMode": "OVERWRITE"}},
                      {"syncName": "down-bulk", "syncType": "syncDown", "soupName": "BulkAccounts",
                       "target": {"type": "soql", "bulk": True,
                                  "query": "SELECT Id, Name, Industry, LastModifiedDate FROM Account WHERE Name LIKE 'Scale account %'"},
                       "options": {"mergeMode": "OVERWRITE"}}],
            "stages": [
                {"id": "read", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account"},
                {"id": "stage", "type": "stage", "from": "read", "soup": "Accounts"},
                # The same rows again, every one matched by name (and unchanged): the re-load.
                {"id": "reload", "type": "stage", "from": "read", "soup": "Accounts", "matchOn": "Name"},
                {"id": "mark", "type": "markDirty", "after": ["stage"], "soup": "Accounts", "as": "created"},
                {"id": "up", "type": "syncUp", "after": ["mark"], "sync": "up"},
                {"id": "down", "type": "syncDown", "after": ["up"], "sync": "down"},
                {"id": "down-bulk", "type": "syncDown", "after": ["up"], "sync": "down-bulk"},
                {"id": "ghosts", "type": "cleanGhosts", "after": ["down"], "sync": "down"},
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
        def call(url, method="GET", body=None, raw=False):
            request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
            request.add_header("Authorization", "Bearer " + token)
            if body is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request) as answer:
                    return (answer.read(), answer.headers) if raw else json.loads(answer.read())
            except urllib.error.HTTPError as error:
                raise SystemExit(f"{method} {url[:200]}: HTTP {error.code}: {error.read().decode()[:2000]}")

        def fetch_pages(soql):
            """Every page of a REST query read one after another; the ids it returned."""
            page = call(instance + "/services/data/v62.0/query?q=" + urllib.parse.quote(soql))
            ids = [record["Id"] for record in page["records"]]
            while page.get("nextRecordsUrl"):
                page = call(instance + page["nextRecordsUrl"])
                ids += [record["Id"] for record in page["records"]]
            return ids
        # The query the sync sends: its own, ordered by modification date (so progress can be saved).
        soql = pipeline["syncs"][1]["target"]["query"] + " ORDER BY LastModifiedDate"
        # Noisy on a shared machine: `--down-rounds` pairs of raw fetch and sync down, the store put
        # back as it was before the sync down between rounds; the median ratio is the figure.
        store = os.path.join(folder, "store.sqlite")
        copy_store(store, store + ".before-down")
        rounds = []
        for round_number in range(args.down_rounds):
            if round_number > 0:
                restore_store(store + ".before-down", store, keep=True)
            cpu0, start = cpu_seconds(emulator.pid), time.monotonic()
            ids = fetch_pages(soql)
            fetched = len(ids)
            raw_wall, raw_org_cpu = time.monotonic() - start, cpu_seconds(emulator.pid) - cpu0
            cpu0 = cpu_seconds(emulator.pid)
            _, down_wall, down_cpu, down_rss = run_measured((profile("down") if round_number == 0 else []) + base + ["--only", "down"])
            down_org_cpu = cpu_seconds(emulator.pid) - cpu0
            rounds.append(down_wall / raw_wall)
            print(f"sync down: {fetched:,} records, {down_wall:.1f} s against {raw_wall:.1f} s for the raw page fetch "
                  f"({down_wall / raw_wall:.2f}×), client {down_cpu:.1f} s CPU, peak {down_rss:.0f} MB; "
                  f"emulator {down_org_cpu:.1f} s CPU (raw fetch: {raw_org_cpu:.1f} s)")
        if len(rounds) > 1:
            print(f"sync down: median {statistics.median(rounds):.2f}× the raw page fetch over {len(rounds)} rounds "
                  f"({', '.join(f'{ratio:.2f}×' for ratio in rounds)})")

        # The same two with 50 ms of latency a request, as an org over a network answers: the pages
        # are stored while the org is waited on. The store is put back as it was before the sync
        # down, so this one stores the same changes; then the store is as after the first.
        latency = 50
        call(instance + "/emulator/faults", "POST", {"latencyMs": latency})
        start = time.monotonic()
        fetch_pages(soql)
        slow_raw_wall = time.monotonic() - start
        copy_store(store, store + ".after-down")
        restore_store(store + ".before-down", store)
        _, slow_down_wall, slow_down_cpu, _ = run_measured(base + ["--only", "down"])
        call(instance + "/emulator/faults", "POST", {})
        restore_store(store + ".after-down", store)
        print(f"sync down at {latency} ms a request: {slow_down_wall:.1f} s against {slow_raw_wall:.1f} s for the raw page fetch "
              f"({slow_down_wall / slow_raw_wall:.2f}×), client {slow_down_cpu:.1f} s CPU")

        # A Bulk 2.0 query job of the same query, its rows fetched raw (status polled every 0.1 s,
        # result pages of 50,000 rows as the client asks), then the sync down through one.
        bulk_soql = pipeline["syncs"][2]["target"]["query"]
        cpu0, start = cpu_seconds(emulator.pid), time.monotonic()
        job = call(instance + "/services/data/v62.0/jobs/query", "POST", {"operation": "query", "query": bulk_soql})["id"]
        while call(instance + f"/services/data/v62.0/jobs/query/{job}")["state"] != "JobComplete":
            time.sleep(0.1)
        rows, locator = 0, None
        while True:
            text, headers = call(instance + f"/services/data/v62.0/jobs/query/{job}/results?maxRecords=50000"
                                 + (f"&locator={locator}" if locator else ""), raw=True)
            rows += max(0, len(list(csv.reader(text.decode().splitlines()))) - 1)
            locator = headers.get("Sforce-Locator")
            if not locator or locator == "null":
                break
        bulk_raw_wall, bulk_raw_org_cpu = time.monotonic() - start, cpu_seconds(emulator.pid) - cpu0
        cpu0 = cpu_seconds(emulator.pid)
        out, bulk_wall, bulk_cpu, bulk_rss = run_measured(base + ["--only", "down-bulk"])
        bulk_org_cpu = cpu_seconds(emulator.pid) - cpu0
        report = json.load(open(os.path.join(out.strip().splitlines()[-1], "report.json")))
        stored = sum(report["stages"][0]["counts"].values())
        assert rows == fetched and stored == rows, (rows, fetched, report["stages"][0])
        print(f"sync down through a Bulk query job (into an empty soup): {rows:,} records, {bulk_wall:.1f} s against "
              f"{bulk_raw_wall:.1f} s for the job's rows fetched raw ({bulk_wall / bulk_raw_wall:.2f}×), client {bulk_cpu:.1f} s CPU, "
              f"peak {bulk_rss:.0f} MB; emulator {bulk_org_cpu:.1f} s CPU (raw: {bulk_raw_org_cpu:.1f} s)")

        # 1% of the records deleted in the org (not timed), then cleanGhosts beside a raw fetch
        # of the ids it asks for.
        gone = ids[::100]
        for start_index in range(0, len(gone), 200):
            call(instance + "/services/data/v62.0/composite/sobjects?allOrNone=false&ids="
                 + ",".join(gone[start_index:start_index + 200]), "DELETE")
        id_soql = "SELECT Id FROM Account WHERE Name LIKE 'Scale account %'"
        cpu0, start = cpu_seconds(emulator.pid), time.monotonic()
        left = len(fetch_pages(id_soql))
        ids_wall, ids_org_cpu = time.monotonic() - start, cpu_seconds(emulator.pid) - cpu0
        cpu0 = cpu_seconds(emulator.pid)
        out, ghost_wall, ghost_cpu, ghost_rss = run_measured(base + ["--only", "ghosts"])
        ghost_org_cpu = cpu_seconds(emulator.pid) - cpu0
        report = json.load(open(os.path.join(out.strip().splitlines()[-1], "report.json")))
        removed = report["stages"][0]["counts"].get("ghostsRemoved", 0)
        assert removed == len(gone) and left == fetched - len(gone), (removed, len(gone), left, report["stages"][0])
        print(f"cleanGhosts: {removed:,} ghosts among {fetched:,} entries, {ghost_wall:.1f} s against {ids_wall:.1f} s for the raw "
              f"fetch of the ids ({ghost_wall / ids_wall:.2f}×), client {ghost_cpu:.1f} s CPU, peak {ghost_rss:.0f} MB; "
              f"emulator {ghost_org_cpu:.1f} s CPU (raw: {ids_org_cpu:.1f} s)")


if __name__ == "__main__":
    main()
