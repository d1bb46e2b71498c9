module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %conv = transform.structured.match ops{["linalg.conv_2d_nchw_fchw"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:7 = transform.structured.tile_using_for %conv tile_sizes [1, 16, 1, 8, 4, 1, 1]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %generic = transform.structured.generalize %tiled : (!transform.any_op) -> !transform.any_op
    %inter = transform.structured.interchange %generic iterator_interchange = [0, 3, 2, 1, 4, 5, 6] : (!transform.any_op) -> !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %g2 = transform.structured.match ops{["linalg.generic"]} in %func : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %g2 : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops#6 : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops#5 : !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %loops#4 : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_broadcast
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
