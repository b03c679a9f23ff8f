"""The ``archivefs`` command: ls, status, estimate, advise, restore, demo.

Exit codes: 0 ok, 1 error, 2 usage, 3 budget refused, 4 still waiting / timed out.
Errors print one line saying what to fix; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click
import fsspec
import fsspec.core

from archivefs.errors import (
    ArchiveError,
    BudgetExceededError,
    ObjectNotFoundError,
    RestoreTimeoutError,
)
from archivefs.progress import ProgressDisplay, human_bytes
from archivefs.providers import PROVIDERS
from archivefs.selection import SelectionSummary, summarize

if TYPE_CHECKING:
    from collections.abc import Iterable

    from archivefs.filesystem import ArchiveFileSystem

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_BUDGET, EXIT_WAITING = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C


class Context:
    """Options shared by every command (set before or after the command's name)."""

    def __init__(self) -> None:
        self.endpoint_url: str | None = None
        self.profile: str | None = None
        self.account_name: str | None = None
        self.raw_options: str | None = None
        self.journal: str | None = None
        self.as_json = False
        self.debug = False
        self.restore_time_scale = 1.0
        self.bucket_claims = False

    def storage_options(self, protocol: str = "s3") -> dict[str, Any]:
        """The cold store's options: s3fs's for s3://, adlfs's for az:// (abfs://), ocifs's
        for oci://."""
        opts: dict[str, Any] = {}
        if self.raw_options:
            try:
                opts = json.loads(self.raw_options)
            except json.JSONDecodeError as error:
                raise click.UsageError(
                    f"--storage-options is not valid JSON ({error.msg}); "
                    "pass e.g. '{\"anon\": false}'."
                ) from None
            if not isinstance(opts, dict):
                raise click.UsageError("--storage-options must be a JSON object.")
            from archivefs.stores import before_connect
            from archivefs.stores.options import check_storage_options

            # before anything imports the store's library (checking options does; and
            # catalog and bundle connect without a filesystem)
            before_connect(protocol, opts)
            try:
                check_storage_options(opts, protocol=protocol)
            except ValueError as error:
                raise click.UsageError(str(error)) from None
        if protocol in ("gs", "gcs"):
            if self.profile or self.account_name:
                raise click.UsageError(
                    "--profile and --account-name are AWS and Azure options; for gs:// give "
                    "gcsfs options with --storage-options (token, project, endpoint_url), or "
                    "GOOGLE_APPLICATION_CREDENTIALS in the environment."
                )
            return opts  # --endpoint-url is S3's (it reads AWS_ENDPOINT_URL): not for GCS
        if protocol == "oci":  # ocifs: --profile is the OCI config's profile
            if self.account_name or self.endpoint_url:
                raise click.UsageError(
                    "--account-name and --endpoint-url are Azure's and S3's; for oci:// URLs "
                    "give --profile (a profile of the OCI config) and --storage-options with "
                    'ocifs options, e.g. \'{"config": "~/.oci/config"}\'.'
                )
            if self.profile:
                opts["profile"] = self.profile
            return opts
        if protocol != "s3":
            if self.profile:
                raise click.UsageError(
                    "--profile names an AWS profile; for Azure give --account-name, or "
                    "AZURE_STORAGE_CONNECTION_STRING / AZURE_STORAGE_ACCOUNT_KEY in the "
                    "environment, or --storage-options with adlfs options."
                )
            if self.account_name:
                opts["account_name"] = self.account_name
            return opts  # --endpoint-url is S3's; Azure endpoints come with the account
        if self.account_name:
            raise click.UsageError(
                "--account-name is an Azure storage account; use it with az:// URLs."
            )
        if self.endpoint_url:
            opts.setdefault("client_kwargs", {})["endpoint_url"] = self.endpoint_url
        if self.profile:
            opts["profile"] = self.profile
        return opts

    def filesystem(self, urls: Iterable[str] = (), **kwargs: Any) -> ArchiveFileSystem:
        """The archive filesystem over the store the URLs name (S3 unless they say az://)."""
        from archivefs.filesystem import ArchiveFileSystem
        from archivefs.providers import provider_for_protocol

        protocol = target_protocol(urls)
        if kwargs.get("tier") is not None:  # --tier: a usage error if the provider lacks it
            kwargs["tier"] = parse_tier(kwargs["tier"], provider_for_protocol(protocol).name)
        journal: Any = self.journal
        return ArchiveFileSystem(
            target_protocol=protocol,
            target_options=self.storage_options(protocol),
            journal=journal,
            restore_time_scale=self.restore_time_scale,
            skip_instance_cache=True,
            bucket_claims=self.bucket_claims,
            **kwargs,
        )


_SHEET_HELP = "Name or YAML (default: the provider's own: {}).".format(
    ", ".join(f"{p.price_sheet} for {p.protocols[0]}://" for p in PROVIDERS.values())
)


def target_protocol(urls: Iterable[str]) -> str:
    """``s3`` or ``az`` (``abfs``...) from the URLs' scheme; one provider per command."""
    from archivefs.providers import PROVIDERS, provider_for_url, url_protocol

    found: dict[str, str] = {}
    for url in urls:
        scheme = url_protocol(url)
        if scheme == "file":
            continue  # a local path: the command reports it
        try:
            provider = provider_for_url(url).name
        except ArchiveError:
            schemes = ", ".join(f"{p}://" for spec in PROVIDERS.values() for p in spec.protocols)
            raise click.UsageError(
                f"{url}: archivefs does not read {scheme}:// URLs; give a store URL ({schemes}"
                "), e.g. s3://bucket/key. For an S3-compatible server at an http(s) address, "
                "give s3://bucket/key with --endpoint-url http://HOST:PORT."
            ) from None
        found.setdefault(provider, scheme)
    if len(found) > 1:
        raise click.UsageError(
            f"the URLs name {' and '.join(sorted(found))} at once; give one provider's URLs "
            "per command (e.g. all s3:// or all az://)."
        )
    return next(iter(found.values()), "s3")


def parse_tier(tier: str | None, provider: str) -> str | None:
    """``--tier`` in ``provider``'s spelling, parsed as the filesystem parses it; a name
    the provider does not have is a usage error (exit 2), refused before any request."""
    from archivefs.model import RestoreTier

    if tier is None:
        return None
    try:
        parsed = RestoreTier.parse(tier, provider=None if provider == "s3" else provider)
    except ArchiveError as error:
        raise click.BadParameter(
            f"{error.problem} Fix: {error.fix}" if error.fix else error.problem,
            param_hint="'--tier'",
        ) from None
    return parsed.value


DAYS = click.IntRange(min=1)
"""``--days``: a whole number of days, at least 1 (a usage error, exit 2, otherwise)."""


def fail(message: str, code: int = EXIT_ERROR, error: BaseException | None = None) -> NoReturn:
    """Say ``message`` in one line on standard error (with ``--json``, also as a JSON error
    object on standard output) and exit with ``code``."""
    click.echo(f"archivefs: error: {message}", err=True)
    echo_json_error(message, code, error)
    sys.exit(code)


def echo_json_error(
    message: str, code: int, error: BaseException | None = None, fix: str | None = None
) -> None:
    """With ``--json``: the error as ``{"error": {message, problem, path, fix, exit_code}}``
    on standard output, so a script reading it gets JSON on failure too."""
    click_ctx = click.get_current_context(silent=True)
    ctx = click_ctx.find_object(Context) if click_ctx is not None else None
    if ctx is None or not ctx.as_json:
        return
    known = error if isinstance(error, ArchiveError) else None
    payload = {
        "message": message,
        "problem": known.problem if known else message,
        "path": known.path if known else None,
        "fix": known.fix if known else fix,
        "exit_code": code,
    }
    click.echo(json.dumps({"error": payload}))


def run_guarded(ctx: Context, action: Any, subject: str = "") -> Any:
    """Run a command body; turn archivefs errors into one-line messages and exit codes.

    ``subject`` names the URL a store library's own error is about, for the message."""
    try:
        return action()
    except (click.exceptions.ClickException, BrokenPipeError):
        raise  # click reports usage errors, and ends quietly when a reader (| head) is gone
    except BudgetExceededError as error:
        if ctx.debug:
            raise
        fail(str(error), EXIT_BUDGET, error)
    except RestoreTimeoutError as error:
        if ctx.debug:
            raise
        fail(str(error), EXIT_WAITING, error)
    except (ArchiveError, ValueError, OSError) as error:
        if ctx.debug:
            raise
        fail(str(error) or type(error).__name__, EXIT_ERROR, error)
    except Exception as error:
        if ctx.debug or not _from_a_store_library(error):
            raise  # a bug of archivefs: the traceback is what to report
        from archivefs.stores.translate import translate

        translated = translate(error, subject)
        fail(str(translated), EXIT_ERROR, translated)


_STORE_LIBRARIES = frozenset(
    {"botocore", "aiobotocore", "s3fs", "azure", "adlfs", "gcsfs", "google", "oci", "ocifs"}
    | {"aiohttp", "requests", "urllib3"}
)


def _from_a_store_library(error: BaseException) -> bool:
    """Raised by a store's client library (a command that reads the store without the
    archive filesystem, e.g. ``catalog show``): translated as the filesystem translates."""
    return type(error).__module__.split(".", 1)[0] in _STORE_LIBRARIES


def read_paths(urls: Iterable[str], from_file: str | None) -> list[str]:
    """URLs from arguments, a ``--from-file`` list (``-`` for stdin), one per line."""
    paths = list(urls)
    if from_file:
        stream = sys.stdin if from_file == "-" else open(from_file, encoding="utf-8")  # noqa: SIM115
        with stream:
            for number, line in enumerate(stream, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if any(c in line for c in "\0\r") or " " in line.split("://", 1)[-1][:1]:
                    raise click.UsageError(
                        f"{from_file}:{number}: not a path: {line!r}; give one s3:// URL per line."
                    )
                paths.append(line)
    if not paths:
        raise click.UsageError("no paths given; pass URLs or --from-file FILE (- for stdin).")
    return paths


def restore_with_display(
    ctx: Context, fs: ArchiveFileSystem, paths: list[str], *, prefetch: bool = False, **kwargs: Any
) -> Any:
    """``fs.restore`` (``fs.prefetch`` with ``prefetch``) with the progress display (none
    with ``--json``); paths that match nothing are named and left out, as ``status`` does."""
    display = None if ctx.as_json else ProgressDisplay()
    try:
        if prefetch:
            return fs.prefetch(paths, on_progress=display, on_missing=report_unmatched, **kwargs)
        return fs.restore(paths, on_progress=display, on_missing=report_unmatched, **kwargs)
    finally:
        if display is not None:
            display.close()


def check_endpoint_url(url: str) -> str:
    """``url`` if it is a usable S3 endpoint (scheme, host, port); else exit 2 with one line."""
    from urllib.parse import urlsplit

    problem = None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        parts, port, problem = None, None, f"is not a URL ({error})"
    if parts is not None and problem is None:
        if parts.scheme not in ("http", "https"):
            guess = url if "://" not in url else url.split("://", 1)[1]
            problem = f"has no http:// or https:// scheme (did you mean http://{guess} ?)"
        elif not parts.hostname:
            problem = "names no host"
        elif port == 0:
            problem = "has port 0"
    if problem:
        fail(
            f"--endpoint-url {url!r} {problem}; "
            "write it as http(s)://HOST[:PORT], e.g. http://127.0.0.1:9000.",
            EXIT_USAGE,
        )
    return url


def _set_global(name: str) -> Any:
    """An option callback that stores the value on the shared :class:`Context`."""

    def callback(click_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None or value is False:
            return value  # not given here: keep what was given elsewhere
        source = click_ctx.get_parameter_source(param.name or "")
        if click_ctx.parent is not None and source is click.core.ParameterSource.ENVIRONMENT:
            return value  # the environment is read once, by the top command
        if name == "endpoint_url":
            value = check_endpoint_url(value)
        setattr(click_ctx.ensure_object(Context), name, value)
        return value

    return callback


_GLOBAL_OPTIONS = [
    click.option(
        "--endpoint-url",
        envvar=["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"],
        callback=_set_global("endpoint_url"),
        expose_value=False,
        help="S3 endpoint (Ceph RGW, MinIO, `archivefs serve`). "
        "[env: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL]",
    ),
    click.option(
        "--profile",
        callback=_set_global("profile"),
        expose_value=False,
        help="AWS profile name (for oci:// URLs: a profile of the OCI config).",
    ),
    click.option(
        "--account-name",
        envvar="AZURE_STORAGE_ACCOUNT_NAME",
        callback=_set_global("account_name"),
        expose_value=False,
        help="Azure storage account (az:// URLs; the key or token from the environment, as "
        "adlfs reads it). [env: AZURE_STORAGE_ACCOUNT_NAME]",
    ),
    click.option(
        "--storage-options",
        callback=_set_global("raw_options"),
        expose_value=False,
        help="JSON object of s3fs options (adlfs options for az://, gcsfs options for gs://, "
        "ocifs options for oci://).",
    ),
    click.option(
        "--journal",
        callback=_set_global("journal"),
        expose_value=False,
        help="Restore journal file (default: the user cache).",
    ),
    click.option(
        "--restore-time-scale",
        type=float,
        envvar="ARCHIVEFS_RESTORE_TIME_SCALE",
        callback=_set_global("restore_time_scale"),
        expose_value=False,
        help="Scale expected restore times when polling (emulators; `archivefs serve` "
        "prints the value). [env: ARCHIVEFS_RESTORE_TIME_SCALE]",
    ),
    click.option(
        "--bucket-claims",
        is_flag=True,
        callback=_set_global("bucket_claims"),
        expose_value=False,
        help="Claim each restore in its bucket first, so hosts that share no journal "
        "never pay for the same group twice (one PUT per group; docs/guarantees.md).",
    ),
    click.option(
        "--json",
        "as_json",
        is_flag=True,
        callback=_set_global("as_json"),
        expose_value=False,
        help="Machine-readable output.",
    ),
    click.option(
        "--debug",
        is_flag=True,
        callback=_set_global("debug"),
        expose_value=False,
        help="Show tracebacks.",
    ),
]


def global_options(command: Any) -> Any:
    """Accept the global options after a command's name too (as the AWS CLI and rclone do)."""
    for option in reversed(_GLOBAL_OPTIONS):
        command = option(command)
    return command


def _interrupted(command: str | None) -> str:
    """What Ctrl-C leaves behind: restores already requested go on at the store."""
    if command in ("restore", "prefetch"):
        return (
            "interrupted; the restore requests already sent keep going at the store (they "
            "are billed). Fix: run the same command again to resume: what was sent is not "
            "sent again (the journal remembers it) and it waits for the rest; `archivefs "
            "status` shows where they are."
        )
    return "interrupted."


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so nothing more (not even the interpreter's
    flush at exit) writes to a pipe whose reader is gone."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file (click's test runner): nothing to do
        pass


class _Command(click.Group):
    """The ``archivefs`` group: what every command shares at its end."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # the last lines reach the reader, or its absence shows here
        except BrokenPipeError:  # `archivefs ls | head`: the reader has what it wanted
            _quiet_stdout()
            ctx.exit(EXIT_OK)
        except KeyboardInterrupt:  # Ctrl-C: say what goes on without us, not "Aborted!"
            message = _interrupted(ctx.invoked_subcommand)
            click.echo(f"archivefs: {message}", err=True)
            echo_json_error(message, EXIT_INTERRUPTED)
            ctx.exit(EXIT_INTERRUPTED)
        except click.ClickException as error:  # wrong usage: click says it on stderr
            command = getattr(getattr(error, "ctx", None), "command_path", "archivefs")
            echo_json_error(error.format_message(), error.exit_code, fix=f"see `{command} --help`.")
            raise
        return result


@click.group(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@global_options
@click.version_option(package_name="archivefs")
@click.pass_context
def main(click_ctx: click.Context) -> None:
    """Read archived S3 data (Glacier, Deep Archive) without surprises.

    Global options (--endpoint-url, --profile, --storage-options, --journal,
    --restore-time-scale, --json, --debug) go before or after the command.

    \b
    Examples:
      archivefs demo
      archivefs ls -l s3://bucket/data/
      archivefs estimate s3://bucket/data/ --tier Bulk
      archivefs restore s3://bucket/data/*.nc --wait --max-cost 5 --endpoint-url http://127.0.0.1:9000
    """
    click_ctx.ensure_object(Context)


@main.command("ls")
@click.argument("url")
@click.option("-l", "long", is_flag=True, help="Show size, class, restore state and expiry.")
@click.option("-r", "--recursive", is_flag=True, help="List everything below URL.")
@global_options
@click.pass_obj
def ls_command(ctx: Context, url: str, long: bool, recursive: bool) -> None:
    """List objects with their storage class and restore state (a glob lists what it matches).

    \b
    Examples:
      archivefs ls s3://bucket/prefix/
      archivefs ls -l --recursive s3://bucket/prefix/
      archivefs ls -l 's3://bucket/prefix/*/*.nc'
    """

    def body() -> None:
        fs = ctx.filesystem([url])
        entries = _listing(fs, url, recursive)
        if ctx.as_json:
            click.echo(json.dumps([_jsonable(e) for e in entries], indent=1))
            return
        for entry in entries:
            if not long:
                click.echo(entry["name"])
            elif entry["type"] == "directory":
                click.echo(f"{'DIR':>12}  {'':<19} {'':<10} {'':<20} {entry['name']}/")
            else:
                expiry = entry.get("restore_expiry")
                click.echo(
                    f"{entry['size']:>12}  {entry.get('storage_class', ''):<19} "
                    f"{entry.get('restore', ''):<10} "
                    f"{expiry.strftime('%Y-%m-%d %H:%M') if expiry else '':<20} {entry['name']}"
                )

    run_guarded(ctx, body)


def _listing(fs: ArchiveFileSystem, url: str, recursive: bool) -> list[dict[str, Any]]:
    """``ls`` (or ``find`` with ``recursive``) of ``url``; of what it matches if a glob.

    A glob's matches take their entries from ``ls`` of their folders, one listing per
    folder, so they carry the same probed restore states as ``ls`` of the folder."""
    from archivefs.globbing import has_wildcard

    if not has_wildcard(url) or fs.exists(url):  # a literal name that holds [ is itself
        if recursive:
            return list(fs.find(url, detail=True).values())
        return list(fs.ls(url, detail=True))
    matched = fs.glob(url)
    if not matched:
        fail(f"matched nothing: {url}; check the spelling (`archivefs ls` of its folder shows "
             "what exists).")  # fmt: skip
    wanted: dict[str, set[str]] = {}
    for name in matched:
        wanted.setdefault(fs._parent(name), set()).add(name)
    entries: list[dict[str, Any]] = []
    for folder, names in wanted.items():
        for entry in fs.ls(folder, detail=True):
            if entry["name"] not in names:
                continue
            if recursive and entry["type"] == "directory":
                entries += fs.find(entry["name"], detail=True).values()
            else:
                entries.append(entry)
    return sorted(entries, key=lambda e: str(e["name"]))


@main.command("status")
@click.argument("urls", nargs=-1)
@click.option("--from-file", help="File with one URL per line (- for stdin).")
@click.option(
    "--claims",
    "show_claims",
    is_flag=True,
    help="Read the bucket's claims of the restores in flight: who asked, at which tier, "
    "when, and when it is expected (one GET per restoring group).",
)
@global_options
@click.pass_obj
def status_command(
    ctx: Context, urls: tuple[str, ...], from_file: str | None, show_claims: bool
) -> None:
    """Count objects and bytes by restore state (one bulk probe).

    \b
    Examples:
      archivefs status s3://bucket/data/
      archivefs status --from-file needed.txt
      archivefs status --claims s3://bucket/data/
    """

    def body() -> None:
        paths = read_paths(urls, from_file)
        fs = ctx.filesystem(paths)
        plan = fs.plan(paths)
        report_unmatched(plan)
        summary = summarize(plan)
        eta = _restore_eta(fs, plan)
        claims = _restoring_claims(fs, plan) if show_claims else None
        if ctx.as_json:
            click.echo(
                json.dumps(
                    {
                        **summary.as_json(),
                        "missing": list(plan.missing),
                        "restoring_expected_by": eta.isoformat() if eta else None,
                        **({} if claims is None else {"claims": _claims_json(*claims)}),
                    }
                )
            )
            return
        for state, c in summary.states.items():
            kind = "bundles" if c.bundles == c.objects and c.objects else "objects"
            click.echo(
                f"{state:<10} {c.files:>8} files {human_bytes(c.bytes_needed):>10}"
                f"   in {c.objects} {kind}"
                + (f" ({c.bundles} bundles)" if c.bundles and kind == "objects" else "")
                + f" of {human_bytes(c.bytes_in_objects)}"
            )
        warn_over_restore(fs, plan, summary)
        if summary.states["restoring"].objects:
            click.echo(
                "restores in flight expected by "
                + (
                    f"{eta:%Y-%m-%d %H:%M} UTC (from the journal)"
                    if eta
                    else "(not in the journal)"
                )
            )
        if claims is not None:
            _echo_claims(*claims)

    run_guarded(ctx, body)


def _restoring_claims(fs: ArchiveFileSystem, plan: Any) -> tuple[list[Any], list[str]]:
    """The bucket's claims on the plan's restoring groups, grouped by requester and tier."""
    from fsspec.asyn import sync

    from archivefs.restore.claims import BucketClaims, summarize_claims

    restoring = [g.key for g in plan.groups if g.state.restore.value == "restoring"]
    found = sync(fs.loop, BucketClaims(fs.store).read_many, restoring)
    return summarize_claims(found)


def _claims_json(summaries: list[Any], unclaimed: list[str]) -> dict[str, Any]:
    return {
        "by_requester": [
            {
                "requester": s.requester,
                "tier": s.tier,
                "groups": s.groups,
                "first_claimed": s.first_claimed.isoformat(),
                "expected_ready": s.expected_ready.isoformat() if s.expected_ready else None,
            }
            for s in summaries
        ],
        "unclaimed": unclaimed,
    }


def _echo_claims(summaries: list[Any], unclaimed: list[str]) -> None:
    if not summaries and not unclaimed:
        click.echo("claims: no restore in flight")
        return
    for s in summaries:
        ready = s.expected_ready
        expected = f", expected by {ready:%Y-%m-%d %H:%M} UTC" if ready else ""
        click.echo(
            f"claimed by {s.requester}: {s.groups} group{'s' * (s.groups != 1)} at {s.tier}, "
            f"since {s.first_claimed:%Y-%m-%d %H:%M} UTC{expected}"
        )
    if unclaimed:
        click.echo(
            f"{len(unclaimed)} restoring group{'s' * (len(unclaimed) != 1)} with no claim in "
            "the bucket (restored without --bucket-claims)"
        )


def report_unmatched(plan: Any) -> None:
    """Name each path that matched nothing; exit 1 (one message) if nothing matched at all.

    Raises rather than exits: it is also ``fs.restore``'s ``on_missing``, called on the
    filesystem's event loop."""
    if plan.missing and not len(plan):
        raise ObjectNotFoundError(
            f"matched nothing: {', '.join(plan.missing[:3])}"
            + (f" and {len(plan.missing) - 3} more" if len(plan.missing) > 3 else "")
            + ".",
            fix="check the spelling (`archivefs ls` shows what exists).",
        )
    for path in plan.missing:
        click.echo(f"archivefs: matched nothing: {path}", err=True)


def warn_over_restore(fs: ArchiveFileSystem, plan: Any, summary: SelectionSummary) -> None:
    """Warn when the restores bring back far more than the files need; name a better grouping."""
    from fsspec.asyn import sync

    from archivefs.selection import OVER_RESTORE_RATIO, better_grouping

    if summary.over_restore <= OVER_RESTORE_RATIO:
        return
    by_root: dict[str, Any] = {}
    shared = False  # some bundle holds files that were not asked for (not just zip headers)
    for group in plan.groups:
        if group.paths == (group.key,) or group.state.readable:
            continue
        found = sync(fs.loop, fs.catalogs.root_for, group.paths[0])
        if found is not None:
            by_root.setdefault(found[0], (found[1], []))[1].extend(group.paths)
            info = found[1].bundles.get(group.key)
            shared = shared or (info is not None and info.members > len(group.paths))
    if not shared:
        return
    message = (
        f"warning: the {summary.files} files need {human_bytes(summary.bytes_needed_to_restore)}"
        f" but restoring their objects brings back {human_bytes(summary.bytes_to_restore)}"
        f" ({summary.over_restore:.1f}x): they share bundles with files you did not ask for."
    )
    for root, (catalog, selected) in by_root.items():
        depth = better_grouping(catalog, root, selected)
        message += (
            f" Bundling s3://{root} with --group-by prefix:{depth} would restore only them."
            if depth is not None
            else f" No directory grouping of s3://{root} separates them: bundle by a key"
            " function (archivefs.catalog.ByKey) that matches how you select."
        )
    click.echo(message, err=True)


@main.command("restore")
@click.argument("urls", nargs=-1)
@click.option("--from-file", help="File with one URL per line (- for stdin).")
@click.option("--tier", default="Standard", show_default=True, help="Expedited, Standard or Bulk.")
@click.option("--days", default=1, show_default=True, type=DAYS, help="Days the copy stays.")
@click.option("--wait", is_flag=True, help="Wait until everything reads.")
@click.option("--timeout", type=float, help="Seconds to wait at most (exit 4 after).")
@click.option("--max-cost", type=float, help="Refuse (exit 3) if the estimate is above this.")
@click.option(
    "--price-sheet",
    help=_SHEET_HELP,
)
@global_options
@click.pass_obj
def restore_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    tier: str,
    days: int,
    wait: bool,
    timeout: float | None,
    max_cost: float | None,
    price_sheet: str | None,
) -> None:
    """Restore archived objects in one batch (one request per object, never twice).

    \b
    Examples:
      archivefs restore s3://bucket/run42/ --tier Bulk --days 3
      archivefs restore --from-file needed.txt --wait --timeout 43200
    """

    def body() -> None:
        paths = read_paths(urls, from_file)
        fs = ctx.filesystem(paths, tier=tier, days=days, max_cost=max_cost, price_sheet=price_sheet)
        result = restore_with_display(ctx, fs, paths, wait=wait, timeout=timeout)
        summary = {
            "groups": len(result.plan),
            "requests_sent": result.requests_sent,
            "already_in_progress_elsewhere": len(result.submitted.skipped),
            "ready": len(result.ready) if wait else None,
        }
        if ctx.as_json:
            click.echo(json.dumps(summary))
        else:
            selection = summarize(result.plan)
            bundles = sum(c.bundles for c in selection.states.values())
            click.echo(
                f"{selection.files} files in {summary['groups']} objects"
                + (f" ({bundles} bundles)" if bundles else "")
                + f"; {summary['requests_sent']} restore requests sent"
                + (f"; {summary['ready']} ready" if wait else "")
            )
            warn_over_restore(fs, result.plan, selection)

    run_guarded(ctx, body)


@main.command("prefetch")
@click.argument("urls", nargs=-1)
@click.option("--from-file", help="File with one URL per line (- for stdin).")
@click.option(
    "--to",
    "hot",
    help="Once restored, write the requested files to this directory (at DIR/BUCKET/KEY), "
    "or copy the restored objects to this s3:// URL.",
)
@click.option(
    "--promote",
    is_flag=True,
    help="Once restored, copy each object onto itself in STANDARD (permanent; billed as such).",
)
@click.option("--tier", default="Standard", show_default=True, help="Expedited, Standard or Bulk.")
@click.option("--days", default=1, show_default=True, type=DAYS, help="Days the copy stays.")
@click.option("--timeout", type=float, help="Seconds to wait at most (exit 4 after).")
@click.option("--max-cost", type=float, help="Refuse (exit 3) if the estimate is above this.")
@click.option(
    "--price-sheet",
    help=_SHEET_HELP,
)
@global_options
@click.pass_obj
def prefetch_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    hot: str | None,
    promote: bool,
    tier: str,
    days: int,
    timeout: float | None,
    max_cost: float | None,
    price_sheet: str | None,
) -> None:
    """Restore in one batch, wait with a progress bar, optionally copy to a hot store.

    Run it before a batch job so the job reads without waiting.

    \b
    Examples:
      archivefs prefetch s3://bucket/run42/ --tier Bulk
      archivefs prefetch --from-file inputs.txt --to /scratch/run42-cache
    """

    def body() -> None:
        if hot and promote:
            raise click.UsageError("use --to HOT_URL or --promote, not both.")
        options: dict[str, Any] = {
            "tier": tier,
            "days": days,
            "max_cost": max_cost,
            "price_sheet": price_sheet,
        }
        local = hot is not None and _is_local(hot)
        if hot and not local:
            options["hot"] = hot
            options["hot_options"] = ctx.storage_options()
        paths = read_paths(urls, from_file)
        fs = ctx.filesystem(paths, **options)
        if local:
            assert hot is not None
            result = restore_with_display(ctx, fs, paths, prefetch=True, timeout=timeout, to=hot)
            copied = result.copied
            summary = {
                "groups": len(result.plan),
                "requests_sent": result.requests_sent,
                "ready": len(result.ready),
                "readable_for_a_fee": len(result.plan.fee_reads),
                "copied_to": hot,
                "files_written": len(copied.files),
                "bytes_written": copied.bytes_written,
                "partials_removed": len(copied.partials_removed),
                "promoted_in_place": 0,
            }
        else:
            if hot:
                result = restore_with_display(
                    ctx, fs, paths, wait=True, timeout=timeout, promote=True
                )
            else:  # objects that read at once are part of the job, not an error
                result = restore_with_display(ctx, fs, paths, prefetch=True, timeout=timeout)
            promoted = fs.promote_in_place(paths) if promote else []
            summary = {
                "groups": len(result.plan),
                "requests_sent": result.requests_sent,
                "ready": len(result.ready),
                "readable_for_a_fee": len(result.plan.fee_reads),
                "copied_to": hot,
                "promoted_in_place": len(promoted),
            }
        if ctx.as_json:
            click.echo(json.dumps(summary))
        else:
            click.echo(
                f"{summary['ready']}/{summary['groups']} objects ready; "
                f"{summary['requests_sent']} restore requests sent"
                + (
                    f"; {summary['readable_for_a_fee']} read at once for a retrieval fee"
                    if summary.get("readable_for_a_fee")
                    else ""
                )
                + (
                    f"; {summary['files_written']} files ({human_bytes(summary['bytes_written'])})"
                    f" written to {hot}"
                    if local
                    else (f"; copied to {hot}" if hot else "")
                )
                + (f"; {summary['promoted_in_place']} made STANDARD in place" if promote else "")
            )

    run_guarded(ctx, body)


def _is_local(url: str) -> bool:
    return "://" not in url or url.startswith("file://")


def _size(text: str) -> int:
    """Parse '40MiB', '1.5 GB', '123' into bytes (the workload files' one size parser)."""
    from archivefs.pricing.sizes import parse_size

    try:
        return parse_size(text)
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a size; write e.g. 40MiB, 1.5GB or 123."
        ) from None


