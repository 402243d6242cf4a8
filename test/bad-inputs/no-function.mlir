shardc.mesh @mesh ["x"=2]
