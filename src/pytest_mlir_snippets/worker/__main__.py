"""``python -m pytest_mlir_snippets.worker TARGET``: the sandbox worker's entry point.

Requests arrive on stdin, responses leave on a private copy of stdout; the real file
descriptors 1 and 2 both go to the sandbox's capture file, so whatever MLIR, LLVM or a
device runtime prints ends up in the item's report."""

import faulthandler
import os
import sys
import time

from pytest_mlir_snippets.protocol import read_request, write_message
from pytest_mlir_snippets.worker import native_io
from pytest_mlir_snippets.worker.loop import Worker


def main() -> int:
    target = sys.argv[1]
    requests = os.fdopen(0, "rb", buffering=0)
    responses = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from native code go to the capture file
    faulthandler.enable()  # a crash in native code says where in Python it was (the stage, the pass)
    sys.stdout = sys.stderr
    native_io.line_buffered_stdout()
    worker = Worker(target)
    while True:
        request = read_request(requests)
        if request is None:  # end of input: the device was closed by a request before it
            native_io.flush()
            os._exit(0)  # no interpreter teardown of MLIR and torch: a third of a second saved
        start = time.perf_counter()
        response = worker.handle(request)
        response.seconds = time.perf_counter() - start
        native_io.flush()  # what the snippet printed is in the capture file before the answer
        write_message(responses, response)



sys.exit(main())
