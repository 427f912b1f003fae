"""The workspace fact read from shell commands (workbench.importers.shell): a table of real-shaped commands — most
of them in the shapes mini-swe-agent's bash commands take in ../shared/traces/mini-swe-agent — each with the effect
it must be read as."""

from __future__ import annotations

import pytest

from workbench.importers.shell import classify, python_effect

W, R, U = "write", "read-only", "unknown"

HEREDOC_FIX = "cat <<'EOF' > fix.py\nimport re\nprint(1)\nEOF"
HEREDOC_TMP = "cat <<'EOF' > /tmp/repro.py\nprint(1)\nEOF"
PY_WRITER = "python3 - <<'EOF'\nwith open('src/a.py', 'w') as f:\n    f.write('x')\nEOF"
PY_READER = "python3 - <<'EOF'\nimport sympy\nprint(sympy.__version__)\nEOF"
PY_PATCHER = (
    "python3 <<'EOF'\nimport re\np = 'lib/matplotlib/offsetbox.py'\ns = open(p).read()\n"
    "s = s.replace('a', 'b')\nopen(p, 'w').write(s)\nEOF"
)
ED_SCRIPT = "ed src/_pytest/main.py <<EOF\n514a\n    pass\n.\nw\nq\nEOF"
ED_PRINT = "ed -s src/_pytest/main.py <<EOF\n1,5p\nq\nEOF"

