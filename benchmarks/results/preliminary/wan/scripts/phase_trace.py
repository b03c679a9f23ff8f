import json, os, sys, time, shutil
env = json.load(open("/tmp/wan/env_rgw.json"))
from archivefs.filesystem import ArchiveFileSystem
fs = ArchiveFileSystem(target_options={"key": env["key"], "secret": env["secret"],
    "client_kwargs": {"endpoint_url": env["endpoint"], "region_name": env["region"]}},
    journal=False, skip_instance_cache=True)
prefix, warm = sys.argv[1], sys.argv[2]
fs.info(f"linerate/{warm}/object-0")
T0 = time.perf_counter()
log = []
client = fs.fs.s3
def before(params, context, model, **kw):
    context["t"] = time.perf_counter() - T0
def after(http_response, parsed, model, context, **kw):
    log.append((context.get("t", 0), time.perf_counter() - T0, model.name, parsed.get("ContentRange") or ""))
client.meta.events.register("before-call.s3", before)
client.meta.events.register("after-call.s3", after)
out = f"/tmp/wan/out-{os.getpid()}/"
os.makedirs(out)
t = time.perf_counter()
fs.get(f"linerate/{prefix}/", out, recursive=True)
dt = time.perf_counter() - t
shutil.rmtree(out)
print(dt)
for a, b, n, r in sorted(log): print(f"  {a:6.3f} -> {b:6.3f} {n} {r}")