def _print_estimate(ctx: Context, result: Any, summary: SelectionSummary | None = None) -> None:
    from archivefs.pricing.amounts import format_amount

    if ctx.as_json:
        extra = {"selection": summary.as_json()} if summary is not None else {}
        click.echo(json.dumps({**result.model_dump(mode="json"), "total": result.total, **extra}))
        return
    if summary is not None:
        click.echo(
            f"{summary.files} files; {human_bytes(summary.bytes_needed_to_restore)} of them to "
            f"restore, in objects of {human_bytes(summary.bytes_to_restore)} "
            f"({result.restore_request_count} restore requests)"
        )
    for name, dollars in result.table():
        click.echo(f"{name:<24} {format_amount(dollars, result.currency):>16}")
    lo, hi = result.restore_hours
    click.echo(
        f"restore wait {lo:g}-{hi:g} h; transfer {result.transfer_seconds:.0f} s; "
        f"{result.restore_request_count} restore requests, {result.get_request_count} GETs"
    )
    for warning in result.warnings:
        click.echo(f"warning: {warning}")


@main.command("estimate")
@click.argument("urls", nargs=-1)
@click.option("--from-file", help="File with one URL per line (- for stdin).")
@click.option("--tier", help="Expedited, Standard or Bulk (default Standard).")
@click.option("--days", type=DAYS, help="Days the restored copy stays (default 1).")
@click.option("--egress", default="same_region", show_default=True, help="Network path.")
@click.option("--reads", default=1, show_default=True, type=int, help="How often it is read.")
@click.option(
    "--price-sheet",
    help=_SHEET_HELP,
)
@click.option("--objects", type=int, help="What-if: number of objects (no bucket needed).")
@click.option("--size", help="What-if: size of each object, e.g. 40MiB.")
@click.option("--storage-class", help="What-if: their storage class, e.g. GLACIER.")
@global_options
@click.pass_obj
def estimate_command(
    ctx: Context,
    urls: tuple[str, ...],
    from_file: str | None,
    tier: str | None,
    days: int | None,
    egress: str,
    reads: int,
    price_sheet: str | None,
    objects: int | None,
    size: str | None,
    storage_class: str | None,
) -> None:
    """What restoring and reading would cost, before anything is paid.

    \b
    Examples:
      archivefs estimate s3://bucket/run42/ --tier Bulk --egress internet
      archivefs estimate --objects 10000 --size 40MiB --storage-class DEEP_ARCHIVE --tier Bulk
    """
    from archivefs.pricing import Workload, estimate, load_price_sheet

    def body() -> None:
        if objects is not None or size is not None or storage_class is not None:
            if objects is None or size is None or storage_class is None or urls or from_file:
                raise click.UsageError(
                    "the what-if form needs --objects, --size and --storage-class, and no URLs."
                )
            from archivefs.model import StorageClass

            klass = StorageClass.parse(storage_class)
            work = Workload(objects=objects, total_bytes=objects * _size(size), storage_class=klass)
            from archivefs.providers import provider_named

            sheet = load_price_sheet(price_sheet or provider_named(klass.provider).price_sheet)
            result = estimate(
                work, sheet, tier=parse_tier(tier, klass.provider), days=days, egress=egress,
                reads=reads,
            )  # fmt: skip
        else:
            paths = read_paths(urls, from_file)
            fs = ctx.filesystem(paths, price_sheet=price_sheet, egress=egress)
            plan = fs.plan(paths, tier=parse_tier(tier, fs.provider.name), days=days)
            report_unmatched(plan)
            result = fs.estimate_plan(plan, reads=reads)
            from archivefs.pricing.amounts import format_amount

            summary = summarize(plan)
            _print_estimate(ctx, result, summary)
            if not ctx.as_json:
                if plan.fee_reads:
                    click.echo(
                        f"{len(plan.fee_reads)} objects read at once for a retrieval fee "
                        f"({format_amount(result.components['retrieval'], result.currency)}); "
                        "nothing "
                        "to restore for them"
                    )
                warn_over_restore(fs, plan, summary)
            return
        _print_estimate(ctx, result)

    run_guarded(ctx, body)


