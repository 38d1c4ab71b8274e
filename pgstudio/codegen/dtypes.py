"""Element types of generated kernels: storage, 16-byte vectors, and float conversions as CUDA text.

Kernels compute in float32 and keep fp16 / bf16 as raw 16-bit storage, converting with PTX
``cvt`` (round to nearest even), so no CUDA header is needed.  One 16-byte vector holds
``vec`` elements; shared and global accesses are 16 bytes wide.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CompileError


@dataclass(frozen=True)
class DType:
    name: str  # "float32" | "float16" | "bfloat16"
    size: int  # bytes per element
    c_type: str  # storage type in kernel signatures
    scalar: str  # pg_h2f / pg_f2h: one stored element <-> float (empty for float32)
    vector: str  # pg_unpack / pg_pack / pg_ld1 / pg_st1 as CUDA text

    @property
    def helpers(self) -> str:
        """Everything a kernel needs for this type (after the PTX prelude's typedefs)."""
        return self.scalar + self.vector

    def to_float(self, c: str) -> str:
        """C expression: stored element ``c`` as float."""
        return f"pg_h2f({c})" if self.scalar else c

    def from_float(self, c: str) -> str:
        """C expression: float ``c`` as a stored element (round to nearest even)."""
        return f"pg_f2h({c})" if self.scalar else c

    @property
    def vec(self) -> int:
        """Elements per 16-byte vector."""
        return 16 // self.size


_F32 = r"""
#define PG_VEC 4
__device__ __forceinline__ void pg_unpack(const uint4 u, float (&f)[PG_VEC]) {
  f[0] = __uint_as_float(u.x); f[1] = __uint_as_float(u.y); f[2] = __uint_as_float(u.z); f[3] = __uint_as_float(u.w);
}
__device__ __forceinline__ uint4 pg_pack(const float (&f)[PG_VEC]) {
  return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3]));
}
__device__ __forceinline__ float pg_ld1(const float* p) { return *p; }
__device__ __forceinline__ void pg_st1(float* p, float v) { *p = v; }
"""

_HALF_COMMON = r"""
#define PG_VEC 8
__device__ __forceinline__ void pg_unpack(const uint4 u, float (&f)[PG_VEC]) {
  const u32 w[4] = {u.x, u.y, u.z, u.w};
  #pragma unroll
  for (int i = 0; i < 4; ++i) { f[2 * i] = pg_lo2f(w[i]); f[2 * i + 1] = pg_hi2f(w[i]); }
}
__device__ __forceinline__ uint4 pg_pack(const float (&f)[PG_VEC]) {
  return make_uint4(pg_f2x2(f[1], f[0]), pg_f2x2(f[3], f[2]), pg_f2x2(f[5], f[4]), pg_f2x2(f[7], f[6]));
}
__device__ __forceinline__ float pg_ld1(const u16* p) { return pg_h2f(*p); }
__device__ __forceinline__ void pg_st1(u16* p, float v) { *p = pg_f2h(v); }
"""

_F16_SCALAR = r"""
__device__ __forceinline__ float pg_h2f(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ u16 pg_f2h(float f) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
"""
_F16 = r"""__device__ __forceinline__ float pg_lo2f(u32 w) { return pg_h2f((u16)(w & 0xffffu)); }
__device__ __forceinline__ float pg_hi2f(u32 w) { return pg_h2f((u16)(w >> 16)); }
// (hi, lo) -> one 32-bit word, each rounded to nearest even
__device__ __forceinline__ u32 pg_f2x2(float hi, float lo) {
  u32 r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
""" + _HALF_COMMON

_BF16_SCALAR = r"""
__device__ __forceinline__ float pg_h2f(u16 h) { return __uint_as_float(((u32)h) << 16); }
__device__ __forceinline__ u16 pg_f2h(float f) { u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
"""
_BF16 = r"""__device__ __forceinline__ float pg_lo2f(u32 w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float pg_hi2f(u32 w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ u32 pg_f2x2(float hi, float lo) {
  u32 r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
""" + _HALF_COMMON

DTYPES: dict[str, DType] = {
    "float32": DType("float32", 4, "float", "", _F32),
    "float16": DType("float16", 2, "u16", _F16_SCALAR, _F16),
    "bfloat16": DType("bfloat16", 2, "u16", _BF16_SCALAR, _BF16),
}


def dtype(name: str) -> DType:
    try:
        return DTYPES[name]
    except KeyError:
        raise CompileError(f"element type {name!r} is not supported; use one of {', '.join(DTYPES)}") from None


__all__ = ["DTYPES", "DType", "dtype"]
