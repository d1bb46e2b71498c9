import os


def pytest_mlir_device_opened(config, target, device_id, info):
    with open(os.environ["OPENED_LOG"], "a") as log:
        log.write(f"{os.getpid()} {target} {device_id}\n")