@main.command("advise")
@click.option(
    "--workload",
    metavar="FILE",
    help="A whole archive: a workload YAML file or a shipped example (docs/cost-model.md); "
    "prices each placement for a year, ranked, with break-evens in data read per month.",
)
@click.option(
    "--plot",
    metavar="FILE.png",
    help="With --workload: draw each placement's annual cost as stacked bars to FILE.png.",
)
@click.option("--objects", type=int, help="Number of objects.")
@click.option("--size", help="Size of each object, e.g. 40MiB (or give --total-size).")
@click.option("--total-size", help="Size of all objects together, e.g. 100TiB (or --size).")
@click.option(
    "--classes",
    help="Comma-separated storage classes to compare (default: STANDARD,STANDARD_IA,"
    "GLACIER_IR,GLACIER,DEEP_ARCHIVE; on another provider's sheet, all its classes; "
    "across providers, provider:Class names such as s3:STANDARD_IA,azure:Cool).",
)
@click.option("--tier", default="Standard", show_default=True, help="Restore tier for archives.")
@click.option("--egress", default="same_region", show_default=True, help="Network path.")
@click.option("--lifecycle-after-days", type=float, help="Also: first class, then last, after N d.")
@click.option(
    "--price-sheet",
    multiple=True,
    help="Name or YAML (default: aws-us-east-1). Repeat it, or give a comparison sheet "
    "such as study-2018-tokyo, to compare providers.",
)
@click.option(
    "--reads-per-month",
    type=float,
    help="Across providers: full reads per month, or the fraction of the data read per "
    "month (0.01 = 1%); the ranking is at this frequency.",
)
@click.option(
    "--access-prices",
    multiple=True,
    metavar="PROVIDER=SHEET",
    help="Across providers, with a comparison sheet: the sheet giving PROVIDER's request, "
    "retrieval and restore prices (or PROVIDER=none).",
)
@click.option("--cold-only", is_flag=True, help="Across providers: only classes that bill reads.")
@global_options
@click.pass_obj
def advise_command(
    ctx: Context,
    objects: int | None,
    size: str | None,
    total_size: str | None,
    classes: str | None,
    tier: str,
    egress: str,
    lifecycle_after_days: float | None,
    price_sheet: tuple[str, ...],
    reads_per_month: float | None,
    access_prices: tuple[str, ...],
    cold_only: bool,
    workload: str | None,
    plot: str | None,
) -> None:
    """Which storage class (and provider) is cheapest at which read frequency.

    With one provider's sheet: a break-even table of its classes. With several
    sheets, or a comparison sheet, it ranks every provider's classes at
    --reads-per-month and gives the break-even between each pair. With
    --workload: a whole archive's placements over a year (one --price-sheet
    overrides the workload's).

    \b
    Examples:
      archivefs advise --objects 1000 --size 650MiB --tier Bulk --egress internet
      archivefs advise --price-sheet study-2018-tokyo --objects 51200 --total-size 100TiB \\
          --reads-per-month 0.01 --cold-only
      archivefs advise --price-sheet aws-ap-northeast-1 --price-sheet azure-eastus \\
          --objects 1000 --size 1GiB --reads-per-month 0.5
      archivefs advise --workload ngas-all-in-cloud --plot ngas.png
    """
    from archivefs.model import StorageClass
    from archivefs.pricing import Workload, advise, load_price_sheet

    def body() -> None:
        from archivefs.pricing.advise import DEFAULT_CLASSES
        from archivefs.pricing.comparison import ComparisonSheet, load_any_sheet
        from archivefs.pricing.sheet import sheet_provider

        if workload is not None:
            _advise_workload(ctx, workload, price_sheet, plot)
            return
        if plot is not None:
            raise click.UsageError("--plot draws a workload's placements: give --workload FILE.")
        if objects is None:
            raise click.UsageError("give --objects (with --size or --total-size), or --workload.")
        if (size is None) == (total_size is None):
            raise click.UsageError("give the size: --size (each object) or --total-size (all).")
        nbytes = objects * _size(size) if size is not None else _size(total_size or "0")
        from archivefs.providers import S3

        sources = price_sheet or (S3.price_sheet,)
        loaded = [load_any_sheet(name) for name in sources]
        if len(loaded) > 1 or isinstance(loaded[0], ComparisonSheet):
            _advise_providers(
                ctx,
                loaded,
                objects=objects,
                total_bytes=nbytes,
                classes=classes,
                tier=tier,
                egress=egress,
                lifecycle_after_days=lifecycle_after_days,
                reads_per_month=reads_per_month,
                access_prices=access_prices,
                cold_only=cold_only,
            )
            return
        if reads_per_month is not None or access_prices or cold_only:
            raise click.UsageError(
                "--reads-per-month, --access-prices and --cold-only compare providers: give "
                "several --price-sheet, or a comparison sheet such as study-2018-tokyo."
            )
        sheet = load_price_sheet(sources[0])
        provider = sheet_provider(sheet)
        if classes is not None:
            names: list[str] = [c.strip() for c in classes.split(",") if c.strip()]
        elif provider == "s3":
            names = [c.value for c in DEFAULT_CLASSES]
        else:
            names = [c.value for c in sheet.classes]
        compared = [
            StorageClass.parse(n) if provider == "s3" else StorageClass.parse(n, provider=provider)
            for n in names
        ]
        work = Workload(objects=objects, total_bytes=nbytes, storage_class=compared[0])
        advice = advise(
            work,
            sheet,
            compared,
            tier=tier,
            egress=egress,
            lifecycle_after_days=lifecycle_after_days,
        )
        if ctx.as_json:
            click.echo(advice.model_dump_json())
            return
        _echo_table(advice.table())
        click.echo("")
        for point in advice.break_evens:
            _echo_break_even(point)

    run_guarded(ctx, body)


