"""KernelMosaic: tasks, an agent loop, a verifier that cannot be fooled, SFT and evaluation for CUDA kernels."""

__all__ = ["__version__"]
__version__ = "0.1.0"
