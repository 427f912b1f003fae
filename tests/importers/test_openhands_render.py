"""OpenHands' truncate_content rule, as properties (openhands/events/serialization/event.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from workbench.importers.openhands_render import (
    TRUNCATION_NOTICE,
    agent_observation,
    render,
    truncate_content,
)


@given(st.text(), st.integers(min_value=2, max_value=400))
def test_long_content_keeps_its_two_halves_around_the_notice(content: str, limit: int) -> None:
    out = truncate_content(content, limit)
    if len(content) <= limit:
        assert out == content
        return
    half = limit // 2
    assert len(out) == 2 * half + len(TRUNCATION_NOTICE)
    assert out.startswith(content[:half]) and out.endswith(content[-half:])
    assert out[half : half + len(TRUNCATION_NOTICE)] == TRUNCATION_NOTICE


@given(st.text(), st.one_of(st.none(), st.integers(max_value=-1)))
def test_no_limit_or_a_negative_one_keeps_everything(content: str, limit: int | None) -> None:
    assert truncate_content(content, limit) == content


def test_a_limit_below_two_keeps_everything_plus_the_notice() -> None:
    # OpenHands' content[-0:] is the whole string; reproduced, not "fixed"
    assert truncate_content("abc", 1) == TRUNCATION_NOTICE + "abc"


def test_command_output_gets_its_metadata_lines() -> None:
    extras = {
        "metadata": {
            "exit_code": 2,
            "working_dir": "/w",
            "py_interpreter_path": "/usr/bin/python",
            "prefix": "[before]\n",
            "suffix": "\n[The command completed with exit code 2.]",
        }
    }
    assert agent_observation("out", extras) == (
        "[before]\nout\n[The command completed with exit code 2.]\n[Current working directory: /w]"
        "\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 2]"
    )
    assert agent_observation("out", {"exit_code": 0}) == "out\n[Command finished with exit code 0]"  # legacy
    user = render("run", "out", {}, by_tool=False, max_chars=None)
    assert user.text == "\nObserved result of command executed by user:\nout" and user.exact


def test_types_it_cannot_render_exactly_say_so() -> None:
    assert not render("edit", "diff", {"impl_source": "llm_based_edit"}, by_tool=True, max_chars=None).exact
    assert not render("delegate", "x", {}, by_tool=True, max_chars=None).exact
    rejected = render("user_rejected", "no", {}, by_tool=True, max_chars=None)
    assert rejected.text == "OBSERVATION:\nno\n[Last action has been rejected by the user]"
    cell = render(
        "run_ipython", "a\n![image](data:image/png;base64,AAAA)\nb", {}, by_tool=True, max_chars=None
    )
    assert cell.text == "a\n![image](data:image/png;base64, ...) already displayed to user\nb"
