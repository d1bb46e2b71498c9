"""The double of ``builder.base.builder_apis``."""

import os
import re

from _tt_double_log import log


class TTBuilderCompileException(Exception):
    pass


class Builder:
    def __init__(self, name):
        self.name = name


def load_mlir_file(text, target="ttir"):
    names = re.findall(r"func\.func\s+@([\w$.-]+)", text)
    log("load_mlir_file", target=target, function=names[0] if names else None)
    return text, Builder(names[0] if names else "")


def compile_ttir_module_to_flatbuffer(module, builder, system_desc_path="ttrt-artifacts/system_desc.ttsys",
                                      artifact_dir=".", target="ttnn", mesh_dict=None, save_artifacts=False,
                                      argument_types_string=None, custom_pipeline=None, pipeline_options=None,
                                      print_ir=False, input_output_goldens=None, intermediate_goldens=None):
    log("compile_ttir_module_to_flatbuffer", function=builder.name, system_desc_path=system_desc_path,
        artifact_dir=artifact_dir, target=target, save_artifacts=save_artifacts, print_ir=print_ir)
    if "l1_overflow" in builder.name:
        os.write(2, b"Always | FATAL | can't find feasible allocation for op ttnn.matmul\n"
                    b"required L1 memory usage 2097152 exceeds usable space is 1499136\n")
        raise TTBuilderCompileException("Failed to run pass manager")
    goldens = {0: {"input_0": {0: "golden-in"}, "output_0": {0: "golden-out"}}}
    return {"binary": builder.name, "target": target}, goldens, {}