CASES: list[tuple[str, str]] = [
    # in-place editors
    ("sed -i 's/old/new/' sympy/core/numbers.py", W),
    ('sed -i "224s/print.*/print(1)/" lib/matplotlib/pyplot.py', W),
    ("sed -i '618a\\                fill_value=self.fill_value,' sklearn/impute/_iterative.py", W),
    ("sed -i.bak 's/a/b/' setup.py", W),
    ("sed -ie 's/a/b/' setup.py", W),
    ("sed -Ei 's/(a)/\\1b/' x.py", W),
    ("sed --in-place 's/a/b/' x.py", W),
    ("sed --in-place=.orig 's/a/b/' x.py", W),
    ("sed -n -i '1d' x.py", W),
    (
        "sed -i '2843s/raise TypeError.*/return NotImplemented/' sympy/core/numbers.py && \\\nsed -i '2852s/x/y/' sympy/core/numbers.py",
        W,
    ),
    ("cd /testbed && sed -i 's/a/b/' django/db/models/query.py", W),
    ("perl -pi -e 's/foo/bar/' lib/a.pm", W),
    ("perl -i -pe 's/foo/bar/g' x.txt", W),
    ("perl -i.bak -ne 'print unless /x/' x.txt", W),
    ("perl -pe 's/foo/bar/' x.txt", U),
    (ED_SCRIPT, W),
    (ED_PRINT, R),
    ("awk -i inplace '{print}' x.py", W),
    # redirects and tee
    (HEREDOC_FIX, W),
    ("cat <<EOF > reproduce_issue.py\nfrom sympy import *\nEOF", W),
    ("cat > test_bold.py <<'EOF'\nimport sympy\nEOF", W),
    ("echo 'x = 1' > conf.py", W),
    ("echo \"author = 'Test'\" >> conf.py", W),
    ("printf 'import os\\n' > reproduce.py", W),
    ("cat a.py b.py > c.py", W),
    (
        "mkdir -p reproduce_issue/ignored_dir/build\ncat <<'EOF' > reproduce_issue/ignored_dir/build/test_ignored.py\ndef test_ignored():\n    assert True\nEOF",
        W,
    ),
    ("git diff > changes.patch", W),
    ("python reproduce.py > out.txt 2>&1", W),
    ("python reproduce.py &> log.txt", W),
    ("cat x.py | tee copy.py", W),
    ("echo hi | tee -a notes.txt", W),
    ("ls >| listing.txt", W),
    (HEREDOC_TMP, R),
    ("echo x > /tmp/out.txt", R),
    ("echo x > /dev/null", R),
    ("python -c 'print(1)' 2>/dev/null", R),
    ("ls 2>&1", R),
    ("grep -r foo . >&2", R),
    ("cat x.py | tee /dev/null", R),
    ("echo hi | tee /tmp/a /tmp/b", R),
    ("echo x > $OUT", U),
    ("cd /tmp && echo x > a.py", R),
    ("cd /tmp && cd /testbed && echo x > a.py", W),
    # file operations
    ("rm reproduce_issue.py", W),
    ("rm -rf reproduce_issue check_stringify.py check_ast_list.py", W),
    ("rm reproduce_issue.py reproduce_issue_custom_msg.py new_method.py", W),
    ("rm -f /tmp/repro.py", R),
    ("rm -rf /tmp/build", R),
    ("mv a.py b.py", W),
    ("mv /tmp/fixed.py sympy/core/numbers.py", W),
    ("mv x.py /tmp/x.py", W),
    ("cp sympy/concrete/products.py sympy/concrete/products.py.bak", W),
    ("cp reproduce_issue_2.py reproduce_issue_3.py", W),
    ("cp src/a.py /tmp/a.py", R),
    ("cp -r tests/fixtures /tmp/fixtures", R),
    ("cp -t lib a.py b.py", W),
    ("touch reproduce_app/__init__.py", W),
    ("touch /tmp/marker", R),
    ("mkdir reproduce_app && touch reproduce_app/__init__.py", W),
    ("mkdir -p reproduce_issue/symlink_ignore_test", W),
    ("mkdir -p /tmp/xdg_data", R),
    ("mkdir -p /root/.pylint.d && python3 reproduce_issue.py", W),
    ("ln -s ../testing/example_scripts reproduce_issue/symlink", W),
    ("ln -s /opt/data", W),
    ("rmdir empty_dir", W),
    ("truncate -s 0 log.txt", W),
    ("chmod +x reproduce_issue.sh", W),
    ("unlink old.py", W),
    ("dd if=/dev/zero of=blob.bin bs=1 count=1", W),
    ("dd if=x.bin of=/dev/null", R),
    ("install -m 644 a.py lib/a.py", W),
    ("sort -o AUTHORS AUTHORS", W),
    ("uniq names.txt unique.txt", W),
    ("uniq -c names.txt counts.txt", W),
    ("uniq -f 1 names.txt", R),  # 1 is -f's value, not an output file
    ("tree -o listing.txt", W),
    ("xxd blob.bin blob.hex", W),
    ("xxd -r blob.hex blob.bin", W),
    ("xxd -l 16 blob.bin", R),
    # options by which a read-only command writes a file, or may (less logs a pipe it pages on a terminal; rg
    # --pre runs a command on every file); a long option is matched whole: rg --pretty is not --pre
    ("history -w notes.txt", W),
    ("history -a", W),  # to $HISTFILE
    ("history 20", R),
    ("file -C -m magic", W),  # compiles magic.mgc here
    ("file --compile", W),
    ("file x.py", R),
    ("sort --output=names.txt names.txt", W),
    ("sort --output names.txt names.txt", W),
    ("cat x.log | less -O copy.log", U),
    ("less --log-file=copy.log x.log", U),
    ("less -R x.log", R),
    ("rg --pre pdftotext foo docs", U),
    ("rg --pre=pdftotext foo docs", U),
    ("rg --pretty foo src", R),
    ("find . -fls listing.txt", W),
    ("find . -name '*.orig' -print", R),
    ("dd if=blob.bin bs=1 count=4", R),  # no of=: its standard output
    # formatters: black and isort rewrite in place unless told only to check or print; gofmt, prettier, yapf and
    # clang-format print unless told to write back; ruff's fixing can be set in its configuration: unknown
    ("black .", W),
    ("black --check src", R),
    ("black --diff a.py", R),
    ("black - < a.py", R),  # standard input to standard output
    ("black -l=88 src/a.py", W),  # an "=" inside a short option is not the lone "-"
    ("isort -p=pkg src", W),
    ("isort src", W),
    ("isort --check-only --diff src", R),
    ("isort -c a.py", R),
    ("gofmt -w main.go", W),
    ("gofmt -l .", R),
    ("prettier --write src", W),
    ("prettier --check src", R),
    ("yapf -i a.py", W),
    ("yapf --diff a.py", R),
    ("clang-format -i a.c", W),
    ("clang-format a.c", R),
    ("ruff check .", U),
    ("patch -C -p1 < fix.patch", R),  # BSD patch's --check
    # curl writes standard output unless an option names a file (the path is not read: unknown, even /dev/null)
    ("curl -s https://api.example.com/items | jq .", R),
    ("curl -X POST -d 'name=a' http://localhost:8000/form", R),
    ("curl -X POST -F 'file=@a.pl' http://localhost:8000/upload", R),  # uploads (reads) a.pl
    ("curl -sSLo setup.sh https://example.com/setup.sh", U),  # -o in a cluster of short options
    ("curl -O https://example.com/a.tar.gz", U),
    ("curl --output=page.html https://example.com", U),
    ("curl -s -o /dev/null -w '%{http_code}' http://localhost:8000", U),
    ("curl -K options.txt https://example.com", U),  # a config file may name an output
    ("yapf -ri src", W),  # -i in a cluster
    ("sort -no sorted.txt numbers.txt", W),  # -n -o
    ("mv -t /tmp/old a.py", W),  # a.py leaves the workspace
    ("cp -t /tmp a.py", R),
    # a sed script's own commands: w FILE (alone, after an address, or as s///w) writes, e runs a command, and a
    # script read from a file (-f) is not seen: unknown; an s command's text is not mistaken for them
    ("sed -n '/def /w defs.txt' a.py", U),
    ("sed 's/a/b/gw changes.txt' a.py", U),
    ("sed 's/x/date/e' a.txt", U),
    ("sed -nf prog.sed a.py", U),
    ("sed --expression='s/a/b/w out.txt' a.py", U),
    ("sed 's/a/e/' a.py", R),
    ("sed -n '/^e$/p' a.py", R),
    ("sed '/start/,/end/d' a.py", R),
    ("sed -i.bak -e 's/a/b/w out' a.py", W),  # -i writes whatever the script does
    ("command rm -f x.py", W),  # command runs its command (past shell functions); command -v only looks it up
    ("command -v rm", R),
    ("find . -name '*.pyc' -delete", W),
    ("find . -name '*.orig' -exec rm {} \\;", W),
    # a backslash keeps the character after it, in a command's name too: an escaped or quoted name is the command
    # (agents write \rm and \cp to bypass an interactive alias), and a doubled backslash is one
    ("\\rm -f x.py", W),
    ("\\cp -f a.py b.py", W),
    ('"rm" -f x.py', W),
    ("\\cat a\\ b.txt", R),
    ("sed -n p a\\\\b.txt", R),
    ("find . -name '*.py' -exec grep -l foo {} +", R),
    ("find . -name x -fprint found.txt", W),
    # patch and git
    (
        "patch django/db/models/fields/related_descriptors.py django/db/models/fields/related_descriptors.py.patch",
        W,
    ),
    ("patch -p1 < fix.patch", W),
    ("patch --dry-run -p1 < fix.patch", R),
    ("git apply fix.patch", W),
    ("git apply --check fix.patch", R),
    ("git apply --stat fix.patch", R),
    ("git apply --stat --apply fix.patch", W),  # --apply turns applying on again, wherever it stands
    ("git apply --apply --numstat fix.patch", W),
    ("git am 0001-fix.patch", W),
    ("git checkout lib/matplotlib/axes/_base.py", W),
    ("git checkout tests/i18n/patterns/tests.py && rm tests/i18n/patterns/urls/optional.py", W),
    ("git restore sympy/core/numbers.py", W),
    ("git reset --hard HEAD", W),
    ("git stash", W),
    ("git stash pop", W),
    ("git stash list", R),
    ("git stash show -p", R),
    ("git clean -fd", W),
    ("git clean -n", R),
    ("git commit -am 'fix'", W),
    ("git -C /testbed checkout x.py", W),
    ("git --no-pager diff", R),
    ("git diff", R),
    ("git diff HEAD~1 -- sympy/core", R),
    ("git status", R),
    ("git log --oneline -5", R),
    ("git show HEAD:sympy/core/numbers.py | head -50", R),
    ("git blame -L 10,20 x.py", R),
    ("git grep -n foo", R),
    ("git ls-files | grep test", R),
    ("git rev-parse HEAD", R),
    ("git branch", R),
    ("git add -A", U),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", U),
    ("git fetch origin", U),
    # python code
    (PY_WRITER, W),
    (PY_READER, R),
    (PY_PATCHER, W),
    ("python -c \"open('x.py', 'w').write('a')\"", W),
    ("python3 -c \"import pathlib; pathlib.Path('a.py').write_text('x')\"", W),
    ("python -c 'import os; os.remove(\"a.py\")'", W),
    ("python -c 'import shutil; shutil.rmtree(\"build\")'", W),
    ("python -c 'import sympy; print(sympy.__version__)'", R),
    ("python3 -c \"from sympy import symbols; x = symbols('x'); print(x**2)\"", R),
    ("python -c \"print(open('setup.py').read()[:100])\"", R),
    ("python -c \"import subprocess; subprocess.run(['ls'])\"", U),
    ("python -c \"import os; os.system('make')\"", U),
    ("python -c 'print(1'", U),
    ("python -c \"open('x', mode)\"", U),
    ("python --version", R),
    ("python3 -V", R),
    ("/usr/bin/python3 -c 'print(2)'", R),
    ("python reproduce_issue.py", U),
    ("python3 test_multi_arg.py", U),
    ("python -m pytest tests/test_x.py -q", U),
    ("python3 -m pylint --rcfile=pylintrc_repro reproduce_issue_2.py", U),
    ("/usr/bin/python3 ./tests/runtests.py filtered_relation", U),
    ("PYTHONPATH=. python reproduce.py", U),
    # read-only commands
    ("cat sympy/core/numbers.py", R),
    ("cat -n x.py | head -40", R),
    ('grep -n "def _eval_is_real" sympy/functions/elementary/hyperbolic.py', R),
    ('grep -rn "class Quaternion" sympy/ | head -5', R),
    ('grep -A 10 "_default_settings =" sympy/printing/mathml.py', R),
    ("nl -ba sympy/printing/mathml.py | sed -n '795,805p'", R),
    ("sed -n '1,50p' django/db/models/query.py", R),
    ("sed -e 's/a/b/' x.py", R),
    ("ls -la", R),
    ("ls sympy/core/tests | grep basic", R),
    ('find tests -name "*utils*"', R),
    ("find . -name sky_coordinate.py", R),
    ('find . -name "*test*" | grep http', R),
    ("head -n 20 setup.py", R),
    ("tail -30 CHANGES.rst", R),
    ("wc -l x.py", R),
    ("echo hello", R),
    ("printf '%s\\n' a b", R),
    ("pwd", R),
    ("cd /testbed", R),
    ("cd /testbed && ls", R),
    ("which python", R),
    ("diff a.py b.py", R),
    ("sort names.txt | uniq -c", R),
    ("awk 'NR>=10 && NR<=20' x.py", R),
    ("awk '{print $1 > \"out.txt\"}' x.txt", U),
    ("cut -d: -f1 /etc/passwd", R),
    ("xxd x.bin | head", R),
    ("test -f setup.py && echo yes", R),
    ("[ -d build ] && echo built", R),
    ("export PYTHONPATH=$PYTHONPATH:.", R),
    ("X=1", R),
    ("env", R),
    ("pip list | grep numpy", R),
    ("pip show sympy", R),
    ("# just a comment", R),
    ("", R),
    ("echo $(git rev-parse HEAD)", R),
    ("for f in *.py; do grep -l foo $f; done", R),
    ("if [ -f x.py ]; then cat x.py; fi", R),
    ("while read l; do echo $l; done < names.txt", R),
    # wrappers and nested shells
    ("timeout 5s python3 -m pytest reproduce_issue/loop_test", U),
    ("timeout 10 sed -i 's/a/b/' x.py", W),
    ("sudo rm -rf build", W),
    ("env FOO=1 sed -i s/a/b/ x.py", W),
    ("nohup grep -r x . ", R),
    ("time ls", R),
    ("xargs rm < files.txt", W),
    ("find . -name '*.orig' | xargs rm -f", W),
    ("grep -l foo -r . | xargs sed -i 's/foo/bar/'", W),
    ("find . -name '*.py' | xargs grep -n foo", R),
    ("bash -c \"sed -i 's/a/b/' x.py\"", W),
    ("sh -c 'ls -la'", R),
    ("bash reproduce_issue.sh", U),
    ("bash verify_docinfo_clean.sh", U),
    ("./reproduce_issue_isolated.sh", U),
    ("bin/test sympy/core/tests/test_basic.py", U),
    ("./tests/runtests.py queries", U),
    ("echo $(rm stale.py)", W),
    ("$EDITOR x.py", U),
    # tests and tools that may write
    ("pytest sklearn/impute/tests/test_impute.py", U),
    ("pylint reproduce_issue.py", U),
    ("sphinx-build -b gettext . _build/gettext", U),
    ("make html", U),
    ("pip install -e .", U),
    ("tar xzf archive.tgz", U),
    ("npm test", U),
    # shapes that mix
    ("cat x.py && sed -i 's/a/b/' x.py && cat x.py", W),
    ("grep -n foo x.py; python reproduce.py", U),
    ("ls && cat setup.py | grep version", R),
    ("python reproduce.py || echo failed", U),
    ("cd sympy && git diff && cd ..", R),
    ("(cd docs && ls)", R),
    ("{ echo a; echo b; } > list.txt", W),
    ("cat <<EOF | python3\nprint(1)\nEOF", U),
    ("echo 'print(1)' | python3", U),
    ("if true; then", U),
]


