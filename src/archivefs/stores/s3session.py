"""The botocore session archivefs gives each s3fs filesystem it makes a store of.

It differs from the one s3fs would make in two ways, neither visible in a response:

- timestamps are read by :func:`~archivefs.stores.timestamps.parse_timestamp` (through
  botocore's documented hook, the response parser factory's ``timestamp_parser``);
- its data loader, which reads botocore's service models and endpoint data from their
  JSON files and keeps what it read, is one per process and data path, shared by every
  session made here. A new loader re-reads S3's model, most of the CPU of opening a
  filesystem; a Dask worker or a notebook opens many. botocore's own default session
  shares one loader among all its clients the same way.

A session the caller passed in (``target_options={"session": ...}``) is left as it is.
"""

from __future__ import annotations

import threading
from typing import Any

from archivefs.stores.timestamps import parse_timestamp

_LOADERS: dict[str | None, Any] = {}  # AWS data path (None: botocore's own) -> Loader
_LOADERS_LOCK = threading.Lock()


def give_session(fs: Any) -> None:
    """Give an s3fs filesystem whose client is not made yet the session described above."""
    if getattr(fs, "_s3", None) is not None or getattr(fs, "session", True) is not None:
        return
    import botocore.exceptions
    from aiobotocore.session import AioSession

    session = AioSession(**getattr(fs, "kwargs", {}))
    try:
        data_path = session.get_config_variable("data_path")
    except botocore.exceptions.BotoCoreError:
        pass  # e.g. a profile that is not there: the first request says so, as before
    else:
        session.register_component("data_loader", shared_loader(data_path))
    session.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp
    )
    fs.session = session


def shared_loader(data_path: str | None) -> Any:
    """The process's one botocore data loader for ``data_path`` (``AWS_DATA_PATH``)."""
    with _LOADERS_LOCK:
        loader = _LOADERS.get(data_path)
        if loader is None:
            from botocore.loaders import create_loader

            loader = _LOADERS[data_path] = create_loader(data_path)
        return loader
