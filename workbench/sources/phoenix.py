"""Runs read from a running Arize Phoenix server: its spans pulled page by page through the Phoenix client and
mapped by the span files' importer (:func:`workbench.importers.otel_genai.runs_from_spans`). docs/importers/phoenix.md
(runs, labels, the key, failures); needs the ``phoenix`` extra.

    phoenix://HOST:PORT/PROJECT[?since=ISO&until=ISO&label_from=ANNOTATION]     (phoenix+https:// for TLS)
    wb.load_phoenix("http://127.0.0.1:6006", "my-project", since=..., until=..., label_from="correctness")
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from workbench.trace.errors import TraceError
from workbench.trace.schema import Run, Segment

INSTALL_HINT = "reading from Phoenix needs its client: pip install -e '.[phoenix]'"
KEY_ENV = "PHOENIX_API_KEY"  # the variable Phoenix's own client reads
MAX_SPANS = 2_000_000  # a pull past this is refused, not held in memory: narrow it with since/until
TIMEOUT_S = 30.0  # per page


@dataclass(frozen=True)
class PhoenixSource:
    """Where to pull from: the server's base URL, the project, a time window and the label annotation."""

    base_url: str
    project: str
    since: datetime | None = None
    until: datetime | None = None
    label_from: str | None = None

    @property
    def url(self) -> str:
        """The source as a ``phoenix://`` URL (how runs name their source file)."""
        parts = urlsplit(self.base_url)
        scheme = "phoenix" if parts.scheme == "http" else "phoenix+https"
        query = {
            k: v
            for k, v in (
                ("since", self.since.isoformat() if self.since else None),
                ("until", self.until.isoformat() if self.until else None),
                ("label_from", self.label_from),
            )
            if v
        }
        tail = f"?{urlencode(query)}" if query else ""
        return f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}/{quote(self.project, safe='')}{tail}"


def _when(text: str | datetime | None, what: str) -> datetime | None:
    if text is None or text == "":
        return None
    try:
        when = text if isinstance(text, datetime) else datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what}: not an ISO date or time: {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def parse(url: str) -> PhoenixSource:
    """A ``phoenix://HOST:PORT/PROJECT`` URL (or ``phoenix+https://``; the single-slash form a ``Path`` leaves of
    either) as a :class:`PhoenixSource`. Raises ``ValueError`` naming what is wrong."""
    text = os.fspath(url)
    scheme, sep, rest = text.partition(":")
    if scheme not in ("phoenix", "phoenix+http", "phoenix+https") or not sep:
        raise ValueError(f"{text}: not a phoenix:// URL")
    rest = "//" + rest.lstrip("/")
    parts = urlsplit(f"{'https' if scheme.endswith('https') else 'http'}:{rest}")
    if not parts.hostname:
        raise ValueError(f"{text}: no host (phoenix://HOST:PORT/PROJECT)")
    try:
        parts.port  # noqa: B018 - validates the port
    except ValueError:
        raise ValueError(f"{text}: the port is not a number") from None
    path = parts.path.strip("/")
    prefix, _, project = path.rpartition("/")
    if not project:
        raise ValueError(f"{text}: no project (phoenix://HOST:PORT/PROJECT)")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = sorted(set(query) - {"since", "until", "label_from"})
    if unknown:
        raise ValueError(f"{text}: unknown parameter {unknown[0]!r} (since, until, label_from)")
    base = f"{parts.scheme}://{parts.netloc}" + (f"/{prefix}" if prefix else "")
    return PhoenixSource(
        base_url=base,
        project=unquote(project),
        since=_when(query.get("since"), "since"),
        until=_when(query.get("until"), "until"),
        label_from=query.get("label_from") or None,
    )


def source_url(
    base_url: str,
    project: str,
    *,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    label_from: str | None = None,
) -> str:
    """The ``phoenix://`` URL for a server's base URL (``http://HOST:PORT``) and a project (the CLI's
    ``--phoenix URL --project NAME``)."""
    parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{base_url}: give the server as http://HOST:PORT")
    if not project:
        raise ValueError("a project name is needed (--project)")
    source = PhoenixSource(
        base_url=f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}",
        project=project,
        since=_when(since, "since"),
        until=_when(until, "until"),
        label_from=label_from,
    )
    return source.url


@dataclass
class _Pull:
    """How far a pull got (what an error says)."""

    pages: int = 0
    spans: int = 0
    on_page: Callable[[int], None] | None = None

    def page(self, n: int) -> None:
        self.pages += 1
        self.spans += n
        if self.on_page is not None:
            self.on_page(n)

    def words(self) -> str:
        if not self.pages:
            return "before the first page"
        return f"after {self.spans:,} span(s) in {self.pages} page(s)"


