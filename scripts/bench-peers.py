#!/usr/bin/env python3
"""The CSV → org journey side by side with the tools people use instead (issue 20).

Loads N accounts with 5 contacts each from CSV files into a fresh `pipeline emulator` with 0 and
50 ms of latency per request, three ways:
  * `pipeline run`: extract.csv → stage (contacts linked to their accounts, each entry flagged as it
    is written: `markDirty: true`) → syncUp (auto); and beside it the same with `markDirty` stages
    after the `stage` stages (a second pass over the soups);
  * a plain simple-salesforce script: sObject Collections of 200, accounts then contacts, ids mapped;
  * CumulusCI `load_dataset` at its defaults (REST below 2,000 records a step, Bulk API 1.0 above).
Prints wall time, the CPU time of the tool's process (medians of --rounds runs, the tools taken in
turn), and the API requests the org counted.

    scripts/bench-peers.py [--trees N] [--rounds 5] [--pipeline .build/release/pipeline]

simple-salesforce runs from this Python; CumulusCI from .build/conformance/cumulusci (see .ci/run).
"""
import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Conformance"))
from conftest import CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN, SEED, write_test_certificate  # noqa: E402


def start_emulator(binary, latency, *extra):
    process = subprocess.Popen([binary, "emulator", "--port", "0", "--seed", SEED, "--latency-ms", str(latency), *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    fields = dict(part.split("=", 1) for part in process.stdout.readline().strip().split(" "))
    return process, fields


def org_requests(fields, verify=True):
    stats = requests.get(fields["instance_url"] + "/emulator/stats", verify=verify,
                         headers={"Authorization": "Bearer " + fields["access_token"]}).json()
    by_kind = stats["requests"]["byKind"]
    # The versions list and OAuth are outside an org's API limits.
    return sum(count for kind, count in by_kind.items() if kind not in ("versions", "auth"))


def write_csvs(folder, trees):
    with open(os.path.join(folder, "accounts.csv"), "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["Name", "Industry"])
        writer.writerows([f"Bench Co {i:05d}", "Energy"] for i in range(trees))
    with open(os.path.join(folder, "contacts.csv"), "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["LastName", "FirstName", "AccountName"])
        writer.writerows([f"Contact {i:05d}-{j}", "Pat", f"Bench Co {i:05d}"] for i in range(trees) for j in range(5))


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_pipeline(binary, folder, fields, mark_as_staged=True):
    """The journey through `pipeline run`: each `stage` flags what it writes (`markDirty: true`),
    or, with `mark_as_staged` false, `markDirty` stages after them (a second pass over the soups)."""
    pipeline = {
        "name": "bench", "store": os.path.join(folder, "store.sqlite"),
        "org": {"instanceUrl": fields["instance_url"], "auth": {"flow": "access_token", "accessToken": "${BENCH_TOKEN}"}},
        "soups": os.path.join(ROOT, "samples", "userstore.json"), "syncs": os.path.join(ROOT, "samples", "usersyncs.json"),
        "stages": [
            {"id": "accounts", "type": "extract.csv", "file": os.path.join(folder, "accounts.csv"), "sobjectType": "Account"},
            {"id": "stage-accounts", "type": "stage", "from": "accounts", "soup": "AccountSoup", "matchOn": "Name"},
            {"id": "contacts", "type": "extract.csv", "file": os.path.join(folder, "contacts.csv"), "sobjectType": "Contact"},
            {"id": "stage-contacts", "type": "stage", "from": "contacts", "after": ["stage-accounts"], "soup": "ContactSoup",
             "matchOn": "LastName", "parent": {"soup": "AccountSoup", "key": "AccountName", "matchOn": "Name", "idField": "AccountId"}},
            {"id": "mark-accounts", "type": "markDirty", "after": ["stage-contacts"], "soup": "AccountSoup", "as": "created"},
            {"id": "mark-contacts", "type": "markDirty", "after": ["stage-contacts"], "soup": "ContactSoup", "as": "created"},
            {"id": "up", "type": "syncUp", "after": ["mark-accounts", "mark-contacts"], "sync": "UpSync"},
        ],
    }
    if mark_as_staged:
        stages = [stage for stage in pipeline["stages"] if stage["type"] != "markDirty"]
        for stage in stages:
            if stage["type"] == "stage":
                stage["markDirty"] = True
        stages[-1]["after"] = ["stage-contacts"]
        pipeline["stages"] = stages
    path = os.path.join(folder, "bench.json")
    with open(path, "w") as file:
        json.dump(pipeline, file)
    result = subprocess.run([binary, "run", path] + (["--log-format", "json"] if os.environ.get("BENCH_LOG") else ["--quiet"]), capture_output=True, text=True,
                            env=dict(os.environ, BENCH_TOKEN=fields["access_token"]))
    if result.returncode != 0:
        raise SystemExit("pipeline run failed: " + result.stdout[-2000:] + result.stderr[-2000:])


SIMPLE_SALESFORCE = r'''
import csv, sys, requests
from simple_salesforce import Salesforce
instance, token, folder = sys.argv[1:4]

class Downgrade(requests.adapters.HTTPAdapter):
    def send(self, request, **kwargs):
        request.url = "http://" + request.url.split("://", 1)[1]
        return super().send(request, **kwargs)

session = requests.Session()
session.mount("https://", Downgrade())
sf = Salesforce(instance_url=instance, session_id=token, session=session)
accounts = list(csv.DictReader(open(folder + "/accounts.csv")))
ids = {}
for start in range(0, len(accounts), 200):
    chunk = accounts[start:start + 200]
    results = sf.restful("composite/sobjects", method="POST", json={"allOrNone": False, "records": [
        {"attributes": {"type": "Account"}, "Name": a["Name"], "Industry": a["Industry"]} for a in chunk]})
    for account, result in zip(chunk, results):
        ids[account["Name"]] = result["id"]
contacts = list(csv.DictReader(open(folder + "/contacts.csv")))
for start in range(0, len(contacts), 200):
    chunk = contacts[start:start + 200]
    results = sf.restful("composite/sobjects", method="POST", json={"allOrNone": False, "records": [
        {"attributes": {"type": "Contact"}, "LastName": c["LastName"], "FirstName": c["FirstName"],
         "AccountId": ids[c["AccountName"]]} for c in chunk]})
    assert all(r["success"] for r in results)
'''


def run_simple_salesforce(folder, fields):
    subprocess.run([sys.executable, "-c", SIMPLE_SALESFORCE, fields["instance_url"], fields["access_token"], folder], check=True)


def run_cumulusci(folder, fields, trees, certificate):
    cci = os.path.join(ROOT, ".build", "conformance", "cumulusci", "bin", "cci")
    project = os.path.join(folder, "cci")
    os.makedirs(project)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with open(os.path.join(project, "cumulusci.yml"), "w") as file:
        file.write("project:\n    name: Bench\n")
    with open(os.path.join(project, "mapping.yml"), "w") as file:
        file.write("Accounts:\n    sf_object: Account\n    fields: [Name, Industry]\n"
                   "Contacts:\n    sf_object: Contact\n    fields: [LastName, FirstName]\n    lookups:\n"
                   "        AccountId:\n            table: Account\n")
    lines = ['CREATE TABLE "Account" (id VARCHAR(255) NOT NULL, "Name" VARCHAR(255), "Industry" VARCHAR(255), PRIMARY KEY (id));']
    lines += [f"INSERT INTO \"Account\" VALUES('A{i}','Bench Co {i:05d}','Energy');" for i in range(trees)]
    lines.append('CREATE TABLE "Contact" (id VARCHAR(255) NOT NULL, "LastName" VARCHAR(255), "FirstName" VARCHAR(255), '
                 '"AccountId" VARCHAR(255), PRIMARY KEY (id));')
    lines += [f"INSERT INTO \"Contact\" VALUES('C{i}-{j}','Contact {i:05d}-{j}','Pat','A{i}');" for i in range(trees) for j in range(5)]
    with open(os.path.join(project, "dataset.sql"), "w") as file:
        file.write("\n".join(lines) + "\n")
    environment = dict(os.environ, HOME=project, REQUESTS_CA_BUNDLE=certificate, CUMULUSCI_ORG_emu=json.dumps({
        "instance_url": fields["instance_url"], "refresh_token": REFRESH_TOKEN, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}))
    result = subprocess.run([cci, "task", "run", "load_dataset", "--org", "emu", "-o", "mapping", "mapping.yml",
                             "-o", "sql_path", "dataset.sql"], cwd=project, env=environment, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit("cci failed: " + result.stdout[-2000:])


def measure(name, latency, binary, trees, body, tls=False):
    with tempfile.TemporaryDirectory() as folder:
        write_csvs(folder, trees)
        extra, certificate = [], None
        if tls:
            certificate, key = write_test_certificate(folder, "127.0.0.1")
            extra = ["--tls-cert", certificate, "--tls-key", key]
        process, fields = start_emulator(binary, latency, *extra)
        try:
            before_cpu, started = child_cpu(), time.monotonic()
            body(folder, fields, certificate)
            wall, cpu = time.monotonic() - started, child_cpu() - before_cpu
            count = org_requests(fields, verify=certificate or True)
        finally:
            process.terminate()
            process.wait()
    # The emulator is a child too, but it is still running when the tool's CPU is read.
    return {"name": name, "latency": latency, "wall": wall, "cpu": cpu, "requests": count}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--pipeline", default=os.path.join(ROOT, ".build", "release", "pipeline"))
    parser.add_argument("--rounds", type=int, default=5,
                        help="runs of each tool per latency, taken in turn; medians reported (default: 5)")
    arguments = parser.parse_args()
    binary, trees, rounds = arguments.pipeline, arguments.trees, max(1, arguments.rounds)
    print(f"CSV → org: {trees} accounts × 5 contacts ({trees * 6} records); wall and CPU seconds of the tool "
          f"(medians of {rounds} runs each, the tools in turn), API requests the org counted")
    print(f"{'latency':>7}  {'tool':<28} {'wall s':>7} {'cpu s':>6} {'requests':>8}  vs pipeline  walls")
    tools = [
        ("pipeline run (auto)", lambda f, e, c: run_pipeline(binary, f, e), False),
        ("  with markDirty stages", lambda f, e, c: run_pipeline(binary, f, e, mark_as_staged=False), False),
        ("simple-salesforce script", lambda f, e, c: run_simple_salesforce(f, e), False),
    ]
    if os.path.exists(os.path.join(ROOT, ".build", "conformance", "cumulusci", "bin", "cci")):
        tools.append(("CumulusCI load_dataset", lambda f, e, c: run_cumulusci(f, e, trees, c), True))
    for latency in (0, 50):
        # In turn rather than one tool's runs in a row: a shared machine's drift falls on all alike.
        runs = {name: [] for name, _, _ in tools}
        for _ in range(rounds):
            for name, body, tls in tools:
                runs[name].append(measure(name, latency, binary, trees, body, tls=tls))
        rows = [{"name": name, "wall": statistics.median(r["wall"] for r in runs[name]),
                 "cpu": statistics.median(r["cpu"] for r in runs[name]),
                 "requests": "/".join(str(count) for count in sorted({r["requests"] for r in runs[name]})),
                 "walls": [r["wall"] for r in runs[name]]} for name, _, _ in tools]
        for row in rows:
            ratio = row["wall"] / rows[0]["wall"]
            walls = " ".join(f"{wall:.2f}" for wall in row["walls"])
            print(f"{latency:>5} ms  {row['name']:<28} {row['wall']:>7.2f} {row['cpu']:>6.2f} {row['requests']:>8}  {ratio:>10.2f}x  {walls}")


if __name__ == "__main__":
    main()
