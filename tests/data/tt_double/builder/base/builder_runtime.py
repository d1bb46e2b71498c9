"""The double of ``builder.base.builder_runtime``."""

from _tt_double_log import log


class TTBuilderRuntimeException(Exception):
    pass


class TTBuilderGoldenException(Exception):
    pass


def execute_fb(compiled_bin, input_output_goldens=None, intermediate_goldens=None, pcc=0.99, atol=1e-08,
               rtol=1e-05, disable_golden=False, device=None, check_pcc=False, check_atol=False, check_rtol=False,
               enable_intermediate_verification=False, bypass_ops=None, save_artifacts=False, artifact_dir=".",
               dump_memory=False):
    name = compiled_bin["binary"]
    log("execute_fb", function=name, device=device.number, device_open=device.open, pcc=pcc, atol=atol, rtol=rtol,
        goldens=sorted(input_output_goldens[0]))
    if not device.open:
        raise TTBuilderRuntimeException("device is closed")
    if "runtime_error" in name:
        raise TTBuilderRuntimeException("TT_THROW: timeout waiting for the device")
    actual_pcc = 0.5 if "low_pcc" in name else 0.999987
    results = {"expected_pcc": pcc, "actual_pcc": actual_pcc, "atol": 0.0031, "rtol": 0.0012,
               "allclose": actual_pcc > pcc, "result": "pass" if actual_pcc > pcc else "fail"}
    return {"program_0": {"output_0": {0: results}}}, {}