def _advise_workload(
    ctx: Context, workload: str, price_sheet: tuple[str, ...], plot: str | None
) -> None:
    """``archivefs advise --workload``: parse, call plan_archive, render."""
    from archivefs.pricing import plan_archive

    if len(price_sheet) > 1:
        raise click.UsageError("--workload prices with one --price-sheet (or the workload's).")
    plan = plan_archive(workload, price_sheet[0] if price_sheet else None)
    if plot is not None:
        from archivefs.pricing.chart import annual_chart

        annual_chart(plan).savefig(plot, dpi=120, bbox_inches="tight")
    if ctx.as_json:
        click.echo(plan.model_dump_json())
        return
    click.echo(f"{plan.workload}: {human_bytes(plan.total_bytes)}, prices {plan.sheet}; "
               f"{plan.currency} a year")  # fmt: skip
    _echo_table(plan.table())
    click.echo("")
    best = plan.cheapest
    click.echo(f"cheapest: {best.name}, {best.annual_total:,.2f} a year "
               f"({best.monthly_total:,.2f} a month)")  # fmt: skip
    click.echo(f"break-even data read per month (this workload: "
               f"{plan.read_tib_per_month:,.2f} TiB), each pair:")  # fmt: skip
    for point in plan.break_evens:
        _echo_break_even(point, "  ", tib=True)
    for placement in plan.placements:
        if placement.annual["restored_copies"]:
            click.echo(
                f"{placement.name}: restored copies {placement.annual['restored_copies']:,.2f} "
                f"expected, {placement.restored_copies_bound:,.2f} at most"
            )
        for note in placement.notes:
            click.echo(f"{placement.name}: {note}")
    for note in plan.notes:
        click.echo(f"note: {note}")
    if plot is not None:
        click.echo(f"plot: {plot}")