def test_the_table_is_large_and_covers_every_kind() -> None:
    assert len(CASES) >= 150
    assert len({c for c, _ in CASES}) == len(CASES)
    assert {k for _, k in CASES} == {W, R, U}


@pytest.mark.parametrize(("command", "kind"), CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_command_effect(command: str, kind: str) -> None:
    effect = classify(command)
    assert effect.kind == kind, effect.rule
    assert effect.rule  # every answer says why


def test_a_write_names_what_wrote() -> None:
    assert classify("sed -i 's/a/b/' x.py").rule == "sed -i"
    assert classify("cat <<'EOF' > fix.py\nx\nEOF").rule == "redirect > fix.py"
    assert classify("rm -rf build").rule == "rm build"
    assert classify("git checkout x.py").rule == "git checkout"
    assert classify("history -w h.txt").rule == "history -w"  # the option it saw
    assert classify("sort --output x.txt x.txt").rule == "sort --output"
    assert classify("less -o log.txt").rule == "less -o may write a file"


def test_python_effect_reads_the_syntax_tree() -> None:
    assert python_effect("f = open('a', 'r+')").kind == W
    assert python_effect("open('a', mode='a')").kind == W
    assert python_effect("open('a')").kind == R
    assert python_effect("# open('a', 'w')\nprint(1)").kind == R  # a comment is not a call
    assert python_effect("s = \"open('a', 'w')\"").kind == R  # nor a string
    assert python_effect("exec(code)").kind == U
