"""llama-server's ``--fit``: what it makes of ``llama-server -m MODEL`` run with its defaults.

llama.cpp b11434 fits unset parameters to the device's free memory before loading (``--fit``, on by default;
common/fit.cpp ``common_fit_params_impl``). It only touches what the command leaves unset: a command with ``-c`` keeps
its context, one with ``-ngl`` stops fitting there (the cards' commands pin both, so it changes nothing in them). For
the command people run first, ``llama-server -m MODEL`` (the trained context, four slots on one shared cache, every
layer on the GPU), on one device:

1. it projects the memory of that load; with at least ``--fit-target`` (1,024 MiB) left free, nothing changes;
2. otherwise it projects the load at ``--fit-ctx`` (4,096) tokens and, where the target is met in between, takes the
   context by linear interpolation between the two projections, rounded down to a multiple of 256
   (:func:`fitted_context`): "context size reduced from 131072 to 23552";
3. where even 4,096 tokens leave less than the target, it keeps 4,096 and moves layers (a dense model) or the experts
   of layers (a mixture of experts) to system memory until the target is met.

The projections here are vramfit's totals for those loads (calc.engines.llama_cpp.fit_default); the device's free
memory is the usable memory less the runtime, which both totals include, so it cancels.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1 << 20
FIT_TARGET_BYTES = 1024 * MIB  # common/common.h fit_params_target: 1024 MiB a device (-fitt)
FIT_MIN_CONTEXT = 4096  # fit_params_min_ctx (--fit-ctx)
FIT_CONTEXT_ALIGN = 256  # "round down context for CUDA backend", one stream


class FitDefault(BaseModel):
    """What ``--fit`` picks for ``llama-server -m MODEL`` on one device (module docstring)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    trained_context: int = Field(description="the context the command asks for by default (all slots' cells)")
    context: int = Field(description="the context --fit runs it at (-c)")
    gpu_layers: int | None = Field(
        default=None, description="layers it keeps on the GPU (-ngl) when it moves some; None: every layer"
    )
    n_cpu_moe: int | None = Field(
        default=None, description="a mixture of experts: the layers whose experts it moves to system memory"
    )
    free_bytes: int | None = Field(
        default=None,
        description="what the load leaves free on the device (the target is 1,024 MiB); None where it moves layers",
    )
    fits: bool = Field(default=True, description="False: no layer or expert split meets the target")

    @property
    def changed(self) -> bool:
        return self.context != self.trained_context or self.gpu_layers is not None or self.n_cpu_moe is not None


def fitted_context(
    *, total_at_max: int, total_at_min: int, usable: int, context_max: int, context_min: int = FIT_MIN_CONTEXT
) -> int | None:
    """Step 2: the context between ``context_min`` and ``context_max`` whose projection leaves the target free, by
    common/fit.cpp's interpolation and rounding; None when even ``context_min`` misses it (step 3 then)."""
    target = usable - FIT_TARGET_BYTES
    if target <= total_at_min:
        return None
    if total_at_max <= total_at_min:
        return context_max
    context = context_min + (context_max - context_min) * (target - total_at_min) // (total_at_max - total_at_min)
    return min(context_max, max(context - context % FIT_CONTEXT_ALIGN, context_min))
