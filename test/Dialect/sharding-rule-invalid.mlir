// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// #shardc.sharding_rule rejects what is not a valid ShardingRule.

// expected-error @+1 {{tensor #1 dim 0 of the sharding rule names factor f1, but the rule has 1 factors}}
func.func @unknown_factor() attributes {r = #shardc.sharding_rule<([f0]) -> ([f1]) {f0=4}>} { return }

// -----

// expected-error @+1 {{factor f0 appears twice in tensor #0 of the sharding rule}}
func.func @factor_twice() attributes {r = #shardc.sharding_rule<([f0, (f0 f1)]) -> ([f0]) {f0=4, f1=2}>} { return }

// -----

// expected-error @+1 {{expected factor f0 next, got f1}}
func.func @out_of_order() attributes {r = #shardc.sharding_rule<([f0]) -> ([f0]) {f1=4}>} { return }

// -----

// expected-error @+1 {{expected a factor name f<N>, got 'i'}}
func.func @letter() attributes {r = #shardc.sharding_rule<([i]) -> ([i]) {i=4}>} { return }

// -----

// expected-error @+1 {{factor f0 of the sharding rule has negative size -4}}
func.func @negative() attributes {r = #shardc.sharding_rule<([f0]) -> ([f0]) {f0=-4}>} { return }

// -----

// expected-error @+1 {{expected '->'}}
func.func @no_arrow() attributes {r = #shardc.sharding_rule<([f0]) ([f0]) {f0=4}>} { return }