def _key(api_key_env: str | None, environ: Mapping[str, str] | None) -> Any:
    from workbench.loop.secrets import KeyRefused, Secret

    env = os.environ if environ is None else environ
    if not api_key_env or not env.get(api_key_env):
        return Secret("")
    try:
        return Secret.from_env(api_key_env, env)
    except KeyRefused as exc:
        raise TraceError(api_key_env, str(exc)) from None


def _client(source: PhoenixSource, secret: Any, pull: _Pull, timeout: float) -> Any:
    try:
        import httpx
        from phoenix.client import Client
    except ModuleNotFoundError as exc:
        raise TraceError(source.url, INSTALL_HINT) from exc

    def counted(response: httpx.Response) -> None:
        if (
            "/spans" in response.url.path
            and response.status_code == 200
            and "annotations" not in response.url.path
        ):
            response.read()
            with contextlib.suppress(ValueError):
                pull.page(len(response.json().get("data") or ()))

    http = httpx.Client(
        base_url=source.base_url,
        headers=secret.header() if secret.present else {},
        timeout=timeout,
        event_hooks={"response": [counted]},
        follow_redirects=False,  # a redirect elsewhere would carry the key with it
    )
    return Client(base_url=source.base_url, http_client=http), http


def _failure(
    source: PhoenixSource, exc: BaseException, pull: _Pull, redact: Callable[[str], str]
) -> TraceError:
    import httpx

    where = source.url
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        if status in (401, 403):
            why = f"Phoenix refused the request ({status}): set {KEY_ENV} to a key this server accepts"
        elif status == 404:
            why = f"Phoenix has no project {source.project!r} (404)"
        else:
            body = " ".join(exc.response.text.split())[:200]
            why = f"Phoenix answered {status}" + (f": {body}" if body else "")
    elif isinstance(exc, httpx.TimeoutException):
        why = "Phoenix did not answer in time"
    elif isinstance(exc, httpx.ConnectError):
        why = "cannot reach Phoenix (is the server running?)"
    elif isinstance(exc, httpx.HTTPError):
        why = f"the connection to Phoenix failed: {type(exc).__name__}"
    else:
        why = f"unexpected answer from Phoenix: {type(exc).__name__}: {exc}"
    return TraceError(redact(where), redact(f"{why}, {pull.words()}"))


def _label(
    runs: list[Run], annotations: list[Mapping[str, Any]], name: str, trace_of: dict[str, str]
) -> None:
    """Each run's label from the annotation ``name`` on one of its spans (a root span's first); a run without one
    says so in its lossy notes."""
    by_trace: dict[str, Mapping[str, Any]] = {}
    for ann in annotations:
        if ann.get("name") != name:
            continue
        trace = trace_of.get(str(ann.get("span_id")))
        if trace is not None and trace not in by_trace:
            by_trace[trace] = ann
    for run in runs:
        ann = next(
            (
                by_trace[t]
                for t in run.metadata.get("trace_ids", [run.metadata.get("trace_id")])
                if t in by_trace
            ),
            {},
        )
        result = ann.get("result") if isinstance(ann.get("result"), Mapping) else {}
        label, score = result.get("label"), result.get("score")
        if not isinstance(label, str) or not label:
            label = {1: "resolved", 0: "unresolved"}.get(score) if isinstance(score, int | float) else None
        if label is None:
            run.lossy.append(f"no {name!r} annotation on this trace: unlabelled")
            continue
        run.outcome.label = label
        run.outcome.score = (
            float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
        )
        run.outcome.label_source = f"phoenix annotation {name!r}"


