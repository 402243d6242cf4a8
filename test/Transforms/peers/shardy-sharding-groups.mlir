// Shardy's sharding group propagation tests: none translates, as shardc has
// no sharding groups (values forced to share one sharding). This file lists
// them, so that peer_table.py counts them.
// Source: openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/
// sharding_group_propagation.mlir.
//
// Not translated:
//   shard_as_applies_despite_barrier: sharding groups.
//   shard_as_applies_across_function: sharding groups (and calls).
//   shard_as_reflects_user_priority: sharding groups.
//   shard_as_across_dataflow_edge: sharding groups.
//   different_group_ids_greater_group_id_first: sharding groups.
//   set_existing_shardings_for_sharding_group_members: sharding groups.
//   add_extra_sharding_constraint_for_incompatible_shardings_in_sharding_group: sharding groups.
//   add_extra_sharding_constraint_for_incompatible_shardings_in_manual_computation: sharding groups.
//   add_extra_sharding_constraint_for_incompatible_shardings_with_sharding_constraint: sharding groups.
//   add_extra_sharding_constraint_for_partially_closed_replicated_sharding: sharding groups.
//   add_extra_sharding_constraint_for_fully_open_replicated_sharding: sharding groups.

// RUN: true
