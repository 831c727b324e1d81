"""The isolation a *verified* verdict needs: the documented minimum (docs/threat-model.md) as properties, each with
the layer sets any one of which provides it, and the check of a verdict's active layers against it. Which layers a
host has and how they are applied is the verifier's (`verify/isolation.py`)."""

from __future__ import annotations

__all__ = ["MINIMUM", "missing"]

MINIMUM: dict[str, tuple[frozenset[str], ...]] = {
    "no network": (frozenset({"netns"}), frozenset({"landlock-net"})),
    "every process ends with the judgement": (frozenset({"pidns"}), frozenset({"subreaper"})),
    "writes only to its scratch folder": (frozenset({"landlock-fs"}),),
    "reference out of reach (no /proc read, ptrace or signal)": (
        frozenset({"pidns", "landlock-fs", "reference-nondumpable"}),
        frozenset({"userns", "landlock-fs", "landlock-scope", "reference-nondumpable"}),
        frozenset({"no-capabilities", "landlock-fs", "landlock-scope", "reference-nondumpable"})),
}
"""The documented minimum (docs/threat-model.md): each property, and the layer sets any one of which provides it."""


def missing(layers: list[str] | tuple[str, ...]) -> list[str]:
    """The properties of the documented minimum that `layers` do not provide (empty: the minimum is met)."""
    have = set(layers)
    return [prop for prop, options in MINIMUM.items() if not any(option <= have for option in options)]
