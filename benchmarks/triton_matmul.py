"""A persistent TMA matmul in Triton: the Triton peer of the GEMM benchmarks.

It follows the approach of Triton's tutorial "Persistent Matmul" (python/tutorials/09-persistent-
matmul.py in triton-lang/triton, MIT licence): one program per SM walks the output tiles in
grouped order (GROUP_M tile rows at a time, for L2 reuse), loads A and B tiles through TMA tensor
descriptors, accumulates with ``tl.dot`` in fp32 and stores through a descriptor.  Here B is
read K x N (row-major, like pgstudio's ``b_major="mn"``), and the tile configuration is picked
per problem by timing ``CONFIGS`` on the benchmark's data (what the tutorial's autotuner does).

Needs Triton (``pip install 'pgstudio[triton]'``) and PyTorch (the host tensors Triton launches
with); both are on the GPU machines the benchmarks run on.  ``available()`` says why not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - the benchmark reports it
    triton = None
    tl = None


@dataclass(frozen=True)
class Config:
    """One Triton launch configuration: tile, grouping, pipeline depth and warps."""

    block_m: int
    block_n: int
    block_k: int
    stages: int
    warps: int
    group_m: int = 8

    @property
    def label(self) -> str:
        return f"{self.block_m}x{self.block_n}x{self.block_k} s{self.stages} w{self.warps}"


#: The configurations tried per problem (the tutorial's space, trimmed to what wins on Hopper).
CONFIGS = (Config(128, 256, 64, 3, 8), Config(128, 128, 64, 4, 8), Config(64, 128, 64, 4, 4))


def available() -> str:
    """'' when Triton and PyTorch can run the peer here, else why not."""
    if triton is None:
        return "Triton is not installed (pip install 'pgstudio[triton]')"
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed (Triton launches with torch tensors)"
    return "" if torch.cuda.is_available() else "PyTorch sees no GPU"


if triton is not None:

    @triton.jit
    def _tile_of(tile, in_group, num_pid_m, GROUP_M: tl.constexpr):
        """(tile row, tile column) of persistent tile ``tile`` in grouped order."""
        group = tile // in_group
        first_m = group * GROUP_M
        rows = min(num_pid_m - first_m, GROUP_M)
        return first_m + (tile % rows), (tile % in_group) // rows

    @triton.jit
    def persistent_tma_matmul(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                              BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
        """C = A @ B with A M x K, B K x N and C M x N, all row-major, through TMA descriptors."""
        start = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        k_tiles = tl.cdiv(K, BLOCK_K)
        num_tiles = num_pid_m * num_pid_n
        in_group = GROUP_M * num_pid_n
        tile_c = start - NUM_SMS  # the epilogue's own tile counter (software pipelining moves the loop body)
        for tile in tl.range(start, num_tiles, NUM_SMS, flatten=True):
            pid_m, pid_n = _tile_of(tile, in_group, num_pid_m, GROUP_M)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for ki in range(k_tiles):
                a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
                b = b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N])
                acc = tl.dot(a, b, acc)
            tile_c += NUM_SMS
            pid_m, pid_n = _tile_of(tile_c, in_group, num_pid_m, GROUP_M)
            c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_desc.dtype))


def matmul_call(a, b, c, cfg: Config) -> Callable[[], Any]:
    """A callable computing ``c = a @ b`` (torch tensors: a M x K, b K x N, c M x N, 16-bit)."""
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor
    m, k = a.shape
    n = b.shape[1]
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    a_desc = TensorDescriptor.from_tensor(a, [cfg.block_m, cfg.block_k])
    b_desc = TensorDescriptor.from_tensor(b, [cfg.block_k, cfg.block_n])
    c_desc = TensorDescriptor.from_tensor(c, [cfg.block_m, cfg.block_n])
    grid = (min(sms, triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n)),)

    def call():
        persistent_tma_matmul[grid](a_desc, b_desc, c_desc, m, n, k, BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n,
                                    BLOCK_K=cfg.block_k, GROUP_M=cfg.group_m, NUM_SMS=sms, num_stages=cfg.stages,
                                    num_warps=cfg.warps)
    return call


__all__ = ["CONFIGS", "Config", "available", "matmul_call"]
