"""Start RemoteArchive + ShapingProxy, seed objects, write endpoint/env, wait."""
import json, os, random, sys, time, signal
sys.path.insert(0, "/work/wt-wan")
from archivefs.testing import LocalRGW
from benchmarks._shaping_proxy import ShapingProxy
MiB = 2**20
def main():
    sizes = [int(s) for s in sys.argv[1:]] or [64]
    with LocalRGW() as archive:
        archive.create_bucket("linerate")
        rng = random.Random(1)
        for s in sizes:
            data = b"".join(rng.randbytes(MiB) for _ in range(s))
            archive.put_object("linerate", f"one{s}/object-0", data)
        with ShapingProxy(archive.endpoint_url, latency=0.010, rate=40e6) as proxy:
            opts = archive.storage_options()
            json.dump({"endpoint": proxy.endpoint_url, "direct": archive.endpoint_url, "key": opts["key"], "secret": opts["secret"],
                       "region": opts["client_kwargs"]["region_name"]}, open("/tmp/wan/env_rgw.json", "w"))
            print("ready", flush=True)
            while not os.path.exists("/tmp/wan/stop_rgw"):
                time.sleep(1)
if __name__ == '__main__':
    main()
