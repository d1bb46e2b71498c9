#!/usr/bin/env bash
# The HTML report of the examples (plus one snippet that crashes its worker), run
# with -n 2 and opened in headless Chromium (Debian's `chromium` package);
# the screenshot goes to docs/html-report.png.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
cp -r "$here/examples" "$work/examples"
cat > "$work/examples/crash.mlir" <<'MLIR'
// Loads 2^40 elements past the end of its input: the sandbox worker segfaults.
func.func @wild_load(%t: tensor<4xf32>) -> f32 {
  %far = arith.constant 1099511627776 : index
  %0 = tensor.extract %t[%far] : tensor<4xf32>
  return %0 : f32
}
MLIR
(cd "$work" && python -m pytest examples -n 2 -p no:cacheprovider --html=report.html --self-contained-html -q) || true
mkdir -p "$here/docs"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --hide-scrollbars --window-size=1500,1300 \
  --screenshot="$here/docs/html-report.png" "file://$work/report.html"
echo "report: $work/report.html"