def _echo_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)))


def _echo_break_even(point: Any, indent: str = "", *, tib: bool = False) -> None:
    """One break-even line: in reads a month, or (``tib``) in TiB read a month first."""
    if (point.tib_per_month if tib else point.reads_per_month) is None:
        other = (
            point.cheaper_when_frequent
            if point.always_cheaper == point.cheaper_when_rare
            else point.cheaper_when_rare
        )
        click.echo(f"{indent}{point.always_cheaper} is always cheaper than {other}")
    elif tib:
        click.echo(
            f"{indent}{point.cheaper_when_rare} is cheaper below {point.tib_per_month:,.2f} TiB "
            f"({point.reads_per_month:.3g} full reads) a month, "
            f"{point.cheaper_when_frequent} above"
        )
    else:
        click.echo(
            f"{indent}{point.cheaper_when_rare} is cheaper below {point.reads_per_month:.2f} "
            f"reads/month, {point.cheaper_when_frequent} above"
        )


def _advise_providers(
    ctx: Context,
    sheets: list[Any],
    *,
    objects: int,
    total_bytes: int,
    classes: str | None,
    tier: str,
    egress: str,
    lifecycle_after_days: float | None,
    reads_per_month: float | None,
    access_prices: tuple[str, ...],
    cold_only: bool,
) -> None:
    """``archivefs advise`` across providers: rank (provider, class) at the workload's reads."""
    from archivefs.model import StorageClass
    from archivefs.pricing import Workload
    from archivefs.pricing.advise import advise_providers
    from archivefs.pricing.comparison import ComparisonSheet, access_sheets_for

    if reads_per_month is None:
        raise click.UsageError(
            "comparing providers needs --reads-per-month: full reads per month, or the "
            "fraction of the data read per month (e.g. 0.01 for 1% a month)."
        )
    if lifecycle_after_days is not None:
        raise click.UsageError(
            "--lifecycle-after-days compares classes of one provider's sheet; leave it out "
            "when comparing providers."
        )
    overrides: dict[str, str] = {}
    for item in access_prices:
        provider, sep, name = item.partition("=")
        if not sep or not provider or not name:
            raise click.UsageError(
                f"--access-prices {item!r}: write PROVIDER=SHEET, e.g. azure=azure-eastus "
                "or oracle=none."
            )
        overrides[provider.strip().lower()] = name.strip()
    comparisons = [s for s in sheets if isinstance(s, ComparisonSheet)]
    if overrides and not comparisons:
        raise click.UsageError("--access-prices goes with a comparison sheet (study-2018-tokyo).")
    access: dict[str, Any] = {}
    notes: list[str] = []
    for comparison in comparisons:
        found, said = access_sheets_for(comparison, overrides)
        access.update(found)
        notes += said
    work = Workload(objects=objects, total_bytes=total_bytes, storage_class=StorageClass.STANDARD)
    wanted = [c.strip() for c in classes.split(",") if c.strip()] if classes else None
    advice = advise_providers(
        work,
        sheets,
        reads_per_month=reads_per_month,
        tier=tier,
        egress=egress,
        access_sheets=access,
        classes=wanted,
        cold_only=cold_only,
    )
    notes = list(dict.fromkeys(notes + advice.notes))
    if ctx.as_json:
        payload = advice.model_dump(mode="json")
        payload.update(
            workload={"objects": objects, "total_bytes": total_bytes, "tier": tier},
            cheapest=advice.cheapest.name,
            notes=notes,
        )
        click.echo(json.dumps(payload))
        return
    best = advice.cheapest
    click.echo(
        f"{objects} objects, {human_bytes(total_bytes)}, {reads_per_month:g} reads/month, "
        f"{tier} restores, egress {egress}; costs in USD"
    )
    _echo_table(advice.table())
    click.echo("")
    click.echo(
        f"cheapest at {reads_per_month:g} reads/month: {best.name} ({best.label}), "
        f"{best.cost(reads_per_month):.2f} a month"
    )
    click.echo("break-even reads per month, each pair:")
    for point in advice.break_evens:
        _echo_break_even(point, indent="  ")
    for note in notes:
        click.echo(f"note: {note}")


