#!/usr/bin/env python3
"""The transform bar (issue 51): N CSV rows staged into a soup through a `transform` (five `set`
formulas, two maps, three masked fields) beside the same rows staged without it, alternating, each
`pipeline run` in a process of its own (as a user runs it: its CPU time and peak memory are its
own, and no run inherits another's heap). The ratio is best against best; medians beside it.

    scripts/bench-transform.py --pipeline .build/release/pipeline --rows 1000000 --rounds 5
"""
import argparse
import json
import os
import re
import statistics
import tempfile

from benchlib import run_measured

SOUPS = [{"soupName": "AccountSoup", "indexes": [{"path": p, "type": "string"} for p in ("Id", "Name", "City")]}]
BAR = 1.25


def write_csv(path, rows):
    """Accounts with a quoted field holding a comma in a third of the rows."""
    with open(path, "w") as out:
        out.write("Name,Industry,City,Employees,Description\n")
        for index in range(rows):
            description = '"Plain, with a comma"' if index % 3 == 0 else "Plain text"
            out.write(f"Account {index},Technology,City {index % 97},{index % 5000},{description}\n")


def pipelines(folder, csv_path):
    """The plain load and the load through a transform, as pipeline files."""
    extract = {"id": "csv", "type": "extract.csv", "file": csv_path, "sobjectType": "Account", "types": {"Employees": "integer"}}
    transform = {
        "id": "shape", "type": "transform", "from": "csv",
        "map": {"Industry": {"values": {"Technology": "Tech", "Energy": "Power"}, "otherwise": "keep"},
                "City": {"values": {f"City {n}": f"Town {n}" for n in range(97)}, "otherwise": "null"}},
        "set": {"Name": "TRIM(Name)", "Industry": "UPPER(Industry)", "Description": "LEFT(Description, 200)",
                "Size__c": 'IF(Employees > 1000, "Large", "Small")', "Label__c": "Name & ' - ' & City"},
        "mask": {"City": "city", "Description": "text", "Label__c": "company"}, "maskSeed": "${SEED}",
    }
    paths = {}
    for name, stages in (("plain", [extract, {"id": "stage", "type": "stage", "from": "csv", "soup": "AccountSoup", "matchOn": "Name"}]),
                         ("transform", [extract, transform, {"id": "stage", "type": "stage", "from": "shape", "soup": "AccountSoup", "matchOn": "Name"}])):
        paths[name] = os.path.join(folder, f"{name}.json")
        with open(paths[name], "w") as out:
            json.dump({"name": name, "store": os.path.join(folder, f"{name}.sqlite"), "soups": SOUPS, "stages": stages}, out)
    return paths


def run(pipeline, path, rows):
    """One load into a fresh store; its wall and CPU seconds and peak memory (MB)."""
    folder = os.path.dirname(path)
    for name in os.listdir(folder):
        if name.startswith(os.path.basename(path)[:-5] + ".sqlite"):
            os.remove(os.path.join(folder, name))
    out, wall, cpu, peak = run_measured([pipeline, "run", path, "--var", "SEED=benchmark-seed"])
    created = re.search(r"^stage\s+stage\s+succeeded\s.*\bcreated=(\d+)", out, re.MULTILINE)
    if not created or int(created.group(1)) != rows:
        raise SystemExit(f"{path}: expected {rows} created:\n{out}")
    return wall, cpu, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pipeline", default=".build/release/pipeline")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-transform-") as folder:
        csv_path = os.path.join(folder, "accounts.csv")
        write_csv(csv_path, args.rows)
        paths = pipelines(folder, csv_path)
        times = {"plain": [], "transform": []}
        for round_number in range(1, args.rounds + 1):
            (plain_wall, plain_cpu, plain_peak) = run(args.pipeline, paths["plain"], args.rows)
            (shaped_wall, shaped_cpu, shaped_peak) = run(args.pipeline, paths["transform"], args.rows)
            times["plain"].append(plain_wall)
            times["transform"].append(shaped_wall)
            print(f"  round {round_number}: plain {plain_wall:.2f} s ({plain_cpu:.1f} s CPU, {plain_peak:.0f} MB), "
                  f"through a transform {shaped_wall:.2f} s ({shaped_cpu:.1f} s CPU, {shaped_peak:.0f} MB): "
                  f"{shaped_wall / plain_wall:.2f}×", flush=True)
        best = min(times["transform"]) / min(times["plain"])
        median = statistics.median(times["transform"]) / statistics.median(times["plain"])
        print(f"  transform, {args.rows} rows: best {min(times['transform']):.2f} s against best plain {min(times['plain']):.2f} s: "
              f"{best:.2f}× (medians {median:.2f}×; bar: {BAR}×)")


if __name__ == "__main__":
    main()
