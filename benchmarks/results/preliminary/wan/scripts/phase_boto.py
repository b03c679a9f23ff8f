import json, os, sys, time, shutil
env = json.load(open(os.environ.get("ENVFILE", "/tmp/wan/env_rgw.json")))
import boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
MiB = 2**20
client = boto3.client("s3", endpoint_url=env["endpoint"], aws_access_key_id=env["key"], aws_secret_access_key=env["secret"], region_name=env["region"])
prefix, warm = sys.argv[1], sys.argv[2]
client.head_object(Bucket="linerate", Key=f"{warm}/object-0")
out = f"/tmp/wan/outb-{os.getpid()}"
os.makedirs(out)
import resource; r0 = resource.getrusage(resource.RUSAGE_SELF); t = time.perf_counter()
keys = [e["Key"] for e in client.list_objects_v2(Bucket="linerate", Prefix=prefix + "/")["Contents"]]
t_data = time.perf_counter()
with create_transfer_manager(client, TransferConfig(max_concurrency=10, multipart_chunksize=8*MiB, multipart_threshold=8*MiB)) as m:
    fs = [m.download("linerate", k, f"{out}/{k.replace('/', '_')}") for k in keys]
    for f in fs: f.result()
dt = time.perf_counter() - t
shutil.rmtree(out)
r1 = resource.getrusage(resource.RUSAGE_SELF); print(json.dumps({"seconds": dt, "data_seconds": t + dt - t_data, "cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime}))
