import os, re, subprocess, sys, dataclasses, shutil
from pgstudio import examples
from pgstudio.codegen.gemm import emit_gemm
from pgstudio.codegen.instrument import Instrument
from pgstudio.runtime.compile import compile_cubin
out = os.environ.get("OUT", "/tmp")
print(shutil.which("cuobjdump"), shutil.which("nvdisasm"))
CAP = "(pg_ins_b < PG_INS_BLOCKS && tt == 0) ? PG_INS_CAP : 0u"
d = examples.merge_gemm_resadd()
plain = emit_gemm(d)
ins = emit_gemm(d, instrument=Instrument())
idle = dataclasses.replace(ins, code=ins.code.replace(CAP, CAP.replace("tt == 0", "tt == 0 && gridDim.z == 2u")))
for label, src in (("plain", plain), ("idle", idle)):
    cub = compile_cubin(src)
    path = f"{out}/{label}.cubin"
    open(path, "wb").write(cub.data if hasattr(cub, "data") else bytes(cub.cubin))
    tool = shutil.which("cuobjdump")
    if tool:
        sass = subprocess.run([tool, "-sass", path], capture_output=True, text=True).stdout
        open(f"{out}/{label}.sass", "w").write(sass)
        ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", sass)
        from collections import Counter
        print(label, len(ops), Counter(o.split('.')[0] for o in ops).most_common(40))
