shardc.mesh @mesh ["x"=2]
"func.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "main", arg_attrs = [{shardc.sharding = #shardc.sharding<@mesh, [{"x"}]>}]}> ({
^bb0:
  "func.return"() : () -> ()
}) : () -> ()
