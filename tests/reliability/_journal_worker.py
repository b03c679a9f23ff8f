"""A process whose 8 threads open one new journal at the same instant and claim keys."""

from __future__ import annotations

import sys
import threading
import time

from archivefs.restore.journal import Journal


def main() -> None:
    path, start, tag = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    errors: list[BaseException] = []

    def claim(i: int) -> None:
        while time.time() < start:
            time.sleep(0.0005)
        try:
            Journal(path, namespace="ns").claim([f"{tag}-{i}", "shared"], tier="Standard", days=1)
        except BaseException as error:  # reported through the exit code
            errors.append(error)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit(f"{len(errors)} thread(s) failed; first: {errors[0]!r}")


if __name__ == "__main__":
    main()
