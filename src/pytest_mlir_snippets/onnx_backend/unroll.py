"""An ONNX model's Scans unrolled into the graph before the import, where their scan
length is static.

Inside a Scan's body ONNX's shape inference does not see the outer graph's constants (a
body's ``Unsqueeze`` by an outer axes constant has an unknown rank), so the body's
outputs, and every value after the Scan, are untyped (LinearAttention's function body).
Unrolled, the iterations are ordinary nodes of the graph and the inference types them.
As ONNX defines Scan (opset 9 and later): the body once per iteration, its state inputs
threaded through, each scan input's slice a ``Gather`` at the iteration's index
(``scan_input_directions``: from the end), each scan output's values given a unit axis at
``scan_output_axes`` and concatenated (``scan_output_directions``: in reverse order).
A Scan whose body holds a subgraph, or whose length is unknown or 0, stays.

PYTEST_DONT_REWRITE"""

from __future__ import annotations

from typing import Any

# the model opsets unrolled here: from 13 on, Unsqueeze's axes are an input, as torch-mlir
# converts it (Scan-8 has a batch axis and sequence lengths besides)
OPSET = 13
MAX_ITERATIONS = 256  # a longer Scan stays (the unrolled graph grows with each iteration)


def _opset(model: Any) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _ints(node: Any, name: str, count: int) -> list[int]:
    found = next((list(a.ints) for a in node.attribute if a.name == name), None)
    return found if found is not None else [0] * count


def _length(node: Any, shapes: dict[str, list[int] | None], n: int, axes: list[int]) -> int | None:
    lengths = set()
    for name, axis in zip(node.input[n:], axes, strict=False):
        shape = shapes.get(name)
        if shape is None:
            return None
        lengths.add(shape[axis % len(shape)])
    return lengths.pop() if len(lengths) == 1 else None


def _unroll(node: Any, tag: str, shapes: dict[str, list[int] | None]) -> list[Any] | None:
    from onnx import helper

    body = next(a.g for a in node.attribute if a.name == "body")
    m = next(a.i for a in node.attribute if a.name == "num_scan_inputs")
    n = len(node.input) - m
    if any(a.HasField("g") or a.graphs for inner in body.node for a in inner.attribute):
        return None
    in_axes, in_dirs = _ints(node, "scan_input_axes", m), _ints(node, "scan_input_directions", m)
    k = len(body.output) - n
    out_axes, out_dirs = _ints(node, "scan_output_axes", k), _ints(node, "scan_output_directions", k)
    length = _length(node, shapes, n, in_axes)
    if not length or length > MAX_ITERATIONS:
        return None
    nodes: list[Any] = []
    local = {o for inner in body.node for o in inner.output}
    states = list(node.input[:n])
    rows: list[list[str]] = [[] for _ in range(k)]
    for t in range(length):
        prefix = f"{tag}_it{t}_"
        names = dict(zip((i.name for i in body.input[:n]), states, strict=True))
        for j, (x, axis) in enumerate(zip(node.input[n:], in_axes, strict=True)):
            index = f"{prefix}index{j}"
            nodes.append(helper.make_node("Constant", [], [index], value=helper.make_tensor(
                index, 7, [], [length - 1 - t if in_dirs[j] else t])))
            names[body.input[n + j].name] = f"{prefix}slice{j}"
            nodes.append(helper.make_node("Gather", [x, index], [f"{prefix}slice{j}"], axis=axis))
        names.update({o: prefix + o for o in local})
        for inner in body.node:
            clone = helper.make_node(inner.op_type, [names.get(i, i) if i else "" for i in inner.input],
                                     [names.get(o, o) if o else "" for o in inner.output],
                                     name=prefix + inner.name, domain=inner.domain)
            clone.attribute.extend(inner.attribute)
            nodes.append(clone)
        produced = [names.get(o.name, o.name) for o in body.output]
        states = produced[:n]
        for j in range(k):
            rows[j].append(produced[n + j])
    nodes += [helper.make_node("Identity", [s], [o]) for s, o in zip(states, node.output[:n], strict=True) if o]
    for j, values in enumerate(rows):
        if not node.output[n + j]:
            continue
        axis = out_axes[j]
        axes = f"{tag}_axes{j}"
        nodes.append(helper.make_node("Constant", [], [axes], value=helper.make_tensor(axes, 7, [1], [axis])))
        units = []
        for t, value in enumerate(values):
            unit = f"{tag}_out{j}_{t}"
            nodes.append(helper.make_node("Unsqueeze", [value, axes], [unit]))
            units.append(unit)
        if out_dirs[j]:
            units.reverse()
        nodes.append(helper.make_node("Concat", units, [node.output[n + j]], axis=axis))
    return nodes


def unrolled(model: Any) -> Any:
    """``model`` (inferred) with its Scans unrolled (in place); None where none was."""
    from pytest_mlir_snippets.onnx_backend.fold import static

    opset = _opset(model)
    if opset < OPSET:
        return None  # the worker's unrolling takes Scan-9 to -12 (it builds at a newer opset)
    graph = model.graph
    shapes = {v.name: static(v) for v in [*graph.input, *graph.value_info, *graph.output]}
    nodes: list[Any] = []
    changed = False
    for index, node in enumerate(graph.node):
        done = None
        if node.op_type == "Scan" and node.domain in ("", "ai.onnx"):
            done = _unroll(node, f"scan{index}_unrolled", shapes)
        nodes.extend(done if done is not None else [node])
        changed = changed or done is not None
    if not changed:
        return None
    del graph.node[:]
    graph.node.extend(nodes)
    return model
