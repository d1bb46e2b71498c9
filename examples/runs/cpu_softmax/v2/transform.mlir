module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %fused = transform.apply_registered_pass "linalg-fuse-elementwise-ops" to %func : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fused {
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_reshapes
      transform.apply_patterns.tensor.reassociative_reshape_folding
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %gens = transform.structured.match ops{["linalg.generic"]} in %fused : (!transform.any_op) -> !transform.any_op
    %max, %exp, %sum, %div = transform.split_handle %gens : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tiled, %loop = transform.structured.fuse %div tile_sizes [1, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.apply_patterns to %fused {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.apply_cse to %fused : !transform.any_op
    %in_loop = transform.structured.match ops{["linalg.generic"]} in %loop : (!transform.any_op) -> !transform.any_op
    %lmax, %lexp, %lsum, %ldiv = transform.split_handle %in_loop : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %i1, %f1, %s1, %c1 = transform.structured.split_reduction %lsum { split_factor = 16, insert_split_dimension = 1, inner_parallel }
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %i2, %f2, %s2, %c2 = transform.structured.split_reduction %lmax { split_factor = 16, insert_split_dimension = 1, inner_parallel }
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fills = transform.structured.match ops{["linalg.fill"]} in %loop : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %fills : !transform.any_op
    transform.structured.vectorize %s1 : !transform.any_op
    transform.structured.vectorize %c1 : !transform.any_op
    transform.structured.vectorize %s2 : !transform.any_op
    transform.structured.vectorize %c2 : !transform.any_op
    transform.structured.vectorize %ldiv : !transform.any_op
    transform.apply_patterns to %fused {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerparallel"
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