def _by_session(spans: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Spans regrouped so the traces of one session share one trace id (the session's); which traces each holds."""
    session_of: dict[str, str] = {}
    for s in spans:
        trace = (s.get("context") or {}).get("trace_id")
        attrs = s.get("attributes") or {}
        sid = attrs.get("session.id") or attrs.get("gen_ai.conversation.id")
        if isinstance(trace, str) and isinstance(sid, str) and sid and trace not in session_of:
            session_of[trace] = sid
    traces: dict[str, list[str]] = {}
    out = []
    for s in spans:
        ctx = dict(s.get("context") or {})
        trace = ctx.get("trace_id")
        sid = session_of.get(trace) if isinstance(trace, str) else None
        if sid is None:
            out.append(s)
            continue
        if trace not in traces.setdefault(sid, []):
            traces[sid].append(trace)
        ctx["trace_id"] = f"session:{sid}"
        out.append({**s, "context": ctx})
    return out, traces


def _segments(run: Run, traces: list[str], first_start: dict[str, datetime | None]) -> None:
    """A session's run gets a segment per trace, in order of their first span."""
    ordered = sorted(traces, key=lambda t: first_start.get(t) or datetime.min.replace(tzinfo=UTC))
    if len(ordered) < 2:
        return
    bounds = [first_start.get(t) for t in ordered]
    if any(b is None for b in bounds):
        return
    starts = [
        next((i for i, turn in enumerate(run.turns) if turn.started_at and turn.started_at >= b), None)
        for b in bounds
    ]
    segs = []
    for k, start in enumerate(starts):
        if start is None:
            continue
        stop = next((s for s in starts[k + 1 :] if s is not None), len(run.turns))
        if stop > start:
            segs.append(Segment(index=len(segs), start=start, stop=stop))
    if len(segs) > 1:
        run.segments = segs


def load_phoenix(
    url: str,
    project: str | None = None,
    *,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    label_from: str | None = None,
    api_key_env: str | None = KEY_ENV,
    progress: bool | Callable[[int], None] = False,
    max_spans: int = MAX_SPANS,
    timeout: float = TIMEOUT_S,
    environ: Mapping[str, str] | None = None,
) -> list[Run]:
    """The runs in a Phoenix project. ``url`` is the server (``http://HOST:PORT``, with ``project``) or a whole
    ``phoenix://HOST:PORT/PROJECT`` URL; ``since``/``until`` bound the spans' start times; ``label_from`` names the
    annotation that labels each run. ``progress``: a tqdm bar on stderr (True) or a callable given each page's
    span count. Raises :class:`~workbench.trace.errors.TraceError` (one line; the key masked) if the server fails."""
    from workbench.sources import is_remote

    if is_remote(url):
        source = parse(url)
        if project is not None:
            source = replace(source, project=project)
    elif project is None:
        raise ValueError(
            f"{url}: name the project (load_phoenix(url, project)) or give phoenix://HOST:PORT/PROJECT"
        )
    else:
        source = parse(source_url(url, project))
    source = replace(
        source,
        since=_when(since, "since") if since is not None else source.since,
        until=_when(until, "until") if until is not None else source.until,
        label_from=label_from if label_from is not None else source.label_from,
    )
    from workbench.importers.otel_genai import runs_from_spans

    secret = _key(api_key_env, environ)
    bar = None
    pull = _Pull()
    if callable(progress):
        pull.on_page = progress
    elif progress:
        from tqdm.auto import tqdm

        # disable=None: a bar on a terminal (or a notebook), nothing in a log or a pipe
        bar = tqdm(desc=f"phoenix {source.project}", unit=" spans", leave=False, disable=None)
        pull.on_page = bar.update
    try:
        client, http = _client(source, secret, pull, timeout)
        with http:
            try:
                spans = client.spans.get_spans(
                    project_identifier=source.project,
                    start_time=source.since,
                    end_time=source.until,
                    limit=max_spans + 1,
                    timeout=int(timeout),
                )
            except Exception as exc:  # every failure is one line that says how far the pull got
                raise _failure(source, exc, pull, secret.redact) from None
            if len(spans) > max_spans:
                raise TraceError(
                    source.url,
                    f"more than {max_spans:,} spans: narrow the pull with since/until (--since, --until)",
                )
            if not spans:
                raise TraceError(
                    source.url,
                    "no spans in this project" + (" in that window" if source.since or source.until else ""),
                )
            plain = [dict(s) for s in spans]
            grouped, sessions = _by_session(plain)
            runs = runs_from_spans(grouped, source.url, where=f"in Phoenix project {source.project!r}")
            trace_of = {
                str((s.get("context") or {}).get("span_id")): str((s.get("context") or {}).get("trace_id"))
                for s in plain
            }
            first_start: dict[str, datetime | None] = {}
            for s in plain:
                t = str((s.get("context") or {}).get("trace_id"))
                when = (
                    _when(s.get("start_time"), "start_time") if isinstance(s.get("start_time"), str) else None
                )
                if when is not None and (first_start.get(t) is None or when < first_start[t]):  # type: ignore[operator]
                    first_start[t] = when
            for run in runs:
                sid = run.metadata.get("trace_id", "")
                if isinstance(sid, str) and sid.startswith("session:"):
                    members = sessions.get(sid.removeprefix("session:"), [])
                    run.metadata["trace_ids"] = members
                    run.metadata["session_id"] = sid.removeprefix("session:")
                    if run.run_id == sid:
                        run.run_id = sid.removeprefix("session:")
                    _segments(run, members, first_start)
                run.metadata["phoenix_project"] = source.project
            if source.label_from:
                try:
                    annotations = client.spans.get_span_annotations(
                        span_ids=list(trace_of),
                        project_identifier=source.project,
                        include_annotation_names=[source.label_from],
                        timeout=int(timeout),
                    )
                except Exception as exc:
                    raise _failure(source, exc, pull, secret.redact) from None
                _label(runs, [dict(x) for x in annotations], source.label_from, trace_of)
    finally:
        if bar is not None:
            bar.close()
    return runs
