"""The CUDA guidance library: short, versioned, correct advice retrieved by task category and failure type (the
item type: `contracts.guidance`)."""

from kernelmosaic.agent.guidance.library import ITEMS_DIR, GuidanceError, GuidanceLibrary

__all__ = ["ITEMS_DIR", "GuidanceError", "GuidanceLibrary"]
