#!/usr/bin/env python3
"""The emulator's own throughput per second of its CPU (issue 20): a Bulk API 2.0 ingest job of N
Accounts processed in the background, and the same records read back through REST query pages.

The emulator runs as its own process (`pipeline emulator`, release build); its CPU time is read
from /proc before and after each phase, so the client's work (this script) is not counted.

    scripts/bench-emulator.py --pipeline .build/release/pipeline --records 100000
"""
import argparse
import json
import os
import time
import urllib.request

from benchlib import cpu_seconds, emulator as running_emulator


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", default=".build/release/pipeline")
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()

    with running_emulator(args.pipeline, "bench-emulator-") as (emulator, fields, folder):
        base, token = fields["instance_url"] + "/services/data/v62.0", fields["access_token"]

        def call(method, path, body=None, content_type="application/json", raw=False):
            data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
            request = urllib.request.Request(base + path if path.startswith("/") and not path.startswith("/services") else
                                             fields["instance_url"] + path, data=data, method=method)
            request.add_header("Authorization", "Bearer " + token)
            request.add_header("Content-Type", content_type)
            with urllib.request.urlopen(request) as answer:
                payload = answer.read()
                return payload if raw else (json.loads(payload) if payload else None)

        rows = "".join(f"Bench {i},Energy,{i % 5000},BENCH-{i}\n" for i in range(args.records))
        csv = ("Name,Industry,NumberOfEmployees,External_Id__c\n" + rows).encode()

        # Ingest: one job, one upload; CPU from the close to JobComplete (the upload's receipt before).
        job = call("POST", "/jobs/ingest", {"object": "Account", "operation": "insert", "contentType": "CSV", "lineEnding": "LF"})
        call("PUT", f"/jobs/ingest/{job['id']}/batches", csv, content_type="text/csv", raw=True)
        cpu0, wall0 = cpu_seconds(emulator.pid), time.monotonic()
        call("PATCH", f"/jobs/ingest/{job['id']}", {"state": "UploadComplete"})
        polls, seen_in_progress = 0, 0
        while True:
            info = call("GET", f"/jobs/ingest/{job['id']}")
            polls += 1
            if info["state"] == "InProgress" and 0 < info["numberRecordsProcessed"] < args.records:
                seen_in_progress += 1
            if info["state"] in ("JobComplete", "Failed", "Aborted"):
                break
            time.sleep(0.2)
        ingest_cpu, ingest_wall = cpu_seconds(emulator.pid) - cpu0, time.monotonic() - wall0
        assert info["state"] == "JobComplete" and info["numberRecordsProcessed"] == args.records, info
        print(f"ingest: {args.records:,} Accounts in one Bulk 2.0 job: {ingest_wall:.1f} s wall, {ingest_cpu:.1f} s emulator CPU, "
              f"{args.records / ingest_cpu:,.0f} records per CPU second ({polls} polls, {seen_in_progress} saw it InProgress part-way)")

        # Query pages: every record back through nextRecordsUrl (2,000 a page).
        cpu0, wall0 = cpu_seconds(emulator.pid), time.monotonic()
        page = call("GET", "/query?q=SELECT+Id,Name,Industry,NumberOfEmployees,External_Id__c+FROM+Account+WHERE+Name+LIKE+'Bench%25'")
        fetched, pages = len(page["records"]), 1
        while page.get("nextRecordsUrl"):
            page = call("GET", page["nextRecordsUrl"])
            fetched, pages = fetched + len(page["records"]), pages + 1
        query_cpu, query_wall = cpu_seconds(emulator.pid) - cpu0, time.monotonic() - wall0
        assert fetched == args.records, fetched
        print(f"query: {fetched:,} records in {pages} pages: {query_wall:.1f} s wall, {query_cpu:.1f} s emulator CPU, "
              f"{fetched / query_cpu:,.0f} records per CPU second")


if __name__ == "__main__":
    main()
