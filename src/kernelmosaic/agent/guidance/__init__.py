"""The CUDA guidance library: short, versioned, correct advice retrieved by task category and failure type."""

from kernelmosaic.agent.guidance.library import (
    ITEMS_DIR,
    AppliesWhen,
    GuidanceError,
    GuidanceItem,
    GuidanceLibrary,
)

__all__ = ["ITEMS_DIR", "AppliesWhen", "GuidanceError", "GuidanceItem", "GuidanceLibrary"]