def _policy(group_by: str, target_size: str, max_members: int, window: int) -> Any:
    from archivefs.catalog import ByChunkNeighbourhood, ByPrefix

    size = _size(target_size)
    if group_by.startswith("prefix"):
        depth = int(group_by.split(":", 1)[1]) if ":" in group_by else 1
        return ByPrefix(depth=depth, target_size=size, max_members=max_members)
    if group_by.startswith("chunks"):
        dim = int(group_by.split(":", 1)[1]) if ":" in group_by else 0
        return ByChunkNeighbourhood(
            dim_index=dim, window=window, target_size=size, max_members=max_members
        )
    raise click.BadParameter(
        f"{group_by!r}: use prefix[:DEPTH] or chunks[:DIMENSION].", param_hint="--group-by"
    )


@main.command("bundle")
@click.argument("src")
@click.argument("dest")
@click.option(
    "--group-by",
    default="prefix:1",
    show_default=True,
    help="prefix[:DEPTH] (directories) or chunks[:DIM] (zarr chunk windows).",
)
@click.option("--window", default=10, show_default=True, help="Chunks per window (chunks:DIM).")
@click.option("--target-size", default="256MiB", show_default=True, help="Bundle size to aim for.")
@click.option("--max-members", default=10_000, show_default=True, help="Members per bundle.")
@click.option(
    "--storage-class",
    default="DEEP_ARCHIVE",
    show_default=True,
    help="Class of the bundles (the catalog stays STANDARD).",
)
@click.option(
    "--hot-arrays",
    default="auto",
    show_default=True,
    help="zarr arrays kept STANDARD: auto (coordinates and small arrays), none, or a,b,c.",
)
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Bundle the targets of links that leave SRC (skipped, and listed, by default).",
)
@click.option(
    "--orphans",
    type=click.Choice(["keep", "delete"]),
    default="keep",
    show_default=True,
    help="Bundles of an earlier run that no catalog records: keep (listed) or delete "
    "those over an hour old (a younger one may be a concurrent run's; an archived bundle "
    "deleted early is billed its minimum storage period).",
)
@global_options
@click.pass_obj
def bundle_command(
    ctx: Context,
    src: str,
    dest: str,
    group_by: str,
    window: int,
    target_size: str,
    max_members: int,
    storage_class: str,
    hot_arrays: str,
    follow_symlinks: bool,
    orphans: str,
) -> None:
    """Pack small files from SRC (a directory or URL) into bundles at DEST (s3://...).

    Members appear at DEST/<path relative to SRC>; bundles and the catalog go
    under DEST/.archivefs/. Interrupted runs resume; sources are never deleted.

    \b
    Examples:
      archivefs bundle ./run42 s3://bucket/archive/run42 --storage-class DEEP_ARCHIVE
      archivefs bundle ./store.zarr s3://bucket/store.zarr --group-by chunks:0 --window 30
    """
    from archivefs.catalog.hot import parse_hot_arrays
    from archivefs.catalog.writer import bundle_tree

    def body() -> None:
        src_fs, src_root = fsspec.core.url_to_fs(src)
        options = ctx.storage_options(target_protocol([dest]))  # the destination's library
        dest_fs, dest_root = fsspec.core.url_to_fs(dest, **options)
        report = bundle_tree(
            src_fs,
            src_root,
            dest_fs,
            dest_root,
            policy=_policy(group_by, target_size, max_members, window),
            storage_class=storage_class,
            hot_arrays=parse_hot_arrays(hot_arrays),
            follow_symlinks=follow_symlinks,
            orphans="delete" if orphans == "delete" else "keep",
        )
        summary = {
            "members": report.members,
            "bundles_written": len(report.bundles_written),
            "bundles_reused": len(report.bundles_reused),
            "kept_hot": len(report.kept_hot),
            "skipped_links": report.skipped_links,
            "orphans": [{**vars(o), "note": o.describe()} for o in report.orphans],
            "cleaned_partials": report.cleaned_partials,
        }
        if ctx.as_json:
            click.echo(json.dumps(summary))
            return
        click.echo(
            f"{summary['members']} files in {summary['bundles_written']} new bundles "
            f"({summary['bundles_reused']} already there); {summary['kept_hot']} kept hot"
        )
        for link in report.skipped_links:
            click.echo(f"skipped: {link} (a link leaving SRC; --follow-symlinks to bundle it)")
        for orphan in report.orphans:
            verb = (
                "deleted"
                if orphan.deleted
                else "kept (in no catalog; under an hour old: perhaps a concurrent run's)"
                if orphans == "delete"
                else "kept (in no catalog; --orphans delete)"
            )
            click.echo(f"earlier bundle {verb}: {orphan.describe()}")
        if report.cleaned_partials:
            click.echo(f"removed {report.cleaned_partials} partial bundle(s) of a killed run")

    run_guarded(ctx, body, subject=dest)


