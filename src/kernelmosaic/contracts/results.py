"""Typed results of the verifier's smaller entry points (compile only, profile, device peaks)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.contracts.verdict import CompileInfo, KernelStat, Status

__all__ = ["CompileResult", "KernelStat", "ProfileReport", "DevicePeaks"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class CompileResult(_Model):
    ok: bool
    status: Status
    """`accepted` when every extension built and the module imported; otherwise why not."""
    message: str
    info: CompileInfo = Field(default_factory=CompileInfo)


class ProfileReport(_Model):
    kernels: list[KernelStat] = Field(default_factory=list)
    ncu_metrics: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per-kernel Nsight Compute metrics, where `ncu` works on this machine."""
    message: str = ""


class DevicePeaks(_Model):
    bandwidth_gbps: float
    """Device-memory bandwidth from a large device-to-device copy (bytes read + written)."""
    fp32_tflops: float
    bf16_tflops: float
    measured: bool
    """False when these are nominal figures rather than measured on this device."""
    note: str = ""
    """Why they could not be measured, when `measured` is false."""
