"""KernelMosaic: tasks, an agent loop, an anti-reward-hacking verifier and a trajectory store for CUDA kernels;
curation, SFT and evaluation consume the store (see the README for what each stage does today)."""

__all__ = ["__version__"]
__version__ = "0.1.0"
