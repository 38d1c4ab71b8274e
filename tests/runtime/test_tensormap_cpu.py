"""runtime.tensormap on a CPU: a TMA map breaking a rule is refused before the driver is asked,
and a machine without the driver (or without its Python bindings) says so as ``GpuUnavailable``,
never as the bindings' loader error."""

from __future__ import annotations

import ctypes
import sys

import pytest

from pgstudio.errors import DesignError, GpuUnavailable
from pgstudio.runtime import tensormap as T


def _driver_loads() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def test_the_map_image_is_the_128_bytes_a_kernel_parameter_holds():
    assert ctypes.sizeof(T.TmaDesc) == 128 and len(T.TmaDesc().opaque) == 16


@pytest.mark.parametrize("kw, code", [
    (dict(rows=64, cols=63, box_rows=64, dtype="float16"), "tma.stride"),  # 126-byte rows
    (dict(rows=64, cols=64, box_rows=257, dtype="float16"), "tma.box"),
    (dict(rows=64, cols=64, box_rows=64, dtype="float16", box_cols=32), "tma.box"),  # 64 bytes under 128B swizzle
    (dict(rows=64, cols=64, box_rows=64, dtype="float32", box_cols=32, ptr=0x1008), "tma.align"),
])
def test_encoding_refuses_a_broken_rule_before_the_driver(kw, code, monkeypatch):
    monkeypatch.setattr(T, "_driver", lambda: pytest.fail("the driver was asked"))
    ptr = kw.pop("ptr", 0x10000)
    with pytest.raises(DesignError) as info:
        T.encode_2d(ptr, name="gmem_a", **kw)
    assert info.value.code == code and "'gmem_a'" in str(info.value)


def test_without_the_bindings_encoding_says_how_to_install_them(monkeypatch):
    import cuda.bindings
    monkeypatch.delattr(cuda.bindings, "driver", raising=False)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    with pytest.raises(GpuUnavailable, match=r"tensor maps need cuda-bindings: pip install 'pgstudio\[gpu\]'"):
        T.encode_2d(0x10000, 64, 64, 64, "float16")


@pytest.mark.skipif(_driver_loads(), reason="the NVIDIA driver library loads here")
def test_without_the_driver_encoding_is_gpu_unavailable_in_words():
    pytest.importorskip("cuda.bindings.driver")
    with pytest.raises(GpuUnavailable) as info:
        T.encode_2d(0x10000, 128, 64, 64, "bfloat16", "gmem_b")
    text = str(info.value)
    assert text.startswith("tensor 'gmem_b': TMA maps are encoded by the NVIDIA driver, which does not load here")
    assert "pgstudio compile DESIGN.json" in text and len(text.splitlines()) == 1


@pytest.mark.parametrize("cols, ptr, promoted", [
    (3072, 0x10000, 256),  # 6144-byte rows: every box row is one 128-byte line
    (3000, 0x10000, 128),  # 6000-byte rows straddle lines: promote to 128 B only
    (1000, 0x10000, 128),  # 2000-byte rows
    (64, 0x10000, 256),
    (64, 0x10040, 128),  # a base off the line
])
def test_loads_are_promoted_to_256_bytes_only_where_box_rows_start_on_a_line(cols, ptr, promoted, monkeypatch):
    """The map asks the driver for the promotion ``l2_promotion`` picks from its row pitch."""
    import types
    asked = {}

    class Result:
        CUDA_SUCCESS = 0

    def encode(dtype, rank, p, dims, strides, box, elem, interleave, swizzle, promotion, fill):
        asked.update(strides=strides, promotion=promotion)
        return 0, types.SimpleNamespace(opaque=[0] * 16)

    names = ("NONE", "L2_64B", "L2_128B", "L2_256B")
    fake = types.SimpleNamespace(
        cuInit=lambda flags: None, cuuint64_t=int, cuuint32_t=int, CUresult=Result,
        cuTensorMapEncodeTiled=encode,
        CUtensorMapDataType=types.SimpleNamespace(CU_TENSOR_MAP_DATA_TYPE_FLOAT16="f16"),
        CUtensorMapInterleave=types.SimpleNamespace(CU_TENSOR_MAP_INTERLEAVE_NONE="none"),
        CUtensorMapSwizzle=types.SimpleNamespace(CU_TENSOR_MAP_SWIZZLE_128B="sw128"),
        CUtensorMapL2promotion=types.SimpleNamespace(**{f"CU_TENSOR_MAP_L2_PROMOTION_{n}": n for n in names}),
        CUtensorMapFloatOOBfill=types.SimpleNamespace(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE="zero"))
    monkeypatch.setattr(T, "_driver", lambda: fake)
    T.encode_2d(ptr, 128, cols, 64, "float16", "gmem_b")
    assert T.l2_promotion(cols * 2, ptr) == promoted
    assert asked == {"strides": [cols * 2], "promotion": f"L2_{promoted}B"}
