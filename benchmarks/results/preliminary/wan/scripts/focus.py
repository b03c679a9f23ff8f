"""Side-by-side: archivefs get (before: HEAD code, after: this branch), prefetch --to, boto3, aws cli."""
import json, os, random, statistics, sys, tempfile, time
sys.path.insert(0, "/work/wt-wan")
from benchmarks import line_rate as lr
from benchmarks._common import sample
from benchmarks._shaping_proxy import ShapingProxy
MiB = 2**20
OLD = "/tmp/wan/orig/src"
NEW = "/tmp/wan/new/src"

def main():
    server_kind, samples = sys.argv[1], int(sys.argv[2])
    workloads = sys.argv[3].split(",")
    from archivefs.testing import LocalRGW, RemoteArchive
    server = LocalRGW() if server_kind == "rgw" else RemoteArchive(latency=0.0)
    rng = random.Random(35)
    with server:
        server.create_bucket(lr.BUCKET)
        objects = {"startup": [1024], "one": [64 * MiB], "big": [300 * MiB], "several": [int(64 * MiB * rng.uniform(0.95, 1.05)) for _ in range(4)]}
        for prefix, sizes in objects.items():
            if prefix not in workloads and prefix != "startup":
                continue
            for i, n in enumerate(sizes):
                server.put_object(lr.BUCKET, f"{prefix}/object-{i}", lr._payload(rng, n))
        with ShapingProxy(server.endpoint_url, latency=lr.LATENCY, rate=lr.RATE) as proxy:
            def variant(command, prefix, src):
                def measure(i):
                    with tempfile.TemporaryDirectory() as tmp:
                        dest = f"{tmp}/out"; os.mkdir(dest)
                        env = lr._environment(server, tmp)
                        env["PYTHONPATH"] = os.pathsep.join(["/work/wt-wan", src])
                        server.requests.clear() if hasattr(server, "requests") else None
                        seconds, peak = lr._run_command(lr._commands(command, prefix, dest, proxy.endpoint_url, tmp), env, tmp)
                        files, nbytes = lr._downloaded(dest)
                    counts = server.requests.counts() if hasattr(server, "requests") else {}
                    return {"seconds": seconds, "bytes": nbytes, "peak_MiB": peak / MiB, "GET": counts.get("GET", 0), "HEAD": counts.get("HEAD", 0), "load": os.getloadavg()[0]}
                return measure
            names = {"get_before": ("archivefs_get", OLD), "get_after": ("archivefs_get", NEW),
                     "prefetch_before": ("archivefs_prefetch", OLD), "prefetch_after": ("archivefs_prefetch", NEW),
                     "boto3": ("boto3_transfer", NEW), "aws_cli": ("aws_cli", NEW)}
            out = {}
            for w in ["startup", *workloads]:
                runs = sample({n: variant(c, w, s) for n, (c, s) in names.items()}, samples if w != "startup" else 3, warmup=True)
                out[w] = runs
                print(w, {n: round(statistics.median(x["seconds"] for x in r), 3) for n, r in runs.items()}, flush=True)
            startup = {n: statistics.median(x["seconds"] for x in r) for n, r in out["startup"].items()}
            summary = {}
            for w in workloads:
                runs = out[w]
                nbytes = runs["boto3"][0]["bytes"]
                med = {n: statistics.median(x["seconds"] for x in r) for n, r in runs.items()}
                net = {n: nbytes / max(med[n] - startup[n], 1e-3) / 1e6 for n in med}
                gross = {n: nbytes / med[n] / 1e6 for n in med}
                summary[w] = {"bytes": nbytes, "median_seconds": med, "net_MB_per_s": net, "MB_per_s": gross,
                              "peak_MiB": {n: statistics.median(x["peak_MiB"] for x in r) for n, r in runs.items()},
                              "GET": {n: r[0]["GET"] for n, r in runs.items()}, "HEAD": {n: r[0]["HEAD"] for n, r in runs.items()},
                              "ratios_net_vs_boto3": {n: net[n] / net["boto3"] for n in med},
                              "ratios_net_vs_aws_cli": {n: net[n] / net["aws_cli"] for n in med},
                              "ratios_start_to_exit_vs_boto3": {n: gross[n] / gross["boto3"] for n in med},
                              "load_1min": [x["load"] for r in runs.values() for x in r]}
                print(w, json.dumps({k: v for k, v in summary[w].items() if k.startswith("ratios") or k in ("peak_MiB", "GET", "HEAD")}, indent=None), flush=True)
            json.dump({"server": server_kind, "startup_seconds": startup, "summary": summary, "runs": out}, open(f"/tmp/wan/focus_{server_kind}_{'_'.join(workloads)}.json", "w"), indent=1)

if __name__ == "__main__":
    main()
