import os, sys, json, importlib.util, statistics
sys.path.insert(0, os.path.dirname(__file__))
spec = importlib.util.spec_from_file_location("bs", os.path.join(os.path.dirname(__file__), "bench-scale.py"))
bs = importlib.util.module_from_spec(spec); spec.loader.exec_module(bs)
n = int(sys.argv[1]); reps = int(sys.argv[2]); order = sys.argv[3].split(",")
with bs.running_emulator("/tmp/jr/pipeline-base", "bench-scale-") as (emulator, fields, folder):
    with open(os.path.join(folder, "accounts.csv"), "w") as f:
        f.write("Name,Industry\n")
        for i in range(n): f.write(f"Scale account {i},Energy\n")
    res = {k: [] for k in order}
    for rep in range(reps):
        for name in res:
            store = os.path.join(folder, f"store-{name}-{rep}.sqlite")
            pipeline = {"name": "scale", "store": store,
                "org": {"instanceUrl": fields["instance_url"], "auth": {"flow": "access_token", "accessToken": "${TOKEN}"}},
                "soups": [{"soupName": "Accounts", "indexes": [{"path": "Id", "type": "string"}, {"path": "Name", "type": "string"}, {"path": "__local__", "type": "string"}]}],
                "stages": [{"id": "read", "type": "extract.csv", "file": "accounts.csv", "sobjectType": "Account"},
                           {"id": "stage", "type": "stage", "from": "read", "soup": "Accounts"}]}
            path = os.path.join(folder, "p.json"); json.dump(pipeline, open(path, "w"))
            _, wall, cpu, rss = bs.run_measured([f"/tmp/jr/pipeline-{name}", "run", path, "--quiet", "--var", "TOKEN=" + fields["access_token"]])
            res[name].append((wall, cpu, rss))
            for suffix in ("", "-wal", "-shm", "-datasets", "-datasets-wal", "-datasets-shm"):
                try: os.remove(store + suffix)
                except FileNotFoundError: pass
    for k, v in res.items():
        print(k, "wall", [round(x[0], 2) for x in v], "cpu", [round(x[1], 2) for x in v], "rss MB", [round(x[2]) for x in v])