@main.group("catalog")
@global_options
def catalog_group() -> None:
    """Show or rebuild the catalog of bundled data.

    \b
    Examples:
      archivefs catalog show s3://bucket/archive/run42
      archivefs catalog rebuild s3://bucket/archive/run42
    """


@catalog_group.command("show")
@click.argument("root")
@global_options
@click.pass_obj
def catalog_show(ctx: Context, root: str) -> None:
    """Bundles and member counts of the catalog at ROOT.

    \b
    Example:
      archivefs catalog show s3://bucket/archive/run42
    """
    from archivefs.catalog import Catalog
    from archivefs.catalog.layout import catalog_dir

    def body() -> None:
        fs, path = fsspec.core.url_to_fs(root, **ctx.storage_options(target_protocol([root])))
        catalog = Catalog.load(fs, catalog_dir(path))
        bundles = sorted(catalog.bundles.values(), key=lambda b: b.key)
        if ctx.as_json:
            click.echo(
                json.dumps(
                    {
                        "members": len(catalog),
                        "bundles": [
                            {
                                "key": b.key,
                                "size": b.size,
                                "members": b.members,
                                "storage_class": b.storage_class.value,
                            }
                            for b in bundles
                        ],
                    }
                )
            )
            return
        for b in bundles:
            click.echo(f"{b.size:>12}  {b.storage_class.value:<13} {b.members:>7} members  {b.key}")
        click.echo(f"{len(catalog)} members in {len(bundles)} bundles")

    run_guarded(ctx, body, subject=root)


