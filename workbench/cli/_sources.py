"""The flags that name a backend to read runs from instead of (or beside) files: ``--phoenix URL --project NAME``
(with ``--label-from``, ``--since``, ``--until``). They become one ``phoenix://`` PATH (workbench.sources), so every
command reads a backend the way it reads a file; a ``phoenix://HOST:PORT/PROJECT`` PATH works without them."""

from __future__ import annotations

import argparse

from workbench.cli import errors


def add_paths(p: argparse.ArgumentParser, what: str = "trace files or folders") -> None:
    """PATH... (``what``, or phoenix:// URLs) and the Phoenix flags."""
    p.add_argument("paths", nargs="*", metavar="PATH", help=f"{what}, or phoenix://HOST:PORT/PROJECT")
    g = p.add_argument_group("runs from a running Arize Phoenix (docs/importers/phoenix.md)")
    g.add_argument(
        "--phoenix", metavar="URL", help="the Phoenix server, http://HOST:PORT (key: $PHOENIX_API_KEY)"
    )
    g.add_argument("--project", metavar="NAME", help="the Phoenix project to read (with --phoenix)")
    g.add_argument(
        "--label-from",
        metavar="ANNOTATION",
        help="label each run from this span annotation (its label, or a score of 1/0 as resolved/unresolved)",
    )
    g.add_argument("--since", metavar="ISO", help="only spans that started at or after this time")
    g.add_argument("--until", metavar="ISO", help="only spans that started before this time")


def fold_sources(args: argparse.Namespace) -> None:
    """``--phoenix``/``--project`` as one more PATH; a misuse raises :class:`errors.UsageError` before any work."""
    phoenix = getattr(args, "phoenix", None)
    extras = [f for f in ("project", "label_from", "since", "until") if getattr(args, f, None)]
    if phoenix is None:
        if extras:
            flag = "--" + extras[0].replace("_", "-")
            if not any(str(p).startswith("phoenix") for p in getattr(args, "paths", []) or []):
                raise errors.UsageError(flag, "reads from Phoenix: give --phoenix URL (and --project NAME)")
            raise errors.UsageError(
                flag,
                "give it with --phoenix URL --project NAME, or as ?since=&until=&label_from= in the phoenix:// URL",
            )
        return
    from workbench.sources.phoenix import source_url

    try:
        url = source_url(
            phoenix, args.project or "", since=args.since, until=args.until, label_from=args.label_from
        )
    except ValueError as exc:
        raise errors.UsageError("--phoenix", str(exc)) from None
    args.paths = [*(args.paths or []), url]
