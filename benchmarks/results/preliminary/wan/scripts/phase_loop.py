import json, os, statistics, subprocess, sys
prefix, warm, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
P = "/work/main/.venv/bin/python"
variants = {"before": ([P, "/tmp/wan/phase_afs.py"], "/tmp/wan/orig/src"), "after": ([P, "/tmp/wan/phase_afs.py"], "/tmp/wan/new/src"),
            "boto3": ([P, "/tmp/wan/phase_boto.py"], "/tmp/wan/new/src")}
res = {k: [] for k in variants}
names = list(variants)
data = {}
for i in range(n):
    order = names[i % 3:] + names[:i % 3]
    for name in order:
        cmd, path = variants[name]
        out = subprocess.run([*cmd, prefix, warm], env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True)
        if out.returncode:
            print(out.stderr[-2000:]); sys.exit(1)
        got = json.loads(out.stdout.strip().splitlines()[-1]); res[name].append(got["seconds"]); data.setdefault(name, []).append(got["data_seconds"])
    print(i, {k: round(v[-1], 3) for k, v in res.items()}, "load", os.getloadavg()[0], flush=True)
med = {k: statistics.median(v) for k, v in res.items()}
print("median s", {k: round(v, 3) for k, v in med.items()}, "ratio (throughput vs boto3)", {k: round(med["boto3"] / v, 3) for k, v in med.items()})
dmed = {k: statistics.median(v) for k, v in data.items()}
print("data phase median s", {k: round(v, 3) for k, v in dmed.items()}, "ratio", {k: round(dmed["boto3"] / v, 3) for k, v in dmed.items()})
json.dump({"prefix": prefix, "samples": res, "median": med, "data_phase_samples": data, "data_phase_median": dmed}, open(f"/tmp/wan/phase_{prefix}_{os.environ.get('TAG','rgw')}.json", "w"))