@catalog_group.command("rebuild")
@click.argument("root")
@global_options
@click.pass_obj
def catalog_rebuild(ctx: Context, root: str) -> None:
    """Rebuild the catalog at ROOT from its bundles' central directories.

    The bundles must be readable (hot or restored): their directories are read.

    \b
    Example:
      archivefs catalog rebuild s3://bucket/archive/run42
    """
    from archivefs.catalog.writer import rebuild_catalog

    def body() -> None:
        fs, path = fsspec.core.url_to_fs(root, **ctx.storage_options(target_protocol([root])))
        catalog = rebuild_catalog(fs, path)
        if ctx.as_json:
            click.echo(json.dumps({"members": len(catalog), "bundles": len(catalog.bundles)}))
            return
        click.echo(f"rebuilt: {len(catalog)} members in {len(catalog.bundles)} bundles")

    run_guarded(ctx, body, subject=root)


@main.command("demo")
@click.option("--delay", default=3.0, show_default=True, help="Emulated restore delay (s).")
@click.option("--keep", is_flag=True, help="Keep the temporary files.")
@global_options
@click.pass_obj
def demo_command(ctx: Context, delay: float, keep: bool) -> None:
    """Run the whole story on an emulated archive: no cloud account needed.

    \b
    Example:
      archivefs demo
    """
    from archivefs.demo import run_demo

    summary = run_guarded(ctx, lambda: run_demo(delay=delay, keep=keep, quiet=ctx.as_json))
    if ctx.as_json:
        click.echo(json.dumps(summary))


@main.command("serve")
@click.option("--port", default=0, show_default=True, help="Port on 127.0.0.1 (0: any free).")
@click.option(
    "--delay", default=20.0, show_default=True, help="Seconds every emulated restore takes."
)
@click.option("--bucket", "buckets", multiple=True, help="Create this bucket (repeatable).")
@click.option("--seed-demo", is_flag=True, help="Put the demo dataset in (needs the demo extra).")
@global_options
@click.pass_obj
def serve_command(
    ctx: Context, port: int, delay: float, buckets: tuple[str, ...], seed_demo: bool
) -> None:
    """Run an emulated S3 archive here until Ctrl-C, to try every command on.

    Prints the endpoint and the environment to export in another shell
    (dummy credentials, AWS_ENDPOINT_URL, and ARCHIVEFS_RESTORE_TIME_SCALE
    matching --delay). Data lives in memory and is gone when it stops.

    \b
    Examples:
      archivefs serve --bucket my-bucket --delay 20
      archivefs serve --seed-demo --port 9000
    """
    from archivefs.serve import run_until_interrupted, start

    if not (delay >= 0):
        raise click.BadParameter("give the restore delay in seconds (0 or more).")
    archive, served, workdir = run_guarded(
        ctx,
        lambda: start(port=port, delay=delay, buckets=list(buckets), seed_demo=seed_demo),
    )
    with workdir:
        click.echo(json.dumps(served.as_json()) if ctx.as_json else served.text())
        run_until_interrupted(archive)
    if not ctx.as_json:
        click.echo("archivefs serve: stopped", err=True)


def _restore_eta(fs: ArchiveFileSystem, plan: Any) -> Any:
    """When the restores in flight are expected to be done, from the journal's records."""
    journal = fs.engine.journal
    restoring = [g.key for g in plan.groups if g.state.restore.value == "restoring"]
    if journal is None or not restoring:
        return None
    times = [r.expected_ready_at for r in journal.records(restoring) if r.expected_ready_at]
    return max(times) if times else None


def _jsonable(entry: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in entry.items():
        out[key] = value.isoformat() if hasattr(value, "isoformat") else value
    return out


if __name__ == "__main__":  # pragma: no cover
    main()
