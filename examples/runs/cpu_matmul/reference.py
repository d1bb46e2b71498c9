"""The PyTorch reference of model_linalg.mlir (written by mlir-snippets import-torch)."""

from pathlib import Path

import torch

SOURCE = 'reference_model.py'
FACTORY = 'make'


def load():
    """(model with the exported weights, example inputs)."""
    import importlib
    import importlib.util

    if SOURCE.endswith(".py"):
        spec = importlib.util.spec_from_file_location("reference_source", Path(__file__).with_name(SOURCE))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(SOURCE)
    model, _ = getattr(module, FACTORY)()
    state = torch.load(Path(__file__).with_name("reference_state.pt"), weights_only=True)  # tensors, no pickles run
    model.load_state_dict(state["weights"])
    return model.eval(), tuple(state["inputs"])
