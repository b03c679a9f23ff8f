import json, os, sys, time, shutil
env = json.load(open(os.environ.get("ENVFILE", "/tmp/wan/env_rgw.json")))
from archivefs.filesystem import ArchiveFileSystem
fs = ArchiveFileSystem(target_options={"key": env["key"], "secret": env["secret"],
    "client_kwargs": {"endpoint_url": env["endpoint"], "region_name": env["region"]}},
    journal=False, skip_instance_cache=True)
prefix, warm = sys.argv[1], sys.argv[2]
fs.info(f"linerate/{warm}/object-0")
out = f"/tmp/wan/out-{os.getpid()}/"
os.makedirs(out)
first = []
def before(model, **kw):
    if model.name == "GetObject" and not first:
        first.append(time.perf_counter())
fs.fs.s3.meta.events.register("before-call.s3", before)
import resource; r0 = resource.getrusage(resource.RUSAGE_SELF); t = time.perf_counter()
fs.get(f"linerate/{prefix}/", out, recursive=True)
dt = time.perf_counter() - t
shutil.rmtree(out)
r1 = resource.getrusage(resource.RUSAGE_SELF); print(json.dumps({"seconds": dt, "data_seconds": t + dt - first[0], "cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime}))
