"""Does a shell command change the workspace? Read from its parse tree (tree-sitter-bash), never from the text:
write, read-only or unknown (never read as "no change"), by the rules summarised in docs/importers/README.md (the
command tables below hold them in full).

The seed counts a revision, not distinct paths (``linear.go``: "a second edit to the same file is still a new
action"), so every write counts, to the same file or not. Why tree-sitter-bash rather than bashlex: it is the
maintained grammar (tree-sitter org, 2025 releases, abi3 wheels) and it is error-tolerant — an agent's command that
does not fully parse still yields the commands and redirects around the error (a write found there stands; nothing
else is concluded from a tree with errors) — where bashlex (last release 2023) raises on heredocs in lists, ``[[``,
arithmetic and many constructs agents write.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from workbench.importers._common import words

Kind = Literal["write", "read-only", "unknown"]


@dataclass(frozen=True, slots=True)
class Effect:
    """What a command does to the workspace, and the rule that says so (e.g. ``sed -i``, ``redirect > fix.py``)."""

    kind: Kind
    rule: str


# Commands that never write a file on their own (a redirect of theirs still may).
READ_ONLY = words("""
    cat tac grep egrep fgrep rg ag ack ls ll dir tree nl head tail wc echo printf pwd cd pushd popd which type
    whereis command file stat diff cmp comm sort uniq cut tr column fold less more du df whoami id uname
    hostname date true false test [ [[ basename dirname realpath readlink xxd od hexdump strings md5sum
    sha1sum sha256sum cksum seq sleep jq printenv export set unset alias history clear exit return : shopt
    ulimit locale nproc free ps zcat bzcat xzcat paste join expand unexpand rev look wait jobs hash read
    gofmt prettier yapf clang-format curl
""")
# Options by which a command writes a file (``history -w`` its history, ``file -C`` magic.mgc), or may (``less -o``
# logs only a pipe it pages on a terminal; ``rg --pre`` runs a command on every file), as ``_option`` matches them:
# "--output=" whole (not ``--outputs``), "-o" as a prefix (``-ofile``) and in a cluster (``-no``), "-fprint" a prefix.
OPTION_WRITES = {
    "sort": ("write", ("-o", "--output=")), "tree": ("write", ("-o",)), "history": ("write", ("-a", "-w")),
    "file": ("write", ("-C", "--compile=")), "find": ("write", ("-delete=", "-fprint", "-fls=")),
    "less": ("unknown", ("-o", "-O", "--log-file=", "--LOG-FILE=")), "rg": ("unknown", ("--pre=",)),
    "gofmt": ("write", ("-w=",)), "prettier": ("write", ("--write=", "-w=")), "clang-format": ("write", ("-i=",)),
    "yapf": ("write", ("-i", "--in-place=")),  # these four print their formatting unless told to write it back
    # curl writes standard output unless told to write a file (a ~/.curlrc that tells it to is not seen)
    "curl": ("unknown", ("-o", "-O", "--output=", "--remote-name", "-D", "--dump-header=", "-c", "--cookie-jar=",
                         "--trace", "--stderr=", "--libcurl=", "--etag-save=", "-K", "--config=")),
}  # fmt: skip
# Commands that write unless an option says they only check or print: black and isort rewrite their files in place
# (``-`` formats standard input to standard output), patch applies (GNU ``--dry-run``, BSD ``-C``/``--check``).
WRITES_UNLESS = {
    "black": ("--check=", "--diff=", "-c=", "--code=", "-="), "patch": ("--dry-run=", "-C=", "--check="),
    "isort": ("--check-only=", "--check=", "-c=", "--diff=", "--stdout=", "-d=", "-="), "apply_patch": (),
}  # fmt: skip
# Commands that write to the paths they are given (all of them, or the last one: ``TO_LAST``).
WRITES_PATHS = frozenset(["rm", "rmdir", "touch", "mkdir", "truncate", "unlink", "chmod", "chown", "shred"])
TO_LAST = frozenset({"cp", "install", "ln"})
# Wrappers that run the rest of their arguments as a command.
WRAPPERS = frozenset({"sudo", "nice", "nohup", "time", "exec", "stdbuf", "builtin", "doas"})
PYTHONS = ("python", "python3", "python2", "pypy", "pypy3")
GIT_WRITES = words("""
    apply am checkout restore reset stash clean commit merge rebase cherry-pick revert mv rm switch pull
""")
# Each turns applying off, unless --apply is given too, as git does (docs/importers/README.md).
GIT_APPLY_OFF = frozenset({"--check", "--stat", "--numstat", "--summary"})
GIT_READS = words("""
    diff status log show blame grep ls-files ls-tree rev-parse describe shortlog cat-file reflog whatchanged
    help version --version
""")
# Places a write does not reach the workspace.
OUTSIDE = ("/dev/", "/tmp/", "/proc/")
OUTSIDE_EXACT = frozenset({"/dev/null", "/tmp", "-"})
# A sed command that writes a file or runs one: w/W FILE, or e, after a boundary, an address or an s command's flags.
SED_RUNS = re.compile(r"(?:^|[;\n{}$!]|\d|/[gpiImM\d]*)\s*[wWe](?:\s|$|;|\})")
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)  # a backslash and the character it keeps

# Python calls that write, remove, move or make a file (method or function names).
PY_WRITES = words("""
    write_text write_bytes unlink remove rmtree rename replace move copy copy2 copyfile copytree mkdir
    makedirs touch symlink_to hardlink_to rmdir removedirs link symlink truncate
""")
PY_PROCESSES = words("""
    system popen run call check_call check_output Popen spawnl spawnv execv execvp exec eval
""")


@cache
def _parser():  # type: ignore[no-untyped-def]
    import tree_sitter as ts
    import tree_sitter_bash as tsb

    return ts.Parser(ts.Language(tsb.language()))


def classify(command: str) -> Effect:
    """The effect of one shell command line (or script) on the workspace."""
    if not command.strip():
        return Effect("read-only", "empty command")
    tree = _parser().parse(command.encode("utf-8", "surrogatepass"))
    walk = _Walk()
    walk.visit(tree.root_node)
    if walk.writes:
        return Effect("write", walk.writes[0])
    if tree.root_node.has_error:
        return Effect("unknown", "the command does not parse as bash")
    if walk.unknown:
        return Effect("unknown", walk.unknown[0])
    return Effect(
        "read-only", "read-only: " + ", ".join(dict.fromkeys(walk.reads)) if walk.reads else "no command"
    )


def _text(node) -> str:  # type: ignore[no-untyped-def]
    return node.text.decode("utf-8", "surrogatepass")


_DYNAMIC = frozenset({"simple_expansion", "expansion", "command_substitution", "process_substitution"})


def _dynamic(node) -> bool:  # type: ignore[no-untyped-def]
    if node.type in _DYNAMIC:
        return True
    return any(_dynamic(c) for c in node.children)


def _unquote(node) -> str:  # type: ignore[no-untyped-def]
    t = node.type
    if t in ("raw_string", "string"):
        return _text(node)[1:-1]
    if t == "ansi_c_string":
        return _text(node)[2:-1]
    if t in ("concatenation", "command_name"):  # a name too: ``\rm`` and ``"rm"`` are rm
        return "".join(_unquote(c) for c in node.children)
    if t == "word":
        return _ESCAPED.sub(r"\1", _text(node))  # a backslash keeps the character after it
    return _text(node)


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    dynamic: bool


@dataclass
class _Walk:
    writes: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    in_tmp: bool = False  # a `cd /tmp…` ran before: relative paths are outside the workspace

    def visit(self, node) -> None:  # type: ignore[no-untyped-def]
        t = node.type
        if t == "redirected_statement":
            self._redirected(node)
            return
        if t == "command":
            self._command(node, None)
            self._command_parts(node, ("file_redirect", "herestring_redirect", "command_substitution"))
            return
        if t == "file_redirect":
            self._redirect(node)
            return
        if t in ("heredoc_body", "comment"):
            for d in _substitutions(node):
                self.visit(d)
            return
        for c in node.children:
            self.visit(c)

    # -- statements ------------------------------------------------------------------------------------------
    def _redirected(self, node) -> None:  # type: ignore[no-untyped-def]
        body = node.child_by_field_name("body")
        heredocs = [c for c in node.children if c.type == "heredoc_redirect"]
        here = "\n".join(_text(b) for h in heredocs for b in h.children if b.type == "heredoc_body")
        if body is not None:
            # the heredoc feeds the last simple command before it (tree-sitter may attach it to a whole list)
            last = _last_command(body) if heredocs else None
            self._visit_with_stdin(body, last, here)
        # after the body: a redirect of a whole list applies where its last command ran
        for c in node.children:
            if _same(c, body) or c.type == "heredoc_redirect":
                continue
            self.visit(c)
        for h in heredocs:
            for c in h.children:
                if c.type in ("file_redirect", "heredoc_body") or c.type in ("pipeline", "command", "list"):
                    self.visit(c)

    def _visit_with_stdin(self, node, target, stdin: str) -> None:  # type: ignore[no-untyped-def]
        if node.type == "command":
            self._command(node, stdin if _same(node, target) else None)
            self._command_parts(node, ("file_redirect", "herestring_redirect"))
            return
        if node.type == "redirected_statement":
            self._redirected(node)
            return
        if node.type == "file_redirect":
            self._redirect(node)
            return
        for c in node.children:
            self._visit_with_stdin(c, target, stdin)

    def _command_parts(self, node, visited: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
        """A command's children of the ``visited`` types (its redirects), and the substitutions in its words
        (they run)."""
        for c in node.children:
            if c.type in visited:
                self.visit(c)
            elif c.type not in ("command_name", "variable_assignment"):
                for d in _substitutions(c):
                    self.visit(d)

    def _redirect(self, node) -> None:  # type: ignore[no-untyped-def]
        ops = [c.type for c in node.children if not c.is_named]
        op = ops[0] if ops else ">"
        if op.startswith("<") and op != "<>":
            return
        dest = node.child_by_field_name("destination")
        if dest is None:
            return
        if dest.type == "number" or (op in (">&", "<&") and _text(dest).isdigit()):
            return  # to a file descriptor
        if _dynamic(dest):
            self.unknown.append(f"redirect {op} to a path held in a variable")
            return
        path = _unquote(dest)
        if op in (">&", "&>", "&>>", ">|", ">", ">>", "<>") and not self._outside(path):
            self.writes.append(f"redirect {op} {path}")

    def _outside(self, path: str) -> bool:
        if path in OUTSIDE_EXACT or path.startswith(OUTSIDE) or path.isdigit():
            return True
        return self.in_tmp and not path.startswith("/")

    # -- commands --------------------------------------------------------------------------------------------
    def _command(self, node, stdin: str | None) -> None:  # type: ignore[no-untyped-def]
        name_node = node.child_by_field_name("name")
        if name_node is None:
            self.reads.append("assignment")
            return
        words = [
            _Word(_unquote(c), _dynamic(c)) for c in (name_node, *node.children_by_field_name("argument"))
        ]
        herestring = next((c for c in node.children if c.type == "herestring_redirect"), None)
        if herestring is not None and stdin is None:
            stdin = "\n".join(_unquote(c) for c in herestring.children if c.is_named)
        self._words(words, stdin)

    def _words(self, words: list[_Word], stdin: str | None) -> None:
        if not words:
            return
        head = words[0]
        if head.dynamic:
            self.unknown.append(f"a command held in a variable ({head.text})")
            return
        if "/" in head.text and not head.text.startswith("/"):
            self.unknown.append(f"{head.text} runs a script")
            return
        name = head.text.rsplit("/", 1)[-1]  # /usr/bin/sed is sed
        args = words[1:]
        texts = [a.text for a in args]
        kind, opts = OPTION_WRITES.get(name, ("", ()))
        if seen := _option(texts, opts):
            rule = f"{name} {seen}" if kind == "write" else f"{name} {seen} may write a file"
            (self.writes if kind == "write" else self.unknown).append(rule)
            return
        if name in WRAPPERS or (name == "command" and not {"-v", "-V"} & {*texts}):  # command -v: a lookup
            self._words(_past_options(args), stdin)
            return
        if name == "env":
            rest = args
            while rest and (rest[0].text.startswith("-") or "=" in rest[0].text):
                rest = rest[1:]
            if rest:
                self._words(rest, stdin)
            else:
                self.reads.append("env")
            return
        if name == "timeout":
            rest = _past_options(args, ("-s", "--signal", "-k", "--kill-after"))
            self._words(rest[1:], stdin)  # past the duration
            return
        if name == "xargs":
            rest = _past_options(args, ("-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a"))
            if not rest:
                self.reads.append("xargs echo")
            elif rest[0].text.rsplit("/", 1)[-1] in WRITES_PATHS | TO_LAST | {"mv"} and not [
                a for a in rest[1:] if not a.text.startswith("-")
            ]:
                self.writes.append(f"xargs {rest[0].text}")  # the paths come from its input
            else:
                self._words(rest, None)
            return
        if name in ("bash", "sh", "zsh", "dash"):
            if "-c" in texts:
                i = texts.index("-c")
                if i + 1 < len(args) and not args[i + 1].dynamic:
                    self._take(classify(args[i + 1].text), f"{name} -c")
                    return
            if not [a for a in texts if not a.startswith("-")] and stdin is not None:
                self._take(classify(stdin), f"{name} <<script")
                return
            self.unknown.append(f"{name} runs a script")
            return
        if name.startswith(PYTHONS):
            self._python(name, args, stdin)
            return
        if name == "sed":
            if wrote := _in_place(name, texts, "efl", ("--in-place",)):
                self.writes.append(wrote)
            elif _option(texts, ("-f", "--file=")) or any(SED_RUNS.search(t) for t in texts):
                self.unknown.append("sed script may write (w) or run (e), or is read from a file (-f)")
            else:
                self.reads.append(name)
            return
        if name == "perl":
            wrote = _in_place(name, texts, "eEIMmlx", ())
            (self.writes if wrote else self.unknown).append(wrote or "perl without -i runs a program")
            return
        if name in ("ed", "ex"):
            script = stdin or ""
            if any(line.strip() in ("w", "wq", "x", "wq!", "w!") or line.strip().startswith("w ")
                   for line in script.splitlines()):  # fmt: skip
                self.writes.append(f"{name} script with a write command")
            elif stdin is not None:
                self.reads.append(name)
            else:
                self.unknown.append(f"{name} without a script")
            return
        if name == "tee":
            self._paths(name, [a for a in args if not a.text.startswith("-")])
            return
        if name in WRITES_PATHS or name in TO_LAST or name == "mv":
            paths = [a for a in args if not a.text.startswith("-")]
            if name in ("chmod", "chown"):
                paths = paths[1:]  # the mode or owner
            if "-t" in texts and name in TO_LAST:  # -t DIR: the folder written (mv empties its sources too)
                paths = args[texts.index("-t") + 1 :][:1]
            elif name == "ln" and len(paths) == 1:
                self.writes.append("ln into the working directory")
                return
            if paths:
                self._paths(name, paths[-1:] if name in TO_LAST else paths)
            else:
                self.unknown.append(f"{name} without a path")
            return
        if name == "dd":  # of=FILE is written; without it, dd writes its standard output
            self._paths("dd", [_Word(a.text[3:], a.dynamic) for a in args if a.text.startswith("of=")][:1])
            return
        if name in WRITES_UNLESS:  # apply_patch: Codex's patch tool, run as a command
            seen = _option(texts, WRITES_UNLESS[name])
            (self.reads if seen else self.writes).append(f"{name} {seen}" if seen else name)
            return
        if name == "git":
            self._git(args)
            return
        if name == "find":
            self._find(args)
            return
        if name in ("awk", "gawk", "mawk"):
            if "-i" in texts and "inplace" in texts:
                self.writes.append(f"{name} -i inplace")
                return
            program = next((a.text for a in args if not a.text.startswith("-")), "")
            if "system(" in program or (">" in program.replace(">=", "") and "print" in program):
                self.unknown.append(f"{name} program may write or run a command")
            else:
                self.reads.append(name)
            return
        takes = {"uniq": ("-f", "-s", "-w"), "xxd": ("-c", "-g", "-l", "-n", "-o", "-s", "-R")}.get(name)
        if takes is not None and len(_past_options(args, takes)) >= 2:  # uniq IN OUT, xxd IN OUT: OUT written
            self.writes.append(f"{name} to an output file")
            return
        if name == "cd":
            target = texts[0] if texts else "~"
            stays = self.in_tmp and not target.startswith(("/", "~"))  # a relative path from /tmp
            self.in_tmp = target == "/tmp" or target.startswith("/tmp/") or stays
            self.reads.append("cd")
            return
        if name in READ_ONLY:
            self.reads.append(name)
            return
        if name == "pip" and texts[:1] in (["list"], ["show"], ["freeze"], ["--version"]):
            self.reads.append("pip " + texts[0])
            return
        self.unknown.append(f"{name} is not known to leave the workspace unchanged")

    def _take(self, effect: Effect, how: str) -> None:
        if effect.kind == "read-only":
            self.reads.append(how)
        else:
            (self.writes if effect.kind == "write" else self.unknown).append(f"{how}: {effect.rule}")

    def _paths(self, name: str, paths: list[_Word]) -> None:
        if not paths:
            self.reads.append(name)
            return
        inside = [p for p in paths if p.dynamic or not self._outside(p.text)]
        if inside:
            self.writes.append(f"{name} {inside[0].text}")
        else:
            self.reads.append(f"{name} outside the workspace")

    def _python(self, name: str, args: list[_Word], stdin: str | None) -> None:
        texts = [a.text for a in args]
        if texts[:1] in (["--version"], ["-V"]):
            self.reads.append(f"{name} --version")
            return
        code: str | None = None
        if "-c" in texts:
            i = texts.index("-c")
            if i + 1 < len(args) and not args[i + 1].dynamic:
                code = args[i + 1].text
        elif (not texts or texts == ["-"] or all(t.startswith("-") for t in texts)) and stdin is not None:
            code = stdin
        if code is None:
            self.unknown.append(f"{name} runs a program ({' '.join(texts[:2]) or 'stdin'})")
            return
        self._take(python_effect(code), f"{name} code")

    def _git(self, args: list[_Word]) -> None:
        rest = [a.text for a in _past_options(args, ("-C", "-c", "--git-dir", "--work-tree"))]
        if not rest:
            self.reads.append("git")
            return
        sub, more = rest[0], rest[1:]
        if sub == "stash" and more[:1] in (["list"], ["show"]):
            self.reads.append("git stash " + more[0])
        elif sub == "apply" and (off := GIT_APPLY_OFF & {*more}) and "--apply" not in more:
            self.reads.append(f"git apply {min(off)}")
        elif sub == "clean" and any(a in ("-n", "--dry-run") for a in more):
            self.reads.append("git clean -n")
        elif sub in GIT_WRITES:
            self.writes.append(f"git {sub}")
        elif sub in GIT_READS or (sub == "branch" and all(a.startswith("-") for a in more)):
            self.reads.append(f"git {sub}")
        else:
            self.unknown.append(f"git {sub} is not known to leave the workspace unchanged")

    def _find(self, args: list[_Word]) -> None:
        texts = [a.text for a in args]
        for i, t in enumerate(texts):
            if t in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(texts)) if texts[j] in (";", "+")), len(texts))
                self._words(args[i + 1 : end], None)
        self.reads.append("find")


def _in_place(name: str, texts: list[str], takes_arg: str, long: tuple[str, ...]) -> str | None:
    """The rule of ``name``'s in-place option (``-i``, alone or in a cluster before a value), else None."""
    for a in texts:
        if a == "--":
            break
        if a.startswith("--"):
            if any(a == x or a.startswith(x + "=") for x in long):
                return f"{name} {a}"
        elif a.startswith("-") and len(a) > 1:
            for ch in a[1:]:
                if ch == "i":
                    return f"{name} -i"
                if ch in takes_arg:
                    break
    return None


def _option(texts: list[str], opts: tuple[str, ...]) -> str | None:
    """The first of ``opts`` among a command's words: one ending in "=" matched whole, a dash and a letter also in a
    cluster of short options (``-sSLo``; a value attached may match too: a write read where there is none; ``-=``,
    a lone dash, never in a cluster: ``black -l=88`` writes), any other as a prefix."""
    for o in opts:
        short = len(o) == 2 and o[1].isalpha()  # "-o": in a cluster too
        if any((a + "=").startswith(o) or (short and a[:1] == "-" != a[1:2] and o[1] in a) for a in texts):
            return o.rstrip("=")
    return None


def _past_options(args: list[_Word], takes: tuple[str, ...] = ()) -> list[_Word]:
    """The words after a command's leading options (an option in ``takes`` with the argument after it)."""
    while args and args[0].text.startswith("-"):
        args = args[2:] if args[0].text in takes else args[1:]
    return args


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    """One node of the tree (py-tree-sitter hands out a new object at each access)."""
    return b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _substitutions(node) -> Iterator:  # type: ignore[type-arg]
    """Command substitutions inside a word (they run)."""
    for c in node.children:
        if c.type in ("command_substitution", "process_substitution"):
            yield c
        else:
            yield from _substitutions(c)


def _last_command(node):  # type: ignore[no-untyped-def]
    if node.type == "command":
        return node
    return next((found for c in reversed(node.children) if (found := _last_command(c)) is not None), None)


def python_effect(code: str) -> Effect:
    """The effect of Python source on the workspace, from its syntax tree: a write (``open`` for writing, or a
    call that writes, removes, moves or makes a file), unknown (a process started, ``exec``/``eval``, or code that
    does not parse), else read-only."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return Effect("unknown", "the code does not parse as Python")
    unknown: str | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
        if name == "open" or (name == "fdopen"):
            mode = _open_mode(node)
            if mode is None:
                unknown = unknown or "open() with a mode held in a variable"
            elif any(ch in mode for ch in "wax+"):
                return Effect("write", f"open(..., {mode!r})")
        elif name in PY_WRITES:
            return Effect("write", f"{name}()")
        elif name in PY_PROCESSES:
            unknown = unknown or f"{name}() may run anything"
    return Effect("unknown", unknown) if unknown else Effect("read-only", "opens no file for writing")


def _open_mode(call: ast.Call) -> str | None:
    mode = next((kw.value for kw in call.keywords if kw.arg == "mode"), (call.args[1:2] or [None])[0])
    if mode is None:
        return "r"
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return mode.value
    return None


__all__ = ["Effect", "classify", "python_effect"]
