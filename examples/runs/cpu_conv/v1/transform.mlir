module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:4 = transform.structured.tile_using_for %conv tile_sizes [1, 8, 1, 24, 0, 0, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %generic = transform.structured.generalize %tiled : (!transform.any_op) -> !transform.any_op
    %inter = transform.structured.interchange %generic iterator_interchange = [0, 1, 2, 4, 5, 6, 3] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
