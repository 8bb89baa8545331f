"""Plain typed functions: the signature and docstring are the schema."""

from typing import Annotated, Literal, Optional

import typing as t


def search(
    query: Annotated[str, "What to look for (<= 200 characters & no HTML)."],
    limit: int = 10,
    sort: Literal["relevance", "date"] = "relevance",
    tags: list[str] | None = None,
    exact: bool = False,
    score: float = 0.5,
) -> list[dict]:
    """Search the notes.

    Returns the best matches first. This paragraph is not part of the
    description.

    Args:
        query: ignored, Annotated wins.
        limit: How many results to return
            at most.
    """
    raise RuntimeError("never run at plan time")


async def translate(text: str, target: Optional[str], *, formal: t.Optional[bool] = None, glossary: dict[str, str] = {}) -> str:
    """Translate text
    into another language.

    :param text: The text to translate.
    :param target: Language code; the user's language when omitted.
    """


def stats(values: list[float], weights: "list[int]", pair: tuple[int, str], mode: Literal[1, 2, 3] = 1, *args, **kwargs):
    """Summary statistics."""


def loose(anything, data: dict, when: "datetime.datetime"):
    pass


def by_request(ctx):
    """Reads its arguments from the request."""
    return ctx["args"]


def broken_default(items: set[str] = frozenset(), ratio: float = float("nan")):
    """Defaults that are not JSON are left out."""


def nullable(
    note: Optional[str],
    count: int | None = None,
    key: "t.Union[int, str, None]" = None,
    scores: list[Optional[float]] = [],
    mode: Literal["a", "b", None] = "a",
    label: Annotated[Optional[str], "A label."] = None,
    limits: dict[str, int | None] = {},
    nothing: None = None,
    whatever: t.Optional[t.Any] = None,
):
    """None is a value of each parameter."""
