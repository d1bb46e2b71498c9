"""Call log shared by the double's modules."""

import json
import os


def log(call, **args):
    path = os.environ.get("TT_DOUBLE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"call": call, **args}, default=str) + "\n")
