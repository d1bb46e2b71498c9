module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %target = transform.cast %mm : !transform.any_op to !transform.any_op
    %blocks, %grid = transform.structured.tile_using_forall %target tile_sizes [1, 1] (mapping = [#gpu.block<y>, #gpu.block<x>])
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %threads, %group = transform.structured.tile_using_forall %blocks tile_sizes [1, 1] (mapping = [#gpu.thread<y>, #gpu.thread<x>])
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %bufferized = transform.bufferization.one_shot_bufferize %root {bufferize_function_boundaries = true,
        function_boundary_type_conversion = 1 : i32, memcpy_op = "linalg.copy"} : (!transform.any_op) -> !transform.any_op
    %func = transform.structured.match ops{["func.func"]} in %bufferized : (!transform.any_op) -> !transform.any_op
    %launch = transform.gpu.map_forall_to_blocks %func generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    %mapped = transform.gpu.map_nested_forall_to_threads %launch block_dims = [1, 1, 1] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
