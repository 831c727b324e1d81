"""Scale-out: where verification jobs and episodes run — this machine (`local`) or a Ray cluster (`ray`).

`scale.executor` holds the interface and the registry; `scale.ray_executor` the Ray one. Ray is imported only when
the `ray` executor is used (the `[ray]` extra); the verifier's worker side never imports it. See docs/scale.md.
"""

from kernelmosaic.scale.config import ScaleConfig, scale_settings

__all__ = ["ScaleConfig", "scale_settings"]
